"""The listing of a directory that is not a git work tree: a walk that honours `.gitignore`.

The walk is iterative (depth costs no Python frames), reads every regular `.gitignore` on its
way (gitwildmatch semantics, via pathspec; the deepest file with a matching pattern decides, as
in git), prunes VCS metadata and well-known cache and dependency folders, and never descends
into a symlinked folder (it is yielded as an entry, for the caller to refuse). Names it cannot
use are reported through `leave_out`, with the folder they were found in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from promptkit.hostfiles._exclusions import is_unsafe_name
from promptkit.hostfiles._globs import PathFilter

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

    from promptkit.hostfiles._listing import SkipReason

__all__ = ["LeaveOut", "walk_directory"]

# (why, the path it concerns, whether that path is the folder the reason applies to)
LeaveOut = Callable[["SkipReason", str, bool], None]

_GITIGNORE_READ_LIMIT = 1024 * 1024

_PRUNED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "__pycache__",
        "node_modules",
        ".venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


# One stack walk: each entry kind (file, folder, symlink, ignored, unreadable) is a path.
def walk_directory(root: Path, path_filter: PathFilter, leave_out: LeaveOut) -> Iterator[str]:  # noqa: C901
    """Relative paths of the non-directory entries that no `.gitignore` ignores and the filter
    allows. Symlinked directories are yielded as entries, never descended into."""
    # (directory prefix, the .gitignore specs that apply inside it); a stack, not recursion.
    pending: list[tuple[str, list[tuple[str, GitIgnoreSpec]]]] = [("", [])]
    while pending:
        prefix, specs = pending.pop()
        folder = prefix.rstrip("/")
        try:
            with os.scandir(f"{root}/{prefix}") as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            leave_out("unreadable", folder, True)
            continue
        # Only a regular .gitignore is read: one that is a FIFO would block the walk.
        own_spec = next(
            (
                _load_gitignore(entry.path)
                for entry in entries
                if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False)
            ),
            None,
        )
        if own_spec is not None:
            specs = [*specs, (prefix, own_spec)]
        subdirectories: list[str] = []
        for entry in entries:
            name = entry.name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                leave_out("non_utf8_name", folder, True)
                continue
            relative = f"{prefix}{name}"
            try:
                is_directory = entry.is_dir(follow_symlinks=False)
            except OSError:
                leave_out("unreadable", folder, True)
                continue
            if is_directory:
                if not (
                    name in _PRUNED_DIRECTORIES
                    or _is_ignored(relative + "/", specs)
                    or path_filter.excludes_directory(relative)
                ):
                    subdirectories.append(relative + "/")
            elif not _is_ignored(relative, specs) and path_filter.allows(relative):
                if is_unsafe_name(relative):
                    leave_out("unsafe_name", relative, False)
                else:
                    yield relative
        pending.extend((directory, specs) for directory in reversed(subdirectories))


def _load_gitignore(path: str) -> GitIgnoreSpec | None:
    from pathspec import GitIgnoreSpec

    try:
        with Path(path).open("rb") as handle:
            text = handle.read(_GITIGNORE_READ_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None
    return GitIgnoreSpec.from_lines(text.splitlines())


def _is_ignored(relative: str, specs: list[tuple[str, GitIgnoreSpec]]) -> bool:
    # The deepest .gitignore with a matching pattern decides, as in git.
    for base, spec in reversed(specs):
        result = spec.check_file(relative[len(base) :])
        if result.include is not None:
            return result.include
    return False
