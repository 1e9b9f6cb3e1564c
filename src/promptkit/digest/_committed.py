"""Provenance of committed (GLOBAL) digests: what a shared override records of its workspace.

A GLOBAL digest is committed with the repository it describes, so the session digest's
freshness test (head_sha and a stat-based fingerprint) would call it stale at once: committing
the digest moves HEAD, and a checkout elsewhere has other mtimes. So the override records the
workspace manifest (strategy, source, ref, head_sha, created_at, has_history,
is_shallow, notes, plus the stat-based fingerprint) and a **content fingerprint**: a sha256 over
each selected file's path and git blob id (computed from the content for files git does not
hold unmodified), leaving out the overrides folder itself. The digest is stale when that
content fingerprint changes: after a commit that changes a file, not after committing the digest.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from promptkit.errors import WorkspaceError
from promptkit.hostfiles import (
    FileSelection,
    WorkspaceManifest,
    manifest_for_selection,
    read_workspace_bytes,
    select_files,
)
from promptkit.overrides import ProvenanceValue

CONTENT_FINGERPRINT = "content_fingerprint"
LEFT_OUT = "left_out"


def committed_provenance(
    manifest: WorkspaceManifest, *, workspace: Path, overrides_root: Path | None
) -> dict[str, ProvenanceValue]:
    """The provenance a GLOBAL digest stores: `manifest`'s fields, the folder left out of the
    content fingerprint (the overrides root, when inside the workspace) and that fingerprint."""
    fields: dict[str, ProvenanceValue] = {
        key: tuple(value) if isinstance(value, list) else value
        for key, value in json.loads(manifest.to_json()).items()
    }
    left_out = _inside(overrides_root, workspace) if overrides_root is not None else None
    if left_out is not None:
        fields[LEFT_OUT] = left_out
    fields[CONTENT_FINGERPRINT] = content_fingerprint(select_files(workspace), left_out=left_out)
    return fields


def recorded_manifest(provenance: Mapping[str, ProvenanceValue]) -> WorkspaceManifest | None:
    """The workspace manifest recorded in `provenance`, or None when it does not hold one."""
    document = {
        key: list(value) if isinstance(value, tuple) else value for key, value in provenance.items()
    }
    try:
        return WorkspaceManifest.from_json(json.dumps(document))
    except WorkspaceError:
        return None


def current_state(workspace: Path, *, left_out: str | None) -> tuple[WorkspaceManifest, str]:
    """The workspace's manifest now and its content fingerprint, from one file selection."""
    selection = select_files(workspace)
    return manifest_for_selection(selection), content_fingerprint(selection, left_out=left_out)


def content_fingerprint(selection: FileSelection, *, left_out: str | None) -> str:
    """sha256 hex over the sorted (path, git blob id) of the selected files, except those
    under `left_out` (a folder relative to the root)."""
    prefix = None if left_out is None else left_out.rstrip("/") + "/"
    digest = hashlib.sha256()
    for file in sorted(selection.files, key=lambda item: item.path):
        if prefix is not None and file.path.startswith(prefix):
            continue
        blob = file.blob_id or _blob_id(selection.root, file.path, file.size)
        digest.update(f"{file.path}\0{blob}\n".encode())
    return digest.hexdigest()


def _blob_id(root: Path, relative: str, size: int) -> str:
    """git's object id of the file's content, as `git hash-object` computes it."""
    try:
        content = read_workspace_bytes(root, relative, limit=size)
    except WorkspaceError:
        return "unreadable"
    return hashlib.sha1(b"blob %d\0" % len(content) + content, usedforsecurity=False).hexdigest()


def _inside(folder: Path, workspace: Path) -> str | None:
    relative = os.path.relpath(folder.resolve(), workspace.resolve())
    if relative == "." or relative.startswith(".."):
        return None
    return Path(relative).as_posix()
