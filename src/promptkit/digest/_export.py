"""Writing a workspace digest into an agent-instruction file (AGENTS.md, CLAUDE.md).

The digest goes inside a marked block. A later export replaces only that block, so whatever a
person wrote around it stays as they wrote it; a file without the block gets it appended. The
file is replaced atomically, and a symlinked file is written through its target only when that
target is inside the workspace.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from promptkit._durable import write_atomically
from promptkit.errors import WorkspaceError

__all__ = [
    "BLOCK_BEGIN",
    "BLOCK_END",
    "EXPORT_FILE_NAMES",
    "DigestExport",
    "ExportFormat",
    "export_digest",
    "with_digest_block",
]

ExportFormat = Literal["agents-md", "claude-md"]
EXPORT_FILE_NAMES: dict[ExportFormat, str] = {"agents-md": "AGENTS.md", "claude-md": "CLAUDE.md"}

BLOCK_BEGIN = "<!-- promptkit:digest:begin -->"
BLOCK_END = "<!-- promptkit:digest:end -->"
_BLOCK_NOTE = (
    "<!-- Written by `promptkit digest export`; edit outside this block: "
    "the next export replaces it. -->"
)


@dataclass(frozen=True, slots=True)
class DigestExport:
    """The file an export targets, and whether its content differs from what it should be."""

    path: Path
    is_outdated: bool
    content: str


def with_digest_block(existing: str | None, body: str) -> str:
    """`existing` with its digest block replaced by one holding `body` (appended if absent).

    Raises WorkspaceError when the markers are unbalanced, since replacing a guess could eat
    text a person wrote.
    """
    block = "\n".join(
        [BLOCK_BEGIN, _BLOCK_NOTE, "## Workspace digest", "", body.strip(), BLOCK_END]
    )
    if not existing:
        return block + "\n"
    begins, ends = existing.count(BLOCK_BEGIN), existing.count(BLOCK_END)
    if begins == 0 and ends == 0:
        return existing.rstrip("\n") + "\n\n" + block + "\n"
    start = existing.find(BLOCK_BEGIN)
    end = existing.find(BLOCK_END)
    if begins != 1 or ends != 1 or end < start:
        raise WorkspaceError(
            f"the promptkit digest block markers are unbalanced ({begins} begin, {ends} end):"
            f" keep exactly one `{BLOCK_BEGIN}` before one `{BLOCK_END}`, or delete both"
        )
    return existing[:start] + block + existing[end + len(BLOCK_END) :]


def export_digest(
    workspace: Path, body: str, export_format: ExportFormat, *, check: bool = False
) -> DigestExport:
    """Write `body` into the workspace's AGENTS.md or CLAUDE.md; with `check`, write nothing.

    Raises WorkspaceError when the file escapes the workspace, is not a regular file, cannot
    be read as UTF-8, or has unbalanced markers.
    """
    root = workspace.resolve()
    path = _target(root, root / EXPORT_FILE_NAMES[export_format])
    existing: str | None = None
    if path.exists():
        try:
            existing = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise WorkspaceError(
                f"{path} cannot be read as UTF-8 text ({error}): fix or remove it, then export"
            ) from None
    content = with_digest_block(existing, body)
    is_outdated = content != existing
    if is_outdated and not check:
        write_atomically(path, content)
    return DigestExport(path=path, is_outdated=is_outdated, content=content)


def _target(root: Path, path: Path) -> Path:
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise WorkspaceError(
            f"{path.name} in {root} links to {real}, outside the workspace: not written"
        )
    if real.exists() and not real.is_file():
        raise WorkspaceError(f"{real} is not a regular file: move it away, then export")
    return real
