"""`optimize`: a model (or the static scanner) writes a prompt's workspace digest; it is stored.

The workflow is the seed's "Adapter optimize Workflow", made to check everything it can before it
spends anything. `optimize_prompt` runs it for every adapter; only step 2 differs, through the
adapter's `draft_workspace_digest` (a model by default, the file scan for `StaticAdapter`):

1. Validate: the prompt has a `WorkspaceDigestSection` and a workspace section (VFS or Podman),
   and GLOBAL scope has both an overrides store and a tag. Otherwise `OptimizationError`, and no
   request is sent.
2. Write the digest. A model runs on `optimization_session` (or a new Session) with the
   session-aware sections (workspace, digest, planning) cloned onto it, so the run leaves no
   trace in the caller's session. Its prompt is `<ns>.optimization` / `<key>-workspace-digest`,
   with the sections "Optimization Goal", "Expectations", planning
   (GOAL_DECOMPOSE_ROUTE_SYNTHESISE), the cloned workspace and the cloned digest section, and an
   output type with one field, `digest`.
3. The digest is the parsed `digest` field, or the reply's plain text when it does not parse,
   stripped. An empty digest, or one in which `find_secrets` sees a credential, is refused.
4. SESSION stores it in the caller's session with the workspace's manifest as provenance.
   GLOBAL writes the prompt's own override at the digest section's path and a shared entry for
   the section key (so every prompt with a digest section of that key finds it), then clears
   the session's digest so renders fall back to the override.

The caller's session and override files change in step 4 only, and a failure there puts back
what step 4 had already written. The user guide is docs/optimize.md.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptkit.adapters.record import ExecutionRecord, write_failure_record, write_manifest
from promptkit.adapters.response import PromptResponse, TokenUsage, ToolCallRecord
from promptkit.digest import WorkspaceDigestSection, clear_workspace_digest, set_workspace_digest
from promptkit.durable import write_atomically
from promptkit.errors import OptimizationError, OutputParseError, PromptValidationError
from promptkit.logging import get_logger
from promptkit.names import is_valid_key, require_key
from promptkit.overrides import LocalPromptOverridesStore, PromptOverridesStore, SharedSectionStore
from promptkit.planning import PlanningStrategy, PlanningToolsSection
from promptkit.prompt import (
    OverrideAuthor,
    Prompt,
    PromptOverride,
    SectionOverride,
    SectionPath,
    TextSection,
    ToolResult,
)
from promptkit.secrets import find_secrets
from promptkit.session import Session, SessionProtocol, ToolInvoked
from promptkit.workspace.manifest import WorkspaceManifest, describe_workspace
from promptkit.workspace.vfs import WorkspaceSection

if TYPE_CHECKING:
    from promptkit.adapters.base import ProviderAdapter

_log = get_logger("promptkit.adapters")

OPTIMIZATION_NS_SUFFIX = ".optimization"
OPTIMIZATION_KEY_SUFFIX = "-workspace-digest"
DEFAULT_OPTIMIZE_TOOL_ROUNDS = 32
"""Tool rounds an optimization may take: exploring a repository needs more than one answer."""

DIGEST_ARTIFACT = "digest.md"
WORKSPACE_MANIFEST_ARTIFACT = "workspace.manifest.json"

_KEY_LIMIT = 64
_HASH_CHARS = 8


class OptimizationScope(StrEnum):
    """Where `optimize` stores the digest: the caller's session, or the overrides store."""

    SESSION = "session"
    GLOBAL = "global"


@dataclass(frozen=True)
class OptimizationResult:
    """What `optimize` did: the provider's response, the stored digest, the scope and the key
    of the digest section it was stored for."""

    response: PromptResponse[Any]
    digest: str
    scope: OptimizationScope
    section_key: str


@dataclass(frozen=True)
class _OptimizationResponse:
    """The reply of the optimization prompt: the workspace digest, as markdown."""

    digest: str


