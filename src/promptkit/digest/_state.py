"""The workspace digest slice: the current digest per section key, kept in a Session.

A `WorkspaceDigest` is a value in the session slice registered as `promptkit.workspace-digest`,
so a session persisted by `SessionStore` keeps its digests. Digests are upserted by section key:
setting one key replaces only that key's digest. Keys follow the key rule after being stripped
and lower-cased; bodies are stripped, and an empty body or one holding a credential is refused
before anything is stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from promptkit._names import is_valid_key
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import SessionError, WorkspaceError
from promptkit.hostfiles import WorkspaceManifest, describe_workspace
from promptkit.session import SessionProtocol, register_slice_type, upsert_by

DIGEST_SLICE_NAME = "promptkit.workspace-digest"
DEFAULT_DIGEST_SOURCE = "operator"


@dataclass(frozen=True)
class WorkspaceDigest:
    """A digest body for the section keyed `section_key`, and where it came from.

    `provenance` is the manifest of the workspace the digest describes, when known;
    `workspace_root` is that workspace's local directory, kept so a later render can tell
    whether the workspace has moved on. `source` says who wrote the digest (`operator`,
    `optimizer:<model>`, `static`...).
    """

    section_key: str
    body: str
    created_at: datetime
    provenance: WorkspaceManifest | None = None
    source: str = DEFAULT_DIGEST_SOURCE
    workspace_root: str | None = None


register_slice_type(DIGEST_SLICE_NAME, WorkspaceDigest)


def _section_key_of(digest: WorkspaceDigest) -> str:
    return digest.section_key


_upsert_by_section_key = upsert_by(_section_key_of)


def normalize_digest_key(key: str) -> str:
    """`key` stripped and lower-cased; SessionError unless the result follows the key rule."""
    normalized = key.strip().lower() if isinstance(key, str) else key
    if not is_valid_key(normalized):
        raise SessionError(
            f"invalid workspace digest key {key!r}: expected the key of a section (lower-case"
            " letters, digits, '.', '_' or '-', starting with a letter or digit, 1-64 chars)"
        )
    return normalized


def set_workspace_digest(
    session: SessionProtocol,
    key: str,
    body: str,
    *,
    provenance: WorkspaceManifest | None = None,
    workspace: str | os.PathLike[str] | None = None,
    source: str = DEFAULT_DIGEST_SOURCE,
) -> WorkspaceDigest:
    """Store `body` as the digest of section `key` in `session`, replacing only that key's.

    `workspace` is the directory the digest describes: its current manifest is recorded as the
    provenance unless `provenance` is given, and its path is kept so renders can warn when the
    digest goes stale. Given only `provenance`, its `source` is used as that path when it names
    a local directory. Raises SessionError for an invalid key, an empty body, or a body that
    holds a credential (the error names the rule and line, never the value).
    """
    section_key = normalize_digest_key(key)
    text = body.strip() if isinstance(body, str) else ""
    if not text:
        raise SessionError(
            f"workspace digest for {section_key!r} is empty: pass the digest text to store"
            " (use clear_workspace_digest to remove a digest)"
        )
    from promptkit.secrets import find_secrets

    findings = find_secrets(text, location=f"workspace digest {section_key!r}")
    if findings:
        where = ", ".join(f"{finding.rule} (line {finding.line})" for finding in findings)
        raise SessionError(
            f"workspace digest for {section_key!r} was not stored: it contains what looks like"
            f" a credential: {where}; remove it from the digest and store it again"
        )
    root = _workspace_root(workspace, provenance)
    if provenance is None and workspace is not None:
        provenance = describe_workspace(workspace)
    digest = WorkspaceDigest(
        section_key=section_key,
        body=text,
        created_at=SYSTEM_CLOCK.now(),
        provenance=provenance,
        source=source,
        workspace_root=root,
    )
    # Reducers are code, not session state: a session loaded from a store has none yet.
    session.register_reducer(WorkspaceDigest, _upsert_by_section_key)
    session.dispatch(digest)
    return digest


def latest_workspace_digest(session: SessionProtocol, key: str) -> WorkspaceDigest | None:
    """The digest stored in `session` for section `key`, or None."""
    section_key = normalize_digest_key(key)
    matches = session.select_where(
        WorkspaceDigest, lambda digest: digest.section_key == section_key
    )
    return matches[-1] if matches else None


def clear_workspace_digest(session: SessionProtocol, key: str) -> None:
    """Remove the digest of section `key` from `session` (nothing happens when there is none)."""
    section_key = normalize_digest_key(key)
    if latest_workspace_digest(session, section_key) is not None:
        session.clear_slice(WorkspaceDigest, lambda digest: digest.section_key == section_key)


def _workspace_root(
    workspace: str | os.PathLike[str] | None, provenance: WorkspaceManifest | None
) -> str | None:
    if workspace is not None:
        path = Path(workspace).expanduser()
        try:
            return str(path.resolve(strict=True))
        except OSError:
            raise WorkspaceError(
                f"workspace {path} does not exist: pass the directory the digest describes"
            ) from None
    if provenance is not None:
        candidate = Path(provenance.source)
        if candidate.is_absolute() and candidate.is_dir():
            return str(candidate.resolve())
    return None
