"""The optimize workflow: a `DigestWriter` writes a prompt's workspace digest, which is checked
(the digest gate measures its `Grounding` in the workspace and refuses what is not a digest of
it) and stored in the session (SESSION) or the overrides store (GLOBAL).

Two writers: `ModelDigestWriter` drives any `ProviderAdapter` (what `ProviderAdapter.optimize`
uses) and `StaticDigestWriter` builds the digest offline from the files. `choose_digest_writer`
picks one the way the command line does. The guide is docs/optimize.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.optimize._choice import (
        WRITER_NAMES as WRITER_NAMES,
        WriterChoice as WriterChoice,
        choose_digest_writer as choose_digest_writer,
        writes_with_model as writes_with_model,
    )
    from promptkit.optimize._gate import Grounding as Grounding
    from promptkit.optimize._model_writer import (
        DEFAULT_REPLY_TOKENS as DEFAULT_REPLY_TOKENS,
        ModelDigestWriter as ModelDigestWriter,
    )
    from promptkit.optimize._static_writer import StaticDigestWriter as StaticDigestWriter
    from promptkit.optimize._storage import OperatorOverrideError as OperatorOverrideError
    from promptkit.optimize._types import (
        DigestDraft as DigestDraft,
        DigestWriter as DigestWriter,
        OptimizationResponse as OptimizationResponse,
        OptimizationResult as OptimizationResult,
        OptimizationScope as OptimizationScope,
        OptimizationTarget as OptimizationTarget,
    )
    from promptkit.optimize._workflow import (
        DEFAULT_OPTIMIZE_DEADLINE as DEFAULT_OPTIMIZE_DEADLINE,
        DEFAULT_OPTIMIZE_TOOL_ROUNDS as DEFAULT_OPTIMIZE_TOOL_ROUNDS,
        optimize_workspace_digest as optimize_workspace_digest,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.optimize._choice": (
                "WRITER_NAMES",
                "WriterChoice",
                "choose_digest_writer",
                "writes_with_model",
            ),
            "promptkit.optimize._gate": ("Grounding",),
            "promptkit.optimize._model_writer": ("DEFAULT_REPLY_TOKENS", "ModelDigestWriter"),
            "promptkit.optimize._static_writer": ("StaticDigestWriter",),
            "promptkit.optimize._storage": ("OperatorOverrideError",),
            "promptkit.optimize._types": (
                "DigestDraft",
                "DigestWriter",
                "OptimizationResponse",
                "OptimizationResult",
                "OptimizationScope",
                "OptimizationTarget",
            ),
            "promptkit.optimize._workflow": (
                "DEFAULT_OPTIMIZE_DEADLINE",
                "DEFAULT_OPTIMIZE_TOOL_ROUNDS",
                "optimize_workspace_digest",
            ),
        },
    )