@dataclass(frozen=True)
class OptimizationTarget:
    """What validation found: the prompt's digest section and its path, the workspace section
    and the directory it mounts, and where the digest is to be stored."""

    prompt: Prompt[Any]
    digest_section: WorkspaceDigestSection
    digest_path: SectionPath
    workspace_section: WorkspaceSection
    workspace_root: Path
    scope: OptimizationScope
    overrides_store: PromptOverridesStore | None
    overrides_tag: str | None

    @property
    def section_key(self) -> str:
        return self.digest_section.key


@dataclass(frozen=True)
class DigestDraft:
    """A digest as written, before it is checked and stored: the response that carries it and
    the manifest of the workspace state it was written from."""

    response: PromptResponse[Any]
    provenance: WorkspaceManifest


# -- the workflow ------------------------------------------------------------------------------


def optimize_prompt(
    adapter: ProviderAdapter,
    prompt: Prompt[Any],
    *,
    store_scope: OptimizationScope | str,
    overrides_store: PromptOverridesStore | None,
    overrides_tag: str | None,
    session: SessionProtocol,
    optimization_session: Session | None,
    deadline: float | timedelta | None,
    max_tool_rounds: int,
    output_dir: str | Path | None,
) -> OptimizationResult:
    """`ProviderAdapter.optimize`: validate, have the adapter write the digest
    (`draft_workspace_digest`), check it, store it, and record the run.

    Every adapter runs through here, so the checks and storage rules are the same whoever
    writes the digest.
    """
    started = time.monotonic()
    if not isinstance(prompt, Prompt):
        raise OptimizationError(
            f"optimize needs a promptkit Prompt, got {type(prompt).__name__}; no request was sent"
        )
    run = _RunRecord(
        output_dir=None if output_dir is None else Path(output_dir),
        provider=adapter.provider,
        model=adapter.model,
        prompt=prompt,
    )
    try:
        if optimization_session is not None and not isinstance(optimization_session, Session):
            raise OptimizationError(
                "optimization_session must be a promptkit Session (or None for a new one),"
                f" got {type(optimization_session).__name__}; no request was sent"
            )
        target = prepare_optimization(
            prompt,
            store_scope=store_scope,
            overrides_store=overrides_store,
            overrides_tag=overrides_tag,
            session=session,
        )
        run.target = target
        written = adapter.draft_workspace_digest(
            target,
            optimization_session=(
                Session() if optimization_session is None else optimization_session
            ),
            deadline=deadline,
            max_tool_rounds=max_tool_rounds,
        )
        run.draft = written
        digest = _checked_digest(written.response, target)
        run.digest = digest
        author = OverrideAuthor("optimizer", written.response.model)
        _store(target, digest, session=session, author=author, provenance=written.provenance)
    except BaseException as error:
        run.failed(error, duration_s=time.monotonic() - started)
        raise
    result = OptimizationResult(
        response=written.response,
        digest=digest,
        scope=target.scope,
        section_key=target.section_key,
    )
    _log.info(
        "workspace_digest_optimized",
        prompt_ns=prompt.ns,
        prompt_key=prompt.key,
        section_key=target.section_key,
        scope=str(target.scope),
        provider=written.response.provider,
        model=written.response.model,
        tool_calls=len(written.response.tool_calls),
        digest_chars=len(digest),
    )
    run.succeeded(duration_s=time.monotonic() - started)
    return result


def draft_with_model(
    adapter: ProviderAdapter,
    target: OptimizationTarget,
    *,
    optimization_session: Session,
    deadline: float | timedelta | None,
    max_tool_rounds: int,
) -> DigestDraft:
    """The model explores the workspace through the optimization prompt and writes the digest."""
    # The manifest is taken before the model reads anything: edits made while it works make
    # the stored digest stale rather than silently describing a state it never saw.
    provenance = describe_workspace(target.workspace_root)
    inner = optimization_prompt(target, optimization_session)
    response = _evaluate(adapter, inner, target, optimization_session, deadline, max_tool_rounds)
    return DigestDraft(response=response, provenance=provenance)


