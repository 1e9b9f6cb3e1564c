"""`WorkspaceDigestSection`: a reusable workspace summary, resolved at render time.

Resolution order, the contract every consumer relies on:

1. the session's latest `WorkspaceDigest` for the section key (live optimizations win);
2. an override body, exactly as stored: the prompt's own override for the section under the
   tag rendered, then a shared override of the section key under that tag (a GLOBAL digest
   written while optimizing any prompt), when the overrides store keeps shared sections and the
   entry's hash matches;
3. the shared override of the project's tag (`SharedSectionStore.default_tag`) when the tag
   rendered has none: a new candidate tag renders the project's digest, not the placeholder,
   and says so (`DigestResolution.fallback_from`, a `workspace_digest_from_project_tag` log);
4. the placeholder, with a `workspace_digest_missing` warning unless `warn_when_missing=False`.

docs/workspace-digest.md states this order for every reader: a render, `digest status` and
`export`, the REPL, the MCP server, `eval` and `promote`.

A session digest that hides a stored override (a reviewed, committed digest) is reported: the
render logs `workspace_digest_shadows_override` once, and `DigestResolution.shadowed_override`
names it. A shared override written by a GLOBAL optimize records its workspace's provenance,
so its freshness is known (`promptkit.digest._committed`) and a stale one is logged once.

The content hash covers a fixed marker naming the section kind and key, never the placeholder
or title, so a stored override survives a placeholder edit. `resolve_workspace_digest` tells
where a digest would come from without rendering, for the CLI and REPL.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Self

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.digest._committed import recorded_manifest
from promptkit.digest._freshness import (
    DigestFreshness,
    check_committed_freshness,
    check_freshness,
    first_warning,
    warn_if_stale,
)
from promptkit.digest._state import WorkspaceDigest, latest_workspace_digest
from promptkit.errors import ArgumentTypeError, PromptValidationError
from promptkit.hostfiles import WorkspaceManifest
from promptkit.logging import get_logger
from promptkit.overrides import SharedSectionOverride, SharedSectionStore
from promptkit.prompt import (
    OverrideAuthor,
    OverridesLookup,
    Prompt,
    RenderContext,
    Section,
    SectionOverride,
    Tool,
)
from promptkit.session import Session

_log = get_logger("promptkit.digest")

DigestOrigin = Literal["session", "override", "shared-override", "placeholder"]

DEFAULT_PLACEHOLDER = (
    "No workspace digest is available yet. Explore the workspace with the tools you have before"
    " relying on assumptions about its layout, tooling or conventions."
)


@dataclass(frozen=True)
class DigestResolution:
    """Where a digest section's body comes from, and how current it is.

    `updated_at` is when the session digest was stored or the override last written (None for
    the placeholder, and for an override given without its entry). `author` names who wrote it
    (`operator`, `optimizer:<model>`...). `freshness` is set for session digests with
    provenance and for shared overrides that record it (GLOBAL digests). `shadowed_override`
    names a stored override that a session digest hides from the render, if any.
    `tag` is the tag whose override gave the body (None for the session and the placeholder);
    `fallback_from` the tag rendered when that had no digest of its own and the project's tag
    (`tag`) gave it.
    """

    section_key: str
    origin: DigestOrigin
    body: str
    updated_at: datetime | None = None
    author: str | None = None
    provenance: WorkspaceManifest | None = None
    freshness: DigestFreshness | None = None
    shadowed_override: str | None = None
    tag: str | None = None
    fallback_from: str | None = None

    @property
    def source(self) -> str:
        """Where the body came from, in words: `session`, `override of tag 'latest'`,
        `shared-override of tag 'latest' (tag 'candidate' has none)` or `placeholder`."""
        if self.tag is None:
            return self.origin
        fallback = f" (tag {self.fallback_from!r} has none)" if self.fallback_from else ""
        return f"{self.origin} of tag {self.tag!r}{fallback}"

    @property
    def is_stale(self) -> bool | None:
        """True when the workspace changed since the digest; None when that cannot be told."""
        return self.freshness.is_stale if self.freshness is not None else None


@dataclass(frozen=True, kw_only=True, eq=False)
class WorkspaceDigestSection(Section):
    """A task-agnostic summary of the workspace, bound to `session` (see the module doc).

    It accepts overrides and never takes part in `seed`. `clone(session=...)` requires a Session
    and keeps the title, key, placeholder, `warn_when_missing` and `freshness_interval_s`.
    `warn_when_missing=False` silences the `workspace_digest_missing` warning, for a prompt whose
    job is to write the digest (the optimization prompt), where the placeholder is expected.
    `freshness_interval_s` is how long a render reuses the last freshness check of the session
    digest (describing the workspace costs milliseconds, a render microseconds); 0 checks at
    every render, timed by `clock`. `resolve_workspace_digest` always checks afresh.
    """

    session: Session
    title: str = "Workspace Digest"
    key: str = "workspace-digest"
    placeholder: str = DEFAULT_PLACEHOLDER
    warn_when_missing: bool = True
    freshness_interval_s: float = 2.0
    clock: Clock = SYSTEM_CLOCK
    accepts_overrides: bool = field(default=True, init=False)
    seedable: bool = field(default=False, init=False)
    tools: tuple[Tool[Any], ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.session, Session):
            raise ArgumentTypeError(
                f"WorkspaceDigestSection needs session=<a promptkit Session>,"
                f" got {type(self.session).__name__}"
            )
        super().__post_init__()
        if not isinstance(self.freshness_interval_s, int | float) or self.freshness_interval_s < 0:
            raise PromptValidationError(
                f"section {self.key!r}: freshness_interval_s must be a number of seconds >= 0,"
                f" got {self.freshness_interval_s!r}"
            )
        if not isinstance(self.placeholder, str) or not self.placeholder.strip():
            raise PromptValidationError(
                f"section {self.key!r}: placeholder must be non-empty text shown when no digest"
                " exists"
            )

    def original_body_template(self) -> str:
        # Only the kind and key: a digest stored against this hash outlives wording changes.
        return f"[promptkit workspace digest: section {self.key}]"

    def render_body(self, params: Any, context: RenderContext) -> str:
        return self.resolve_body(params, None, context)

    def resolve_body(self, params: Any, override: str | None, context: RenderContext) -> str:
        resolution, digest = _resolve(
            self,
            session=self.session,
            own_override=override,
            store=context.overrides,
            tag=context.tag,
            freshness_max_age_s=self.freshness_interval_s,
            clock=self.clock,
        )
        if digest is not None and resolution.shadowed_override is not None:
            _report_shadowing(digest, resolution.shadowed_override, self.key, context)
        if digest is not None and resolution.freshness is not None:
            warn_if_stale(
                digest,
                resolution.freshness,
                prompt_ns=context.prompt_ns,
                prompt_key=context.prompt_key,
            )
        elif resolution.origin == "shared-override" and resolution.freshness is not None:
            _warn_if_committed_stale(resolution, context)
        if resolution.fallback_from is not None:
            _report_fallback(resolution, context)
        elif resolution.origin == "placeholder" and self.warn_when_missing:
            _log.warning(
                "workspace_digest_missing",
                prompt_ns=context.prompt_ns,
                prompt_key=context.prompt_key,
                section_key=self.key,
                path="/".join(context.path),
                tag=context.tag,
            )
        return resolution.body

    def clone(self, **changes: Any) -> Self:
        """A copy bound to `session=` (required), with any other field changes applied."""
        if not isinstance(changes.get("session"), Session):
            raise ArgumentTypeError(
                "WorkspaceDigestSection.clone requires session=<a promptkit Session>: a digest"
                " section always reads the digest of one concrete session"
            )
        return super().clone(**changes)


def resolve_workspace_digest(
    target: WorkspaceDigestSection | Prompt[Any],
    *,
    overrides_store: OverridesLookup | None = None,
    tag: str = "latest",
    session: Session | None = None,
) -> DigestResolution:
    """Where the digest section of `target` would take its body from, without rendering.

    For a prompt, its first `WorkspaceDigestSection` is used and the prompt's own override is
    considered; a bare section can only find session digests and shared overrides. `session`
    replaces the section's own session (the CLI passes the one it loaded from the state
    directory). Nothing is logged; check `is_stale` for freshness.
    """
    own: SectionOverride | None = None
    if isinstance(target, Prompt):
        section = target.find_section(WorkspaceDigestSection)
        if not isinstance(section, WorkspaceDigestSection):
            raise PromptValidationError(
                f"prompt {target.ns}/{target.key} has no WorkspaceDigestSection: add one to"
                " report where its digest comes from"
            )
        own = _own_override(target, section, overrides_store, tag)
    elif isinstance(target, WorkspaceDigestSection):
        section = target
    else:
        raise ArgumentTypeError(
            "resolve_workspace_digest expects a WorkspaceDigestSection or a Prompt,"
            f" got {type(target).__name__}"
        )
    resolution, _ = _resolve(
        section,
        session=session if session is not None else section.session,
        own_override=own,
        store=overrides_store,
        tag=tag,
    )
    return resolution


def _own_override(
    prompt: Prompt[Any],
    section: WorkspaceDigestSection,
    store: OverridesLookup | None,
    tag: str,
) -> SectionOverride | None:
    if store is None:
        return None
    stored = store.resolve(prompt.descriptor, tag)
    path = prompt.path_of(section)
    if stored is None or path is None:
        return None
    entry = stored.sections.get(path)
    # A stale entry is not applied by a render either.
    if entry is None or entry.expected_hash != section.content_hash:
        return None
    return entry


def _resolve(
    section: WorkspaceDigestSection,
    *,
    session: Session,
    own_override: SectionOverride | str | None,
    store: object,
    tag: str,
    freshness_max_age_s: float = 0.0,
    clock: Clock = SYSTEM_CLOCK,
) -> tuple[DigestResolution, WorkspaceDigest | None]:
    key = section.key
    digest = latest_workspace_digest(session, key)
    if digest is not None:
        hidden = _shadowed(section, own_override, store, tag)
        resolution = DigestResolution(
            section_key=key,
            origin="session",
            body=digest.body,
            updated_at=digest.created_at,
            author=digest.source,
            provenance=digest.provenance,
            freshness=(
                check_freshness(digest, max_age_s=freshness_max_age_s, clock=clock)
                if digest.provenance is not None
                else None
            ),
            shadowed_override=hidden,
        )
        return resolution, digest
    if isinstance(own_override, SectionOverride):
        return _from_override(key, "override", own_override, tag=tag), None
    if own_override is not None:
        plain = DigestResolution(section_key=key, origin="override", body=own_override, tag=tag)
        return plain, None
    shared = _shared_override(section, store, tag)
    if shared is not None:
        resolution = _from_override(
            key,
            "shared-override",
            shared.entry,
            tag=shared.tag,
            fallback_from=tag if shared.tag != tag else None,
        )
        if shared.provenance is not None:
            resolution = dataclasses.replace(
                resolution,
                provenance=recorded_manifest(shared.provenance),
                freshness=check_committed_freshness(
                    shared.provenance,
                    shared.workspace,
                    max_age_s=freshness_max_age_s,
                    clock=clock,
                ),
            )
        return resolution, None
    return DigestResolution(section_key=key, origin="placeholder", body=section.placeholder), None


def _shadowed(
    section: WorkspaceDigestSection,
    own_override: SectionOverride | str | None,
    store: object,
    tag: str,
) -> str | None:
    """What stored override a session digest hides, described for a log or `digest status`."""
    if isinstance(own_override, SectionOverride):
        return f"this prompt's own override ({_author_label(own_override.source)})"
    if own_override is not None:
        return "this prompt's own override"
    shared = _shared_override(section, store, tag)
    if shared is None:
        return None
    author = _author_label(shared.entry.source)
    return f"{shared.location} ({author}, {shared.entry.updated_at.isoformat()})"


def _report_shadowing(
    digest: WorkspaceDigest, shadowed: str, section_key: str, context: RenderContext
) -> None:
    if not first_warning(("shadows", digest.created_at.isoformat(), shadowed)):
        return
    _log.warning(
        "workspace_digest_shadows_override",
        prompt_ns=context.prompt_ns,
        prompt_key=context.prompt_key,
        section_key=section_key,
        session_digest_created_at=digest.created_at.isoformat(),
        override=shadowed,
        hint="the session digest wins; clear it (or optimize with GLOBAL scope) to render the"
        " reviewed override",
    )


def _report_fallback(resolution: DigestResolution, context: RenderContext) -> None:
    seen = (context.prompt_ns, context.prompt_key, resolution.section_key)
    if not first_warning(("fallback", *seen, resolution.fallback_from, resolution.tag)):
        return
    # A warning, once per prompt and tag: a comparison of tags should not rest on a digest
    # the reader does not know was shared.
    _log.warning(
        "workspace_digest_from_project_tag",
        prompt_ns=context.prompt_ns,
        prompt_key=context.prompt_key,
        section_key=resolution.section_key,
        tag=resolution.fallback_from,
        project_tag=resolution.tag,
        hint=f"tag {resolution.fallback_from!r} has no digest of its own; run `promptkit"
        f" optimize --scope global --tag {resolution.fallback_from}` to give it one",
    )


def _warn_if_committed_stale(resolution: DigestResolution, context: RenderContext) -> None:
    freshness = resolution.freshness
    if freshness is None or not freshness.is_stale:
        return
    current = freshness.current
    if not first_warning(
        ("committed", resolution.section_key, str(resolution.updated_at), str(current))
    ):
        return
    _log.warning(
        "workspace_digest_stale",
        prompt_ns=context.prompt_ns,
        prompt_key=context.prompt_key,
        section_key=resolution.section_key,
        origin=resolution.origin,
        digest_updated_at=str(resolution.updated_at),
        recorded_head_sha=resolution.provenance.head_sha if resolution.provenance else None,
        current_head_sha=current.head_sha if current else None,
        reason=freshness.reason,
        hint="run `promptkit optimize --scope global` again, or review the digest",
    )


def _shared_override(
    section: WorkspaceDigestSection, store: object, tag: str
) -> SharedSectionOverride | None:
    """The shared override of the section under `tag`, else under the project's tag."""
    if not isinstance(store, SharedSectionStore):
        return None
    found = _shared_of_tag(section, store, tag)
    if found is None and store.default_tag != tag:
        found = _shared_of_tag(section, store, store.default_tag)
    return found


def _shared_of_tag(
    section: WorkspaceDigestSection, store: SharedSectionStore, tag: str
) -> SharedSectionOverride | None:
    shared = store.read_shared_section(section.key, tag)
    if shared is None:
        return None
    entry = shared.entry
    if entry.expected_hash != section.content_hash:
        _log.warning(
            "shared_override_stale",
            store=repr(store),
            section_key=section.key,
            tag=tag,
            override_hash=entry.expected_hash,
            code_hash=section.content_hash,
        )
        return None
    return shared


def _from_override(
    key: str,
    origin: DigestOrigin,
    entry: SectionOverride,
    *,
    tag: str,
    fallback_from: str | None = None,
) -> DigestResolution:
    return DigestResolution(
        section_key=key,
        origin=origin,
        body=entry.body,
        updated_at=entry.updated_at,
        author=_author_label(entry.source),
        tag=tag,
        fallback_from=fallback_from,
    )


def _author_label(author: OverrideAuthor) -> str:
    return f"{author.kind}:{author.model}" if author.model else author.kind
