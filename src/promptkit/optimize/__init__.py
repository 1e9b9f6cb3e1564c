"""The optimize workflow: a `DigestWriter` writes a prompt's workspace digest, which is checked
and stored in the session (SESSION) or the overrides store (GLOBAL).

Two writers: `ModelDigestWriter` drives any `ProviderAdapter` (what `ProviderAdapter.optimize`
uses) and `StaticDigestWriter` builds the digest offline from the files. `choose_digest_writer`
picks one the way the command line does. The guide is docs/optimize.md.
"""

from typing import TYPE_CHECKING

from promptkit._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ModelDigestWriter": "promptkit.optimize.model_writer",
    "WriterChoice": "promptkit.optimize.selection",
    "choose_digest_writer": "promptkit.optimize.selection",
    "StaticDigestWriter": "promptkit.optimize.static_writer",
    "OperatorOverrideError": "promptkit.optimize.storage",
    "DigestDraft": "promptkit.optimize.types",
    "DigestWriter": "promptkit.optimize.types",
    "OptimizationResponse": "promptkit.optimize.types",
    "OptimizationResult": "promptkit.optimize.types",
    "OptimizationScope": "promptkit.optimize.types",
    "OptimizationTarget": "promptkit.optimize.types",
    "DEFAULT_OPTIMIZE_TOOL_ROUNDS": "promptkit.optimize.workflow",
    "optimize_workspace_digest": "promptkit.optimize.workflow",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from promptkit.optimize.model_writer import ModelDigestWriter as ModelDigestWriter
    from promptkit.optimize.selection import (
        WriterChoice as WriterChoice,
        choose_digest_writer as choose_digest_writer,
    )
    from promptkit.optimize.static_writer import StaticDigestWriter as StaticDigestWriter
    from promptkit.optimize.storage import OperatorOverrideError as OperatorOverrideError
    from promptkit.optimize.types import (
        DigestDraft as DigestDraft,
        DigestWriter as DigestWriter,
        OptimizationResponse as OptimizationResponse,
        OptimizationResult as OptimizationResult,
        OptimizationScope as OptimizationScope,
        OptimizationTarget as OptimizationTarget,
    )
    from promptkit.optimize.workflow import (
        DEFAULT_OPTIMIZE_TOOL_ROUNDS as DEFAULT_OPTIMIZE_TOOL_ROUNDS,
        optimize_workspace_digest as optimize_workspace_digest,
    )