def prepare_optimization(
    prompt: Prompt[Any],
    *,
    store_scope: OptimizationScope | str,
    overrides_store: PromptOverridesStore | None,
    overrides_tag: str | None,
    session: SessionProtocol,
) -> OptimizationTarget:
    """Check everything that can be checked before spending anything; OptimizationError names
    what is missing and what to do."""
    if not isinstance(prompt, Prompt):
        raise OptimizationError(
            f"optimize needs a promptkit Prompt, got {type(prompt).__name__}; no request was sent"
        )
    name = f"{prompt.ns}/{prompt.key}"
    try:
        scope = OptimizationScope(store_scope)
    except ValueError:
        raise OptimizationError(
            f"optimize {name}: unknown store_scope {store_scope!r}; use OptimizationScope.SESSION"
            " or OptimizationScope.GLOBAL; no request was sent"
        ) from None
    if not isinstance(session, SessionProtocol):
        raise OptimizationError(
            f"optimize {name}: session must implement SessionProtocol (a promptkit Session, for"
            f" instance), got {type(session).__name__}; no request was sent"
        )
    digest_section = prompt.find_section(WorkspaceDigestSection)
    if not isinstance(digest_section, WorkspaceDigestSection):
        raise OptimizationError(
            f"optimize {name}: the prompt has no WorkspaceDigestSection, so there is no digest to"
            " write; add WorkspaceDigestSection(session=session) to it; no request was sent"
        )
    workspace_section = prompt.find_section(WorkspaceSection)
    if not isinstance(workspace_section, WorkspaceSection):
        raise OptimizationError(
            f"optimize {name}: the prompt has no workspace section (VfsWorkspaceSection or"
            " PodmanWorkspaceSection), so there is no workspace to describe; add one mounting"
            " the directory the digest is about; no request was sent"
        )
    if scope is OptimizationScope.GLOBAL:
        missing = [
            label
            for label, value in (
                ("overrides_store", overrides_store),
                ("overrides_tag", overrides_tag),
            )
            if value is None
        ]
        if missing:
            raise OptimizationError(
                f"optimize {name} with scope GLOBAL needs overrides_store and overrides_tag"
                f" (missing: {', '.join(missing)}); pass both, or use OptimizationScope.SESSION;"
                " no request was sent"
            )
    if overrides_store is not None and not isinstance(overrides_store, PromptOverridesStore):
        raise OptimizationError(
            f"optimize {name}: overrides_store must be a PromptOverridesStore (for example"
            f" LocalPromptOverridesStore), got {type(overrides_store).__name__};"
            " no request was sent"
        )
    if overrides_tag is not None:
        require_key(overrides_tag, what="overrides_tag", error=OptimizationError)
    path = prompt.path_of(digest_section)
    assert path is not None  # find_section returned a section of this very prompt
    return OptimizationTarget(
        prompt=prompt,
        digest_section=digest_section,
        digest_path=path,
        workspace_section=workspace_section,
        workspace_root=_workspace_root(workspace_section),
        scope=scope,
        overrides_store=overrides_store,
        overrides_tag=overrides_tag,
    )


def _workspace_root(section: WorkspaceSection) -> Path:
    """The host directory the digest describes: the one mounted at `/`, else the first mount."""
    mount = next((m for m in section.mounts if m.mount_path == "/"), section.mounts[0])
    return Path(mount.host_path).expanduser().resolve()


# -- the optimization prompt -------------------------------------------------------------------


