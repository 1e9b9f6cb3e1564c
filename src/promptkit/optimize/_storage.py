"""Checking a written digest and storing it: in the caller's session (SESSION) or as overrides
(GLOBAL), putting back what was written when a later step fails.

An empty digest, or one in which `find_secrets` sees a credential, is refused before anything
is stored. GLOBAL writes the digest once, as the shared entry of the section key (every prompt
with a digest section of that key finds it), with the workspace's provenance and content
fingerprint (`promptkit.digest._committed`) so its freshness is known; the prompt's own entry at
the digest path, which would hide it, is removed. A store without shared sections gets the
prompt's own entry instead. Then the session's digest is cleared so renders use the override.

An override an operator wrote (source `operator`, including a generated one edited by hand
since) is never replaced unless the caller says so: `check_operator_overrides` raises
`OperatorOverrideError` before anything is spent, and again before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from promptkit.adapters import PromptResponse
from promptkit.digest import clear_workspace_digest, committed_provenance, set_workspace_digest
from promptkit.errors import DigestRejectedError, OptimizationError
from promptkit.hostfiles import WorkspaceManifest
from promptkit.logging import get_logger
from promptkit.optimize._types import OptimizationResponse, OptimizationScope, OptimizationTarget
from promptkit.overrides import (
    DocumentOverridesStore,
    PromptOverridesStore,
    SharedSectionOverride,
    SharedSectionStore,
)
from promptkit.prompt import OverrideAuthor, Prompt, PromptOverride, SectionOverride, SectionPath
from promptkit.secrets import find_secrets
from promptkit.session import SessionProtocol

_log = get_logger("promptkit.optimize")


class OperatorOverrideError(OptimizationError):
    """GLOBAL optimize would replace an override an operator wrote; `location` names it.

    Pass `overwrite_operator=True` (`promptkit optimize --force`; the REPL asks) to replace it.
    """

    def __init__(self, message: str, *, location: str) -> None:
        super().__init__(message)
        self.location = location


@dataclass(frozen=True)
class _StoredEntry:
    location: str
    entry: SectionOverride


def check_operator_overrides(target: OptimizationTarget) -> None:
    """OperatorOverrideError when GLOBAL storage would replace an operator's override of the
    digest: the shared entry of its key, or the prompt's own entry at the digest path."""
    for found in _digest_entries(target):
        if found.entry.source.kind == "operator":
            prompt = target.prompt
            raise OperatorOverrideError(
                f"optimize {prompt.ns}/{prompt.key} with scope GLOBAL would replace the"
                f" {target.section_key!r} digest an operator wrote in {found.location}"
                f" (updated {found.entry.updated_at.isoformat()}); nothing was spent or written."
                " Pass overwrite_operator=True (promptkit optimize --force) to replace it, or"
                " keep it and optimize with SESSION scope",
                location=found.location,
            )


def _digest_entries(target: OptimizationTarget) -> list[_StoredEntry]:
    store, tag, prompt = target.overrides_store, target.overrides_tag, target.prompt
    if store is None or tag is None:
        return []
    found: list[_StoredEntry] = []
    own = store.resolve(prompt.descriptor, tag)
    if own is not None and target.digest_path in own.sections:
        location = own.location or f"the override of {prompt.ns}/{prompt.key}"
        found.append(_StoredEntry(location, own.sections[target.digest_path]))
    if isinstance(store, SharedSectionStore):
        shared = store.read_shared_section(target.section_key, tag)
        if shared is not None:
            location = shared.location or f"the shared override of {target.section_key}"
            found.append(_StoredEntry(location, shared.entry))
    return found


def checked_digest(response: PromptResponse[Any], target: OptimizationTarget) -> str:
    output = response.output
    text = output.digest if isinstance(output, OptimizationResponse) else response.text
    digest = text.strip()
    name = f"{target.prompt.ns}/{target.prompt.key}"
    if not digest:
        raise DigestRejectedError(
            f"optimize {name}: the {response.provider} optimizer returned an empty digest for"
            f" section {target.section_key!r}; nothing was stored (run it again, or try another"
            " model)",
            response=response,
        )
    findings = find_secrets(digest)
    if findings:
        rules = ", ".join(sorted({f"{finding.rule} (line {finding.line})" for finding in findings}))
        raise DigestRejectedError(
            f"optimize {name}: the digest for section {target.section_key!r} contains what looks"
            f" like a credential: {rules}; nothing was stored. Remove the credential from the"
            " workspace (or keep the file out of it), then optimize again"
        )
    return digest


