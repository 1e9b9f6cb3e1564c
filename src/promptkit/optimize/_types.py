"""The values of the optimize workflow: scope, target, draft, result, and the `DigestWriter` seam.

A `DigestWriter` is whoever writes the digest text (a model through a `ProviderAdapter`, or the
offline static scan); everything around it (validation, checks, storage, the execution record)
is the same for every writer and lives in `promptkit.optimize._workflow`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from promptkit.adapters import PromptResponse, TokenUsage
from promptkit.digest import WorkspaceDigestSection
from promptkit.hostfiles import WorkspaceManifest
from promptkit.optimize._gate import Grounding
from promptkit.overrides import PromptOverridesStore
from promptkit.prompt import Prompt, SectionPath
from promptkit.repofacts import WorkspaceFacts
from promptkit.session import Session
from promptkit.workspace import HostMount, WorkspaceSection


class OptimizationScope(StrEnum):
    """Where `optimize` stores the digest: the caller's session, or the overrides store."""

    SESSION = "session"
    GLOBAL = "global"


@dataclass(frozen=True)
class OptimizationResult:
    """What `optimize` did: the provider's response, the stored digest, the scope and the key
    of the digest section it was stored for; `locations` are the override files GLOBAL scope
    wrote (empty for SESSION).

    `grounding` is how much of what the written digest names the workspace has (None when the
    gate did not run); `fallback_reason` says why the static digest was stored instead of the
    model's (`fallback_static=True`), None when the written digest was.
    """

    response: PromptResponse[Any]
    digest: str
    scope: OptimizationScope
    section_key: str
    locations: tuple[str, ...] = ()
    grounding: Grounding | None = None
    fallback_reason: str | None = None


@dataclass(frozen=True)
class OptimizationResponse:
    """The digest of the workspace: markdown naming its notable folders and files, the commands
    that test, lint and build it, and its pitfalls, as found in its files."""

    # The docstring is the schema's description, which the model reads: it is written for it.
    digest: str


@dataclass(frozen=True)
class OptimizationTarget:
    """What validation found: the prompt's digest section and its path, the workspace section
    and the directory it mounts, and where the digest is to be stored.

    `mounts` are the workspace section's mounts as the digest sees them: narrowed by the run's
    include/exclude globs, and without promptkit's own folders (overrides, state) inside them.
    """

    prompt: Prompt[Any]
    digest_section: WorkspaceDigestSection
    digest_path: SectionPath
    workspace_section: WorkspaceSection
    workspace_root: Path
    scope: OptimizationScope
    overrides_store: PromptOverridesStore | None
    overrides_tag: str | None
    mounts: tuple[HostMount, ...]

    @property
    def section_key(self) -> str:
        return self.digest_section.key


@dataclass(frozen=True)
class DigestDraft:
    """A digest as written, before it is checked and stored: the response that carries it and
    the manifest of the workspace state it was written from.

    `prompt_text` is what a model was given to write it (the rendered prompt, its tools'
    descriptions), against which the gate recognises a digest that repeats it; `facts` is the
    static scan a writer made of the workspace, which the gate then need not make again.
    """

    response: PromptResponse[Any]
    provenance: WorkspaceManifest
    prompt_text: str = ""
    facts: WorkspaceFacts | None = None


@runtime_checkable
class DigestWriter(Protocol):
    """Writes the digest text that the workflow then checks and stores.

    `provider` and `model` name the writer in progress lines, events and execution records.
    """

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def write_digest(
        self,
        target: OptimizationTarget,
        *,
        optimization_session: Session,
        deadline: float | timedelta | None,
        max_tool_rounds: int,
    ) -> DigestDraft:
        """The digest for `target`; a model writer runs on `optimization_session` within
        `deadline` and `max_tool_rounds`, a writer without a model may ignore them."""
        ...


def digest_response(
    digest: str, *, prompt_name: str, provider: str, model: str
) -> PromptResponse[Any]:
    """A response carrying `digest` as its structured output, for digests written without a
    provider call (the static writer)."""
    return PromptResponse(
        prompt_name=prompt_name,
        text=digest,
        output=OptimizationResponse(digest=digest),
        tool_calls=(),
        usage=TokenUsage(),
        model=model,
        provider=provider,
    )