def optimization_prompt(target: OptimizationTarget, session: Session) -> Prompt[Any]:
    """The prompt a model answers with the digest, bound to `session` (see the module doc)."""
    prompt = target.prompt
    planning = prompt.find_section(PlanningToolsSection)
    strategy = PlanningStrategy.GOAL_DECOMPOSE_ROUTE_SYNTHESISE
    planning_section = (
        planning.clone(session=session, strategy=strategy)
        if isinstance(planning, PlanningToolsSection)
        else PlanningToolsSection(session=session, strategy=strategy)
    )
    ns_head, _, ns_last = prompt.ns.rpartition("/")
    ns_tail = _suffixed(ns_last, OPTIMIZATION_NS_SUFFIX)
    try:
        return Prompt(
            ns=f"{ns_head}/{ns_tail}" if ns_head else ns_tail,
            key=_suffixed(prompt.key, OPTIMIZATION_KEY_SUFFIX),
            sections=(
                TextSection(
                    title="Optimization Goal",
                    key="optimization-goal",
                    text=_goal_text(target),
                ),
                TextSection(title="Expectations", key="expectations", text=_EXPECTATIONS),
                planning_section,
                # Children are dropped: the optimization prompt has its own fixed layout, and a
                # child bound to the caller's session would leak the run into it.
                target.workspace_section.clone(session=session, children=()),
                # Writing the digest is this prompt's job, so its placeholder is expected there.
                target.digest_section.clone(
                    session=session,
                    children=(),
                    placeholder=_NO_DIGEST_YET,
                    warn_when_missing=False,
                ),
            ),
            output_type=_OptimizationResponse,
        )
    except PromptValidationError as error:
        raise OptimizationError(
            f"optimize {prompt.ns}/{prompt.key}: cannot build the optimization prompt: {error};"
            " no request was sent"
        ) from error


def _suffixed(name: str, suffix: str) -> str:
    """`name + suffix`, shortened to the key rule's 64 characters with a hash of `name` kept,
    so two long names never share one optimization prompt."""
    joined = name + suffix
    if len(joined) <= _KEY_LIMIT:
        return joined
    fingerprint = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    head = name[: _KEY_LIMIT - len(suffix) - _HASH_CHARS - 1]
    shortened = f"{head}-{fingerprint}{suffix}"
    assert is_valid_key(shortened)
    return shortened


def _goal_text(target: OptimizationTarget) -> str:
    prompt = target.prompt
    return (
        f"Write the workspace digest for the `{target.section_key}` section of the prompt"
        f" `{prompt.ns}/{prompt.key}`: a short, task-agnostic description of the workspace"
        " mounted below, which later prompts reuse instead of exploring the files again.\n\n"
        "Explore the workspace with the tools you have, confirm each fact in the files, and"
        " answer with the digest. Work only from what the files show."
    )


_NO_DIGEST_YET = "No digest is stored yet: the one you write will be the first."

_EXPECTATIONS = """\
The digest is markdown of at most about 400 words, with these parts:

- Layout: the notable directories and files someone needs to find their way around.
- Tooling: the default commands and workflows to test, lint, format, type-check and build.
- Watch-outs: known caveats and recurring pitfalls that affect most tasks.

Leave out:

- anything about one particular task, request or change: the digest serves every task;
- credentials, tokens, keys and the contents of credential files (name a variable if a command
  needs it, never its value);
- the state of external services, the output of tool calls in flight, and scratch or
  sandbox-only files, including files you wrote in the workspace copy;
- anything the files do not confirm.

promptkit records the section key, the scope and where the digest is stored next to it: do not
write them into the digest. Reply with the digest in the `digest` field."""


def _evaluate(
    adapter: ProviderAdapter,
    inner: Prompt[Any],
    target: OptimizationTarget,
    session: Session,
    deadline: float | timedelta | None,
    max_tool_rounds: int,
) -> PromptResponse[Any]:
    """Evaluate the optimization prompt; a reply that does not parse is kept as plain text."""
    calls_before = len(session.select_all(ToolInvoked))
    try:
        return adapter.evaluate(
            inner,
            session=session,
            overrides_store=target.overrides_store,
            overrides_tag=target.overrides_tag or "latest",
            deadline=deadline,
            max_tool_rounds=max_tool_rounds,
        )
    except OutputParseError as error:
        _log.info(
            "optimization_reply_unstructured",
            prompt_ns=inner.ns,
            prompt_key=inner.key,
            reason=str(error)[:300],
        )
        if isinstance(error.response, PromptResponse):
            # What the adapter had when parsing failed: the reply's text, tool calls and usage.
            return error.response
        # An adapter that attaches no response: the session still has the tool calls.
        calls = [
            call
            for call in session.select_all(ToolInvoked)[calls_before:]
            if (call.prompt_ns, call.prompt_key) == (inner.ns, inner.key)
        ]
        return PromptResponse(
            prompt_name=inner.display_name,
            text=error.raw_text,
            output=None,
            tool_calls=tuple(_call_record(call) for call in calls),
            usage=TokenUsage(),
            model=adapter.model,
            provider=adapter.provider,
        )