def store_digest(
    target: OptimizationTarget,
    digest: str,
    *,
    session: SessionProtocol,
    author: OverrideAuthor,
    provenance: WorkspaceManifest,
    overwrite_operator: bool = False,
) -> tuple[str, ...]:
    """Store the checked digest as `target.scope` says; returns the override files written
    (none for SESSION scope)."""
    if target.scope is OptimizationScope.SESSION:
        set_workspace_digest(
            session,
            target.section_key,
            digest,
            provenance=provenance,
            workspace=target.workspace_root,
            source=f"{author.kind}:{author.model}" if author.model else author.kind,
        )
        return ()
    if not overwrite_operator:
        check_operator_overrides(target)
    return _store_globally(target, digest, session=session, author=author, provenance=provenance)


def _store_globally(
    target: OptimizationTarget,
    digest: str,
    *,
    session: SessionProtocol,
    author: OverrideAuthor,
    provenance: WorkspaceManifest,
) -> tuple[str, ...]:
    store, tag, prompt = target.overrides_store, target.overrides_tag, target.prompt
    assert store is not None and tag is not None  # prepare_optimization checked both
    key = target.section_key
    shared = store if isinstance(store, SharedSectionStore) else None
    # Reading first reports a malformed file before anything is written, and keeps what a
    # failure further on has to put back.
    own_before = store.resolve(prompt.descriptor, tag)
    shared_before = shared.read_shared_section(key, tag) if shared is not None else None
    expected_hash = target.digest_section.content_hash
    undo: list[Callable[[], None]] = []
    try:
        if shared is None:
            own_entry = own_before.sections.get(target.digest_path) if own_before else None
            # An entry that already says exactly this is left as it is, so optimizing an
            # unchanged tree again leaves the override files byte for byte as they were.
            if not _says(own_entry, digest, expected_hash, author):
                store.set_section_override(
                    prompt, tag=tag, path=target.digest_path, body=digest, source=author
                )
                undo.append(
                    partial(_restore_own, store, prompt, tag, target.digest_path, own_before)
                )
            written = store.resolve(prompt.descriptor, tag)
            locations: tuple[str, ...] = (
                (written.location,) if written is not None and written.location else ()
            )
        else:
            root = store.files_root if isinstance(store, DocumentOverridesStore) else None
            recorded = committed_provenance(
                provenance, workspace=target.workspace_root, overrides_root=root
            )
            before_entry = shared_before.entry if shared_before is not None else None
            # As for the own entry: an unchanged digest leaves the file byte for byte as it was.
            if not _says(before_entry, digest, expected_hash, author):
                shared.set_shared_section(
                    section_key=key,
                    tag=tag,
                    body=digest,
                    expected_hash=expected_hash,
                    source=author,
                    provenance=recorded,
                    workspace=target.workspace_root,
                )
                undo.append(partial(_restore_shared, shared, key, tag, shared_before))
            stored = shared.read_shared_section(key, tag)
            locations = (stored.location if stored and stored.location else key,)
            if own_before is not None and target.digest_path in own_before.sections:
                # The prompt's own entry would hide the shared one: the digest lives once.
                _remove_own_entry(store, prompt, tag, target.digest_path)
                undo.append(
                    partial(_restore_own, store, prompt, tag, target.digest_path, own_before)
                )
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
    return locations


def _remove_own_entry(
    store: PromptOverridesStore, prompt: Prompt[Any], tag: str, path: SectionPath
) -> None:
    if isinstance(store, DocumentOverridesStore):
        store.delete_section_override(ns=prompt.ns, prompt_key=prompt.key, tag=tag, path=path)
    else:
        _log.warning(
            "optimize_own_entry_kept",
            prompt_ns=prompt.ns,
            prompt_key=prompt.key,
            path="/".join(path),
            reason=f"{type(store).__name__} offers no way to delete one section entry; it"
            " still wins over the shared digest",
        )


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
    elif isinstance(store, DocumentOverridesStore):
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
    store: SharedSectionStore, section_key: str, tag: str, before: SharedSectionOverride | None
) -> None:
    if before is not None:
        store.set_shared_section(
            section_key=section_key,
            tag=tag,
            body=before.entry.body,
            expected_hash=before.entry.expected_hash,
            source=before.entry.source,
            provenance=before.provenance,
            workspace=before.workspace,
            updated_at=before.entry.updated_at,
        )
    elif isinstance(store, DocumentOverridesStore):
        store.delete_shared_section(section_key=section_key, tag=tag)
    else:
        _log.error(
            "optimize_undo_incomplete",
            section_key=section_key,
            tag=tag,
            reason=f"{type(store).__name__} offers no way to delete a shared section",
        )


def _says(
    entry: SectionOverride | None, body: str, expected_hash: str, author: OverrideAuthor
) -> bool:
    return (
        entry is not None
        and entry.body == body
        and entry.expected_hash == expected_hash
        and entry.source == author
    )
