"""Checking a written digest and storing it: in the caller's session (SESSION) or as overrides
(GLOBAL), putting back what was written when a later step fails.

An empty digest, or one in which `find_secrets` sees a credential, is refused before anything
is stored. GLOBAL writes the prompt's own override at the digest section's path and a shared
entry for the section key (so every prompt with a digest section of that key finds it), then
clears the session's digest so renders fall back to the override.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from promptkit.adapters.response import PromptResponse
from promptkit.digest import clear_workspace_digest, set_workspace_digest
from promptkit.errors import OptimizationError
from promptkit.logging import get_logger
from promptkit.optimize.types import OptimizationResponse, OptimizationScope, OptimizationTarget
from promptkit.overrides import LocalPromptOverridesStore, PromptOverridesStore, SharedSectionStore
from promptkit.prompt import OverrideAuthor, Prompt, PromptOverride, SectionOverride, SectionPath
from promptkit.secrets import find_secrets
from promptkit.session import SessionProtocol
from promptkit.workspace.manifest import WorkspaceManifest

_log = get_logger("promptkit.optimize")


def checked_digest(response: PromptResponse[Any], target: OptimizationTarget) -> str:
    output = response.output
    text = output.digest if isinstance(output, OptimizationResponse) else response.text
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


def store_digest(
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
    expected_hash = target.digest_section.content_hash
    own_entry = own_before.sections.get(target.digest_path) if own_before is not None else None
    undo: list[Callable[[], None]] = []
    try:
        # An entry that already says exactly this is left as it is, so optimizing an unchanged
        # tree again leaves the override files byte for byte as they were (updated_at included).
        if not _says(own_entry, digest, expected_hash, author):
            store.set_section_override(
                prompt, tag=tag, path=target.digest_path, body=digest, source=author
            )
            undo.append(partial(_restore_own, store, prompt, tag, target.digest_path, own_before))
        if shared is not None and not _says(shared_before, digest, expected_hash, author):
            shared.set_shared_section(
                section_key=key,
                tag=tag,
                body=digest,
                expected_hash=expected_hash,
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


def _says(
    entry: SectionOverride | None, body: str, expected_hash: str, author: OverrideAuthor
) -> bool:
    return (
        entry is not None
        and entry.body == body
        and entry.expected_hash == expected_hash
        and entry.source == author
    )