def _call_record(call: ToolInvoked) -> ToolCallRecord:
    return ToolCallRecord(
        name=call.name,
        call_id=call.call_id,
        params=dict(call.params),
        result=ToolResult(message=call.result_message, value=call.value, success=call.success),
        duration=timedelta(seconds=call.duration_s),
    )


def digest_response(
    digest: str, *, prompt_name: str, provider: str, model: str
) -> PromptResponse[Any]:
    """A response carrying `digest` as its structured output, for digests written without a
    provider call (the static optimizer)."""
    return PromptResponse(
        prompt_name=prompt_name,
        text=digest,
        output=_OptimizationResponse(digest=digest),
        tool_calls=(),
        usage=TokenUsage(),
        model=model,
        provider=provider,
    )


# -- checking and storing ----------------------------------------------------------------------


def _checked_digest(response: PromptResponse[Any], target: OptimizationTarget) -> str:
    output = response.output
    text = output.digest if isinstance(output, _OptimizationResponse) else response.text
    digest = text.strip()
    name = f"{target.prompt.ns}/{target.prompt.key}"
    if not digest:
        raise OptimizationError(
            f"optimize {name}: the {response.provider} optimizer returned an empty digest for"
            f" section {target.section_key!r}; nothing was stored (run it again, or try another"
            " model)"
        )
    findings = find_secrets(digest)
    if findings:
        rules = ", ".join(sorted({f"{finding.rule} (line {finding.line})" for finding in findings}))
        raise OptimizationError(
            f"optimize {name}: the digest for section {target.section_key!r} contains what looks"
            f" like a credential: {rules}; nothing was stored. Remove the credential from the"
            " workspace (or keep the file out of it), then optimize again"
        )
    return digest


def _store(
    target: OptimizationTarget,
    digest: str,
    *,
    session: SessionProtocol,
    author: OverrideAuthor,
    provenance: WorkspaceManifest,
) -> None:
    if target.scope is OptimizationScope.SESSION:
        set_workspace_digest(
            session,
            target.section_key,
            digest,
            provenance=provenance,
            workspace=target.workspace_root,
            source=f"{author.kind}:{author.model}" if author.model else author.kind,
        )
        return
    _store_globally(target, digest, session=session, author=author)


def _store_globally(
    target: OptimizationTarget, digest: str, *, session: SessionProtocol, author: OverrideAuthor
) -> None:
    store, tag, prompt = target.overrides_store, target.overrides_tag, target.prompt
    assert store is not None and tag is not None  # prepare_optimization checked both
    key = target.section_key
    shared = store if isinstance(store, SharedSectionStore) else None
    # Reading first reports a malformed file before anything is written, and keeps what a
    # failure further on has to put back.
    own_before = store.resolve(prompt.descriptor, tag)
    shared_before = shared.resolve_shared_section(key, tag) if shared is not None else None
    undo: list[Callable[[], None]] = []
    try:
        store.set_section_override(
            prompt, tag=tag, path=target.digest_path, body=digest, source=author
        )
        undo.append(partial(_restore_own, store, prompt, tag, target.digest_path, own_before))
        if shared is not None:
            shared.set_shared_section(
                section_key=key,
                tag=tag,
                body=digest,
                expected_hash=target.digest_section.content_hash,
                source=author,
            )
            undo.append(partial(_restore_shared, shared, key, tag, shared_before))
        clear_workspace_digest(session, key)
    except BaseException:
        for action in reversed(undo):
            try:
                action()
            except Exception as undo_error:  # the original failure is what the caller must see
                _log.error(
                    "optimize_undo_failed",
                    prompt_ns=prompt.ns,
                    prompt_key=prompt.key,
                    section_key=key,
                    tag=tag,
                    error_type=type(undo_error).__name__,
                    error=str(undo_error)[:300],
                )
        raise


