"""Which files of a workspace promptkit may read: the listing, from names and `lstat` alone.

`select_files` lists the workspace the way its owner sees it: in a git work tree, what
`git ls-files --cached --others --exclude-standard` lists (tracked plus untracked, not ignored);
elsewhere, a directory walk (iterative, so depth costs no stack) that honours every `.gitignore`
(gitwildmatch semantics, via pathspec) and prunes VCS metadata and well-known cache/dependency
directories. No file's content is opened: listing 100,000 files costs one `lstat` each, and the
content is read later, on demand, through `promptkit.workspace.reading`.

Whatever the source, a file is always left out when it is:

- under `.git/`, or named with bytes that are not UTF-8 or with a control character such as a
  newline (no consumer could show or type it back faithfully);
- a credential file by name (`.env*`, `*.pem`, `*.key`, `id_rsa*`, `.npmrc`, ...);
- a symlink that resolves outside the root, a symlinked directory (never followed), or a file
  under one; a FIFO, socket or device (never opened, since opening a FIFO blocks);
- larger than the size cap, of a known binary format by its extension, deleted since git listed
  it, or unreadable; or left out by the caller's include/exclude globs (not counted).

Skipped files are counted by reason, so a digest can say what it left out. A file whose content
turns out binary (a NUL byte) is refused when it is read, not here.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from promptkit.errors import WorkspaceError
from promptkit.logging import get_logger
from promptkit.workspace._git import run_git, run_git_together
from promptkit.workspace.exclusions import (
    has_binary_suffix,
    is_credential_file_name,
    is_unsafe_name,
)
from promptkit.workspace.globs import PathFilter

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "FileSelection",
    "SkipReason",
    "WorkspaceFile",
    "resolve_workspace_root",
    "select_files",
]

_log = get_logger("promptkit.workspace")

DEFAULT_MAX_FILE_BYTES = 1024 * 1024

SkipReason = Literal[
    "binary",
    "credential",
    "missing",
    "non_utf8_name",
    "not_regular_file",
    "symlink_outside_root",
    "symlinked_directory",
    "too_large",
    "unreadable",
    "unsafe_name",
]


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """One selected file: its POSIX path relative to the root, size in bytes, and version.

    `blob_id` is git's object id when the file is tracked and unmodified; otherwise it is None
    and `mtime_ns` stands for the version (it is always recorded).
    """

    path: str
    size: int
    mtime_ns: int
    blob_id: str | None = None


@dataclass(frozen=True, slots=True)
class FileSelection:
    """The files of a workspace promptkit may read, and how many were left out, by reason."""

    root: Path
    files: tuple[WorkspaceFile, ...]
    skipped: tuple[tuple[SkipReason, int], ...]
    from_git: bool

    def skipped_count(self, reason: SkipReason) -> int:
        """How many files were left out for `reason`."""
        return dict(self.skipped).get(reason, 0)


# Pruned in a walk (git work trees rely on their own ignore rules instead).
_WALK_PRUNED_DIRECTORIES = frozenset(
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


def resolve_workspace_root(root: str | os.PathLike[str]) -> Path:
    """`root` as an absolute, symlink-free path; WorkspaceError when it is not a directory."""
    path = Path(root)
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise WorkspaceError(
            f"workspace {path} cannot be opened ({type(error).__name__}): "
            "pass the path of an existing directory"
        ) from None
    if not resolved.is_dir():
        raise WorkspaceError(f"workspace {path} is not a directory: pass the repository's root")
    return resolved


def select_files(
    root: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> FileSelection:
    """The listed text files of the workspace at `root`, sorted by path (see module doc).

    `include` and `exclude` are `PathGlob` patterns over paths relative to `root` (an exclude
    also leaves out everything under a directory it matches).
    """
    if max_file_bytes < 0:
        raise ValueError(f"max_file_bytes must be zero or more, got {max_file_bytes}")
    resolved = resolve_workspace_root(root)
    path_filter = PathFilter.of(include, exclude)
    listing = _git_listing(resolved)
    checker = _Checker(resolved, max_file_bytes)
    if listing is not None:
        for raw_path, blob_id in listing:
            checker.consider_listed(raw_path, blob_id, path_filter)
    else:
        for relative in _walk_directory(resolved, path_filter, checker):
            checker.consider_walked(relative)
    selection = FileSelection(
        root=resolved,
        files=tuple(sorted(checker.files, key=lambda file: file.path)),
        skipped=tuple(sorted(checker.skipped.items())),
        from_git=listing is not None,
    )
    _log.debug(
        "workspace_files_selected",
        root=str(resolved),
        files=len(selection.files),
        skipped=dict(selection.skipped),
        from_git=selection.from_git,
    )
    return selection


def _git_listing(root: Path) -> list[tuple[bytes, str | None]] | None:
    """(path, blob id or None) for every file git lists, or None outside a usable work tree."""
    probe = run_git(root, "rev-parse", "--is-inside-work-tree", "--show-prefix")
    if probe is None or not probe.startswith(b"true"):
        return None
    is_subdirectory = probe.split(b"\n")[1].strip() != b""
    cached, changed = run_git_together(
        root,
        ("ls-files", "-z", "--stage"),
        ("ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard"),
    )
    if cached is None or changed is None:
        return None
    versions: dict[bytes, str | None] = {}
    for record in cached.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, blob_id, stage = meta.split(b" ")
        # Unmerged entries (stage > 0) have no single blob; submodules are not files here.
        if mode == b"160000":
            continue
        versions[path] = blob_id.decode("ascii") if stage == b"0" else None
    for record in changed.split(b"\0"):
        if not record:
            continue
        tag, path = record[:1], record[2:]
        if tag == b"?":
            versions[path.rstrip(b"/")] = None
        elif tag == b"C" and path in versions:
            versions[path] = None
    if not versions and is_subdirectory and _is_ignored_by_git(root):
        # The directory sits inside a repository that ignores it: treat it as a plain tree.
        return None
    return list(versions.items())


def _is_ignored_by_git(root: Path) -> bool:
    return run_git(root, "check-ignore", "-q", ".") is not None


class _Checker:
    """Applies the exclusion rules to candidate paths and collects the survivors."""

    def __init__(self, root: Path, max_file_bytes: int) -> None:
        self.root = root
        self.root_text = str(root)
        self.max_file_bytes = max_file_bytes
        self.files: list[WorkspaceFile] = []
        self.skipped: Counter[SkipReason] = Counter()
        self._directory_is_real: dict[str, bool] = {"": True}

    def consider_listed(
        self, raw_path: bytes, blob_id: str | None, path_filter: PathFilter
    ) -> None:
        try:
            relative = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            self.skipped["non_utf8_name"] += 1
            return
        if not path_filter.allows(relative):
            return
        if is_unsafe_name(relative):
            self.skipped["unsafe_name"] += 1
            return
        parent = relative.rpartition("/")[0]
        if not self._is_real_directory(parent):
            self.skipped["symlinked_directory"] += 1
            return
        full = f"{self.root_text}/{relative}"
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            self.skipped["missing"] += 1
            return
        except OSError:
            self.skipped["unreadable"] += 1
            return
        self._consider(relative, full, info, blob_id)

    def consider_walked(self, relative: str) -> None:
        full = f"{self.root_text}/{relative}"
        try:
            info = os.lstat(full)
        except OSError:
            self.skipped["unreadable"] += 1
            return
        self._consider(relative, full, info, None)

    def _consider(
        self, relative: str, full: str, info: os.stat_result, blob_id: str | None
    ) -> None:
        name = relative.rpartition("/")[2]
        # git never lists its own metadata and the walk prunes `.git` directories; a `.git`
        # file (a linked worktree's pointer) is all that is left to refuse.
        if name == ".git":
            return
        if is_credential_file_name(name):
            self.skipped["credential"] += 1
            return
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(full)
            if not _is_inside(target, self.root_text):
                self.skipped["symlink_outside_root"] += 1
                return
            if is_credential_file_name(target.rpartition("/")[2]):
                self.skipped["credential"] += 1
                return
            try:
                info = os.lstat(target)
            except OSError:
                self.skipped["missing"] += 1
                return
            if stat.S_ISDIR(info.st_mode):
                self.skipped["symlinked_directory"] += 1
                return
            # A symlink's git blob is its target path, not the content a read returns.
            blob_id = None
        if not stat.S_ISREG(info.st_mode):
            self.skipped["not_regular_file"] += 1
            return
        if info.st_size > self.max_file_bytes:
            self.skipped["too_large"] += 1
            return
        if has_binary_suffix(name):
            self.skipped["binary"] += 1
            return
        self.files.append(
            WorkspaceFile(
                path=relative, size=info.st_size, mtime_ns=info.st_mtime_ns, blob_id=blob_id
            )
        )

    def _is_real_directory(self, relative: str) -> bool:
        known = self._directory_is_real.get(relative)
        if known is not None:
            return known
        parent = relative.rpartition("/")[0]
        is_real = self._is_real_directory(parent)
        if is_real:
            try:
                is_real = stat.S_ISDIR(os.lstat(f"{self.root_text}/{relative}").st_mode)
            except OSError:
                is_real = False
        self._directory_is_real[relative] = is_real
        return is_real


def _walk_directory(root: Path, path_filter: PathFilter, checker: _Checker) -> Iterator[str]:
    """Relative paths of the non-directory entries that no `.gitignore` ignores and the filter
    allows. Symlinked directories are yielded as entries, never descended into."""
    # (directory prefix, the .gitignore specs that apply inside it); a stack, not recursion.
    pending: list[tuple[str, list[tuple[str, GitIgnoreSpec]]]] = [("", [])]
    while pending:
        prefix, specs = pending.pop()
        try:
            with os.scandir(f"{root}/{prefix}") as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            checker.skipped["unreadable"] += 1
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
                checker.skipped["non_utf8_name"] += 1
                continue
            relative = f"{prefix}{name}"
            try:
                is_directory = entry.is_dir(follow_symlinks=False)
            except OSError:
                checker.skipped["unreadable"] += 1
                continue
            if is_directory:
                if not (
                    name in _WALK_PRUNED_DIRECTORIES
                    or _is_ignored(relative + "/", specs)
                    or path_filter.excludes_directory(relative)
                ):
                    subdirectories.append(relative + "/")
            elif not _is_ignored(relative, specs) and path_filter.allows(relative):
                if is_unsafe_name(relative):
                    checker.skipped["unsafe_name"] += 1
                else:
                    yield relative
        pending.extend((directory, specs) for directory in reversed(subdirectories))


def _load_gitignore(path: str) -> GitIgnoreSpec | None:
    from pathspec import GitIgnoreSpec

    try:
        with Path(path).open("rb") as handle:
            text = handle.read(DEFAULT_MAX_FILE_BYTES).decode("utf-8", errors="replace")
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


def _is_inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
