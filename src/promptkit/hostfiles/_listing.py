"""Which files of a workspace promptkit may read: the listing, from names and `lstat` alone.

`select_files` lists the workspace the way its owner sees it: in a git work tree, what
`git ls-files --cached --others --exclude-standard` lists (tracked plus untracked, not ignored);
elsewhere, a directory walk (`promptkit.hostfiles._walk`) that honours every `.gitignore`. No
file's content is opened, and in a git work tree no tracked file git reports unchanged is even
stat-ed: its kind, size and blob id come from the index (`promptkit.hostfiles._git_index`), so
listing 100,000 files costs about as much as reading their names once. Content is read later, on
demand, through `promptkit.hostfiles._reading`, which checks every rule below again when it opens
the file.

Whatever the source, a file is always left out when it is:

- under `.git/`, or named with bytes that are not UTF-8 or with a control character such as a
  newline (no consumer could show or type it back faithfully);
- a credential file by name (`.env*`, `*.pem`, `*.key`, `id_rsa*`, `.npmrc`, ...);
- a symlink that resolves outside the root, a symlinked directory (never followed), or a file
  under one; a FIFO, socket or device (never opened, since opening a FIFO blocks); a hard link
  (more than one name: the other may be outside the root) among the files that are stat-ed
  (the read path refuses every hard link, including a tracked file git vouches for);
- larger than the size cap, of a known binary format by its extension, deleted since git listed
  it, or unreadable; or left out by the caller's include/exclude globs (not counted).

Each file left out is recorded with its reason (`LeftOut`), so a digest can say what it left
out and `FileSelection.narrowed` can apply globs afterwards exactly as `select_files` would
have. A file whose content turns out binary (a NUL byte) is refused when it is read, not here.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import compress, count, repeat
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from promptkit._gc import collector_paused
from promptkit.errors import ArgumentValueError, WorkspaceError
from promptkit.hostfiles._exclusions import (
    could_be_left_out_by_name,
    has_binary_suffix,
    has_undecodable_name,
    is_credential_file_name,
    is_unsafe_name,
)
from promptkit.hostfiles._reading import is_inside

# How a listing is taken (git, its index, the walk, the globs) is imported when one is: a
# module that only needs this one's values (a selection's type, the size cap, a resolved root,
# as a workspace section does when a prompt is built) loads none of it.
if TYPE_CHECKING:
    from promptkit.hostfiles._git_index import GitListing, RunningGitListing
    from promptkit.hostfiles._globs import PathFilter

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "FileSelection",
    "LeftOut",
    "PendingSelection",
    "SkipReason",
    "WorkspaceFile",
    "begin_selection",
    "log_selection",
    "resolve_workspace_root",
    "select_files",
    "workspace_files",
]

DEFAULT_MAX_FILE_BYTES = 1024 * 1024

SkipReason = Literal[
    "binary",
    "credential",
    "hard_link",
    "missing",
    "non_utf8_name",
    "not_regular_file",
    "symlink_outside_root",
    "symlinked_directory",
    "too_large",
    "unreadable",
    "unsafe_name",
]


class WorkspaceFile(NamedTuple):
    """One selected file: its POSIX path relative to the root, size in bytes, and version.

    `blob_id` is git's object id when the file is tracked and unmodified; otherwise it is None
    and `mtime_ns` stands for the version (it is always recorded: for a file git vouches for,
    as the index records it). A named tuple rather than a dataclass: a listing makes one per
    file, and a tuple costs a third as much to make.
    """

    path: str
    size: int
    mtime_ns: int
    blob_id: str | None = None


def workspace_files(rows: Iterable[tuple[str, int, int, str | None]]) -> Iterator[WorkspaceFile]:
    """`WorkspaceFile._make` of each row without a Python call per file (C calls tuple.__new__)."""
    return map(partial(tuple.__new__, WorkspaceFile), rows)


class LeftOut(NamedTuple):
    """A path left out of the selection, and why.

    `path` is the file's, or, with `is_folder`, the folder the reason applies to (a folder that
    could not be read, or that holds a name which is not UTF-8); None when git listed a name
    that is not UTF-8 (where it sits cannot be told either).
    """

    reason: SkipReason
    path: str | None
    is_folder: bool = False


@dataclass(frozen=True)
class FileSelection:
    """The files of a workspace promptkit may read, and those left out, with their reasons;
    `max_file_bytes` is the size cap they were selected with."""

    root: Path
    files: tuple[WorkspaceFile, ...]
    left_out: tuple[LeftOut, ...]
    from_git: bool
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    @cached_property
    def total_bytes(self) -> int:
        """The selected files' sizes added up."""
        return sum(map(itemgetter(1), self.files))  # no Python step per file

    @cached_property
    def skipped(self) -> tuple[tuple[SkipReason, int], ...]:
        """How many files were left out, by reason, sorted by reason."""
        return tuple(sorted(Counter(entry.reason for entry in self.left_out).items()))

    def skipped_count(self, reason: SkipReason) -> int:
        """How many files were left out for `reason`."""
        return dict(self.skipped).get(reason, 0)

    def narrowed(self, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> FileSelection:
        """This selection with `include` and `exclude` applied: what `select_files` with those
        globs would have selected, without listing the workspace again."""
        from promptkit.hostfiles._globs import PathFilter

        path_filter = PathFilter.of(include, exclude)
        if path_filter.is_empty:
            return self
        allows = path_filter.allows
        is_allowed = path_filter.allows_each(list(map(itemgetter(0), self.files)))
        return FileSelection(
            root=self.root,
            files=tuple(compress(self.files, is_allowed)),
            left_out=tuple(
                entry
                for entry in self.left_out
                if entry.path is None
                or (
                    not (entry.path and path_filter.excludes_directory(entry.path))
                    if entry.is_folder
                    else allows(entry.path)
                )
            ),
            from_git=self.from_git,
            max_file_bytes=self.max_file_bytes,
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
    return begin_selection(
        root, max_file_bytes=max_file_bytes, include=include, exclude=exclude
    ).result()


def begin_selection(
    root: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    one_git_process: bool = False,
) -> PendingSelection:
    """`select_files`, in two steps: in a git work tree, git starts listing `root` in other
    processes now (`start_git_listing` says when `one_git_process` helps), and `result()`
    collects the listing and applies the rules. A caller with work of its own (importing a
    provider's SDK) does it in between, on another core."""
    from promptkit.hostfiles._git_index import start_git_listing
    from promptkit.hostfiles._globs import PathFilter

    if max_file_bytes < 0:
        raise ArgumentValueError(f"max_file_bytes must be zero or more, got {max_file_bytes}")
    resolved = resolve_workspace_root(root)
    return PendingSelection(
        root=resolved,
        max_file_bytes=max_file_bytes,
        path_filter=PathFilter.of(include, exclude),
        git=start_git_listing(resolved, one_git_process=one_git_process),
    )


@dataclass(frozen=True)
class PendingSelection:
    """A selection under way (see `begin_selection`)."""

    root: Path
    max_file_bytes: int
    path_filter: PathFilter
    git: RunningGitListing | None

    def result(self) -> FileSelection:
        """The selection: the listing waited for, every rule applied (and logged at debug)."""
        selection = self.unlogged_result()
        log_selection(selection)
        return selection

    def unlogged_result(self) -> FileSelection:
        """`result` without its debug record: for a listing helper process, which has no
        logging set up and leaves the record to the process it answers (importing structlog
        would cost it a tenth of a second)."""
        from promptkit.hostfiles._walk import walk_directory

        checker = _Checker(self.root, self.max_file_bytes, self.path_filter)
        with collector_paused():
            listing = self._git_listing()
            if listing is not None:
                checker.take_vouched(listing)
                for path, blob_id in listing.to_stat.items():
                    checker.consider_listed(path, blob_id)
            else:
                for relative in walk_directory(self.root, self.path_filter, checker.leave_out):
                    checker.consider_walked(relative)
        # Vouched files come in index order and the rest after: sorting two runs is one merge.
        return FileSelection(
            root=self.root,
            files=tuple(sorted(checker.files)),
            left_out=tuple(checker.left_out_entries),
            from_git=listing is not None,
            max_file_bytes=self.max_file_bytes,
        )

    def _git_listing(self) -> GitListing | None:
        """What git lists, or None outside a usable work tree."""
        if self.git is None:
            return None
        listing = self.git.result()
        if listing is None:
            return None
        is_empty = not listing.paths and not listing.to_stat
        if is_empty and self.git.is_subdirectory and _is_ignored_by_git(self.root):
            # The directory sits inside a repository that ignores it: treat it as a plain tree.
            return None
        return listing


def log_selection(selection: FileSelection) -> None:
    """Write the debug record of a selection taken (its root, counts and source)."""
    # Imported here, not with this module: a listing helper process uses this module and never
    # logs, so it need not import structlog.
    from promptkit.logging import get_logger

    get_logger("promptkit.workspace").debug(
        "workspace_files_selected",
        root=str(selection.root),
        files=len(selection.files),
        skipped=dict(selection.skipped),
        from_git=selection.from_git,
    )


def _is_ignored_by_git(root: Path) -> bool:
    from promptkit.hostfiles._git import run_git

    return run_git(root, "check-ignore", "-q", ".") is not None


class _Checker:
    """Applies the exclusion rules to candidate paths and collects the survivors."""

    def __init__(self, root: Path, max_file_bytes: int, path_filter: PathFilter) -> None:
        self.root = root
        self.root_text = str(root)
        self.max_file_bytes = max_file_bytes
        self.path_filter = path_filter
        self.files: list[WorkspaceFile] = []
        self.left_out_entries: list[LeftOut] = []
        self._directory_is_real: dict[str, bool] = {"": True}

    def leave_out(self, reason: SkipReason, path: str | None, is_folder: bool = False) -> None:
        self.left_out_entries.append(LeftOut(reason, path, is_folder))

    def take_vouched(self, listing: GitListing) -> None:
        """The files git vouches for: only the name rules and the size cap apply (the index says
        each is a regular file of that size), and a folder on the way must be a real one."""
        # Every rule is first asked of whole columns at once (a `map` over C functions): the
        # few entries it may apply to are then taken one by one, in index order, and all the
        # others become files in one pass, with no Python call per entry.
        paths, sizes = listing.paths, listing.sizes
        parts = list(map(str.rpartition, paths, repeat("/")))
        parents = list(map(itemgetter(0), parts))
        names = list(map(itemgetter(2), parts))
        to_check = self._entries_to_check(paths, sizes, parents, names)
        rows = zip(paths, sizes, listing.mtimes_ns, listing.blob_ids, strict=True)
        if not to_check:
            self.files.extend(workspace_files(rows))
            return
        is_plain = [True] * len(paths)
        for index in to_check:
            is_plain[index] = False
        self.files.extend(workspace_files(compress(rows, is_plain)))
        for index in sorted(to_check):
            self._take_one_vouched(
                WorkspaceFile(
                    paths[index], sizes[index], listing.mtimes_ns[index], listing.blob_ids[index]
                ),
                parents[index],
                names[index],
            )

    def _entries_to_check(
        self, paths: list[str], sizes: list[int], parents: list[str], names: list[str]
    ) -> set[int]:
        """The positions of the vouched entries a rule may apply to (and a few more)."""
        if not self.path_filter.is_empty:
            return set(range(len(paths)))
        to_check = could_be_left_out_by_name(names)
        to_check.update(compress(count(), map(self.max_file_bytes.__lt__, sizes)))
        unreal = {folder for folder in set(parents) if not self._is_real_directory(folder)}
        if unreal:
            to_check.update(compress(count(), map(unreal.__contains__, parents)))
        # A control character or a byte that is not UTF-8 makes text unprintable: one test over
        # all the names at once, and only when it fails (rare) are they looked at one by one.
        if not "".join(paths).isprintable():
            to_check.update(index for index, path in enumerate(paths) if _is_unusual(path))
        return to_check

    def _take_one_vouched(self, file: WorkspaceFile, parent: str, name: str) -> None:
        path = file.path
        if _is_unusual(path):
            self.consider_listed(path, file.blob_id)
        elif not self.path_filter.allows(path):
            return
        elif not self._is_real_directory(parent):
            self.leave_out("symlinked_directory", path)
        elif is_credential_file_name(name):
            self.leave_out("credential", path)
        elif file.size > self.max_file_bytes:
            self.leave_out("too_large", path)
        elif has_binary_suffix(name):
            self.leave_out("binary", path)
        else:
            self.files.append(file)

    def consider_listed(self, relative: str, blob_id: str | None) -> None:
        if has_undecodable_name(relative):
            self.leave_out("non_utf8_name", None)
            return
        if not self.path_filter.allows(relative):
            return
        if is_unsafe_name(relative):
            self.leave_out("unsafe_name", relative)
            return
        parent = relative.rpartition("/")[0]
        if not self._is_real_directory(parent):
            self.leave_out("symlinked_directory", relative)
            return
        full = f"{self.root_text}/{relative}"
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            self.leave_out("missing", relative)
            return
        except OSError:
            self.leave_out("unreadable", relative)
            return
        self._consider(relative, full, info, blob_id)

    def consider_walked(self, relative: str) -> None:
        full = f"{self.root_text}/{relative}"
        try:
            info = os.lstat(full)
        except OSError:
            self.leave_out("unreadable", relative)
            return
        self._consider(relative, full, info, None)

    # The rules a path must pass, in the order the module docstring gives them: one return each.
    def _consider(  # noqa: C901
        self, relative: str, full: str, info: os.stat_result, blob_id: str | None
    ) -> None:
        name = relative.rpartition("/")[2]
        # git never lists its own metadata and the walk prunes `.git` directories; a `.git`
        # file (a linked worktree's pointer) is all that is left to refuse.
        if name == ".git":
            return
        if is_credential_file_name(name):
            self.leave_out("credential", relative)
            return
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(full)
            if not is_inside(target, self.root_text):
                self.leave_out("symlink_outside_root", relative)
                return
            if is_credential_file_name(target.rpartition("/")[2]):
                self.leave_out("credential", relative)
                return
            try:
                info = os.lstat(target)
            except OSError:
                self.leave_out("missing", relative)
                return
            if stat.S_ISDIR(info.st_mode):
                self.leave_out("symlinked_directory", relative)
                return
            # A symlink's git blob is its target path, not the content a read returns.
            blob_id = None
        if not stat.S_ISREG(info.st_mode):
            self.leave_out("not_regular_file", relative)
            return
        if info.st_nlink > 1:
            # Another name of this file may be outside the root: reading it would copy in an
            # outside file.
            self.leave_out("hard_link", relative)
            return
        if info.st_size > self.max_file_bytes:
            self.leave_out("too_large", relative)
            return
        if has_binary_suffix(name):
            self.leave_out("binary", relative)
            return
        self.files.append(
            WorkspaceFile(
                path=relative, size=info.st_size, mtime_ns=info.st_mtime_ns, blob_id=blob_id
            )
        )

    def _is_real_directory(self, relative: str) -> bool:
        """Whether `relative` and each folder above it is a folder, not a symlink to one."""
        # Iterative, so a file a thousand folders deep costs no Python frames.
        unknown: list[str] = []
        while relative not in self._directory_is_real:
            unknown.append(relative)
            relative = relative.rpartition("/")[0]
        is_real = self._directory_is_real[relative]
        for folder in reversed(unknown):  # outermost first: a folder's verdict decides below
            if is_real:
                try:
                    is_real = stat.S_ISDIR(os.lstat(f"{self.root_text}/{folder}").st_mode)
                except OSError:
                    is_real = False
            self._directory_is_real[folder] = is_real
        return is_real


def _is_unusual(path: str) -> bool:
    """Whether `path` needs the full checks of a listed name: not UTF-8, or unsafe to show."""
    return has_undecodable_name(path) or is_unsafe_name(path)