def _restore_own(
    store: PromptOverridesStore,
    prompt: Prompt[Any],
    tag: str,
    path: SectionPath,
    before: PromptOverride | None,
) -> None:
    if before is None:
        store.delete(ns=prompt.ns, prompt_key=prompt.key, tag=tag)
        return
    entry = before.sections.get(path)
    if entry is not None:
        restored = PromptOverride(prompt.ns, prompt.key, tag, sections={path: entry})
        store.upsert(prompt.descriptor, restored)
    elif isinstance(store, LocalPromptOverridesStore):
        store.delete_section_override(ns=prompt.ns, prompt_key=prompt.key, tag=tag, path=path)
    else:
        _log.error(
            "optimize_undo_incomplete",
            prompt_ns=prompt.ns,
            prompt_key=prompt.key,
            tag=tag,
            path="/".join(path),
            reason=f"{type(store).__name__} offers no way to delete one section entry",
        )


def _restore_shared(
    store: SharedSectionStore, section_key: str, tag: str, before: SectionOverride | None
) -> None:
    if before is not None:
        store.set_shared_section(
            section_key=section_key,
            tag=tag,
            body=before.body,
            expected_hash=before.expected_hash,
            source=before.source,
        )
    elif isinstance(store, LocalPromptOverridesStore):
        store.delete_shared_section(section_key=section_key, tag=tag)
    else:
        _log.error(
            "optimize_undo_incomplete",
            section_key=section_key,
            tag=tag,
            reason=f"{type(store).__name__} offers no way to delete a shared section",
        )


# -- the execution record ----------------------------------------------------------------------


@dataclass
class _RunRecord:
    """What one optimize run has got to, for `manifest.json` when an output directory is given.

    Mutable on purpose: it is filled in step by step so a failure can record how far it got.
    """

    output_dir: Path | None
    provider: str
    model: str
    prompt: Prompt[Any]
    target: OptimizationTarget | None = None
    draft: DigestDraft | None = None
    digest: str | None = None

    def succeeded(self, *, duration_s: float) -> None:
        if self.output_dir is None:
            return
        artifacts = self._write_artifacts(with_digest=True)
        write_manifest(
            self.output_dir,
            ExecutionRecord(
                status="completed",
                outcome="success",
                duration_s=duration_s,
                artifacts=artifacts,
                metadata=self._metadata(),
            ),
        )

    def failed(self, error: BaseException, *, duration_s: float) -> None:
        if self.output_dir is None:
            return
        write_failure_record(
            self.output_dir,
            error,
            duration_s=duration_s,
            metadata=self._metadata(),
            # The digest is left out: it was not stored, and may be the refused text.
            write_artifacts=partial(self._write_artifacts, with_digest=False),
        )

    def _write_artifacts(self, *, with_digest: bool) -> tuple[str, ...]:
        assert self.output_dir is not None
        artifacts: list[str] = []
        if self.draft is not None:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            write_atomically(
                self.output_dir / WORKSPACE_MANIFEST_ARTIFACT, self.draft.provenance.to_json()
            )
            artifacts.append(WORKSPACE_MANIFEST_ARTIFACT)
        if with_digest and self.digest is not None:
            write_atomically(self.output_dir / DIGEST_ARTIFACT, self.digest + "\n")
            artifacts.append(DIGEST_ARTIFACT)
        return tuple(artifacts)

    def _metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "operation": "optimize",
            "provider": self.provider,
            "model": self.model,
            "prompt_ns": self.prompt.ns,
            "prompt_key": self.prompt.key,
            "prompt_name": self.prompt.display_name,
        }
        if self.target is not None:
            metadata["scope"] = str(self.target.scope)
            metadata["section_key"] = self.target.section_key
            metadata["workspace"] = str(self.target.workspace_root)
            if self.target.overrides_tag is not None:
                metadata["overrides_tag"] = self.target.overrides_tag
        if self.draft is not None:
            response = self.draft.response
            metadata["reported_model"] = response.model
            metadata["usage"] = response.usage.to_json()
            metadata["tool_calls"] = len(response.tool_calls)
        return metadata
