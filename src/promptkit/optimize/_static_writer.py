"""`StaticDigestWriter`: the offline writer, which builds the digest from the files alone.

Its digest comes from `scan_roots` over every mount of the workspace section, with its globs, and
`render_static_digest` (layout, tooling, workflows and watch-outs read from the files
themselves). It never builds the section's overlay: it lists the mounts and reads only the files
it parses, each only up to the size its parser needs, so its cost grows with the number of files
listed, not with their bytes. It runs through the same workflow as a model writer,
so the same validation runs before anything else, empty or credential-bearing digests are refused
the same way, and SESSION and GLOBAL storage are the same. It needs no API key and no network,
and the same tree gives the same digest byte for byte. It is not a `ProviderAdapter`: it answers
no prompt.
"""

from __future__ import annotations

from datetime import timedelta

from promptkit.errors import ArgumentValueError
from promptkit.hostfiles import HOST_READER, WorkspaceReader
from promptkit.optimize._types import DigestDraft, OptimizationTarget, digest_response
from promptkit.repofacts import ScanRoot, WorkspaceFacts, render_static_digest, scan_roots
from promptkit.session import Session

STATIC_PROVIDER = "static"
STATIC_MODEL = "static"
DEFAULT_STATIC_DIGEST_TOKENS = 2000


class StaticDigestWriter:
    """Writes digests from a static scan; `max_tokens` bounds the digest (estimated tokens), and
    every file it reads goes through `reader` (default: the host filesystem)."""

    def __init__(
        self,
        *,
        max_tokens: int = DEFAULT_STATIC_DIGEST_TOKENS,
        reader: WorkspaceReader = HOST_READER,
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ArgumentValueError(
                f"StaticDigestWriter: max_tokens must be an int >= 1, got {max_tokens!r}"
            )
        self._max_tokens = max_tokens
        self._reader = reader

    @property
    def provider(self) -> str:
        return STATIC_PROVIDER

    @property
    def model(self) -> str:
        return STATIC_MODEL

    def __repr__(self) -> str:
        return f"StaticDigestWriter(max_tokens={self._max_tokens})"

    def write_digest(
        self,
        target: OptimizationTarget,
        *,
        optimization_session: Session,
        deadline: float | timedelta | None,
        max_tool_rounds: int,
    ) -> DigestDraft:
        """The digest of the workspace from a static scan; no model runs, so the session, the
        deadline and the tool rounds have nothing to bound."""
        facts = scan_target(target, reader=self._reader)
        digest = render_static_digest(facts, max_tokens=self._max_tokens)
        response = digest_response(
            digest,
            prompt_name=target.prompt.display_name,
            provider=self.provider,
            model=self.model,
        )
        return DigestDraft(response=response, provenance=facts.manifest, facts=facts)


def scan_target(
    target: OptimizationTarget, *, reader: WorkspaceReader = HOST_READER
) -> WorkspaceFacts:
    """The static scan of the workspace `target`'s mounts make up, with their globs."""
    roots = [
        ScanRoot(
            mount.root(),
            prefix=mount.mount_path,
            include=mount.include_glob,
            exclude=mount.exclude_glob,
        )
        for mount in target.mounts
    ]
    return scan_roots(roots, reader=reader)
