"""What git already knows about a work tree's files, so a listing needs no `lstat` per file.

Three sources are read side by side: the index with the stat data git cached for each entry,
the tracked files changed since (`git ls-files -z --modified`, deleted ones included) and the
untracked files no ignore rule covers (`git ls-files -z --others --exclude-standard`), or both
from one git process, tagged (`one_git_process`). The index is read from its file when git
names it (`read_index_file`: versions 2 and 3 of a SHA-1 repository, the common case), else
printed by `git ls-files -z -v -s --debug`. An index entry that git reports unchanged is, as
far as a listing cares, what the index says: a regular file (its mode), its blob id, and its
size, since git decided it was unchanged by comparing the file's current `lstat` with exactly
that cached stat data. Those entries are `vouched`; every other path is left for the caller to
`lstat`:

- entries git does not compare (skip-worktree and assume-unchanged: `-v` tags them), changed,
  deleted or unmerged entries, and symlinks (a listing resolves them);
- entries whose cached size is 0 (git zeroes the size of racily clean entries, so 0 proves
  nothing);
- untracked files.

Submodules (gitlinks) are not files and are left out. `--debug` output is written for people,
though its shape has not changed since git 1.7; when it does not parse, no entry is vouched for
and every path is left to `lstat`. Reading the file saves git printing 200 bytes of text per
entry and this module parsing them: a tenth of a second of CPU for 100,000 files. Paths are
decoded with `surrogateescape`, so a name that is not UTF-8 survives (with lone surrogates) for
the caller to refuse.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from promptkit.hostfiles._git import RunningGit, run_git, start_git_together

__all__ = [
    "GitListing",
    "RunningGitListing",
    "read_index_file",
    "start_git_listing",
    "vouched_entries",
]

_CHANGED = ("ls-files", "-z", "--modified")
_UNTRACKED = ("ls-files", "-z", "--others", "--exclude-standard")
# Both in one process, one after the other, each path tagged: "C " changed (or deleted), "? "
# untracked.
_CHANGED_AND_UNTRACKED = ("ls-files", "-z", "-t", "--modified", "--others", "--exclude-standard")
_INDEX_DEBUG = ("ls-files", "-z", "-v", "-s", "--debug")

# The modes of a regular file git compares (plain, executable) and of a submodule, as numbers
# (the index file) and as `ls-files -s` prints them (octal text).
_REGULAR_MODES = frozenset({0o100644, 0o100755})
_GITLINK_MODE = 0o160000
# The start of a head git vouches for: tag H (cached, compared), a regular file's mode.
_CLEAN_REGULAR = frozenset(f"H {mode:o} " for mode in _REGULAR_MODES)
_GITLINK_MODE_TEXT = f"{_GITLINK_MODE:o}"

# The stat data `--debug` prints after each entry's NUL; the groups are its mtime
# ("seconds:nanoseconds") and size.
_DEBUG_BLOCK = re.compile(
    rb"\0  ctime: [^\n]*\n  mtime: (\d+:\d+)\n  dev: [^\n]*\n  uid: [^\n]*\n"
    rb"  size: (\d+)\t[^\n]*\n"
)
# `-v -s` head: tag, mode, object id (sha1 or sha256), stage, tab, path.
_HEAD = re.compile(r"[A-Za-z?] \d{6} (?:[0-9a-f]{40}|[0-9a-f]{64}) [0-3]\t")


@dataclass(frozen=True, slots=True)
class GitListing:
    """The files git lists for a work tree.

    `paths`, `sizes`, `mtimes_ns` and `blob_ids` are parallel lists (no object per file) of the
    vouched regular files, in index order. `to_stat` maps every other listed path to its blob id,
    or None when the file's content is not the indexed blob (changed, unmerged, untracked).
    """

    paths: list[str]
    sizes: list[int]
    mtimes_ns: list[int]
    blob_ids: list[str]
    to_stat: dict[str, str | None]


def start_git_listing(root: Path, *, one_git_process: bool = False) -> RunningGitListing | None:
    """Start listing `root` with git; `result()` waits for it. None when `root` is not in a git
    work tree (or git is missing).

    The changed and the untracked files are listed by two git processes side by side, or, with
    `one_git_process`, one after the other by one: for a caller that keeps a core busy
    meanwhile (a listing helper beside a command's imports), where a second git would take CPU
    from it on a two-core machine."""
    probe = run_git(
        root, "rev-parse", "--is-inside-work-tree", "--show-prefix", "--git-path", "index"
    )
    if probe is None or not probe.startswith(b"true\n"):
        return None
    lines = probe.split(b"\n")
    # "true", the folder's prefix in the work tree, the index file, and the final newline. A
    # prefix or a path with a newline makes more lines: git prints the index for itself then.
    index_file = root / os.fsdecode(lines[2]) if len(lines) == 4 else None
    commands: tuple[tuple[str, ...], ...] = (
        (_CHANGED_AND_UNTRACKED,) if one_git_process else (_CHANGED, _UNTRACKED)
    )
    if index_file is None:
        commands += (_INDEX_DEBUG,)
    running = start_git_together(root, *commands)
    return RunningGitListing(root, running, index_file, lines[1], one_git_process)


@dataclass(frozen=True)
class RunningGitListing:
    """A git listing under way in other processes (see `start_git_listing`)."""

    root: Path
    running: RunningGit
    index_file: Path | None
    """The index git named, read directly; None to have git print it (`--debug`)."""
    prefix: bytes
    """Where `root` is in the work tree: empty at its top, else a path ending in "/"."""
    in_one_process: bool = False
    """Whether one git process lists the changed and the untracked files, tagged."""

    @property
    def is_subdirectory(self) -> bool:
        """Whether `root` is below the top of its work tree."""
        return self.prefix != b""

    def result(self) -> GitListing | None:
        """The listing, waited for; None when git could not list the work tree."""
        # The index is read while git still compares the work tree with it and looks for
        # untracked files: on a large tree, those two take longer than reading the index.
        listing = self._index_listing()
        changes = self._changed_and_untracked()
        if listing is None or changes is None:
            return None
        changed, untracked = changes
        changed_paths = frozenset(changed)
        for path in changed_paths:
            # A changed entry is stat-ed, with no blob id: its content has moved on.
            listing.to_stat[path] = None
        _drop_changed(listing, changed_paths)
        for path in untracked:
            # An untracked nested repository is listed as "dir/"; the caller's stat says so.
            listing.to_stat[path.rstrip("/")] = None
        return listing

    def _changed_and_untracked(self) -> tuple[list[str], list[str]] | None:
        """The changed and the untracked paths, as git listed them; None when it could not."""
        if self.in_one_process:
            tagged = self.running.output(0)
            if tagged is None:
                return None
            changed: list[str] = []
            untracked: list[str] = []
            for record in _decoded(tagged):
                (untracked if record.startswith("?") else changed).append(record[2:])
            return changed, untracked
        changed_output, untracked_output = self.running.output(0), self.running.output(1)
        if changed_output is None or untracked_output is None:
            return None
        return _decoded(changed_output), _decoded(untracked_output)

    def _index_listing(self) -> GitListing | None:
        """The index's entries; None when git could not print them."""
        if self.index_file is None:
            indexed = self.running.output(1 if self.in_one_process else 2)
        else:
            try:
                listing = read_index_file(self.index_file.read_bytes(), self.prefix)
            except OSError:  # no index yet (nothing was ever added), or it cannot be read
                listing = None
            if listing is not None:
                return listing
            indexed = run_git(self.root, *_INDEX_DEBUG)
        if indexed is None:
            return None
        listing = vouched_entries(indexed)
        if listing is not None:
            return listing
        # The index could not be read as expected: nothing is vouched for, all is stat-ed.
        plain = run_git(self.root, "ls-files", "-z", "-s")
        return None if plain is None else _stat_every_entry(plain)


def _decoded(output: bytes) -> list[str]:
    records = output.decode("utf-8", "surrogateescape").split("\0")
    records.pop()  # the text after the last NUL terminator is empty
    return records


def vouched_entries(output: bytes) -> GitListing | None:
    """The entries of `git ls-files -z -v -s --debug`, or None when it does not parse."""
    pieces = _DEBUG_BLOCK.split(output)
    # head, mtime, size; repeated, then the empty text after the last.
    if len(pieces) % 3 != 1 or pieces[-1]:
        return None
    listing = GitListing([], [], [], [], {})
    if len(pieces) == 1:
        return listing  # an empty index
    heads = b"\0".join(pieces[0:-1:3]).decode("utf-8", "surrogateescape").split("\0")
    first = _HEAD.match(heads[0])
    if first is None:
        return None
    # Every head has the same layout: "H 100644 <object id> 0\t<path>".
    path_at = first.end()
    blob_end = path_at - 3
    paths, sizes, mtimes_ns, blob_ids = (
        listing.paths,
        listing.sizes,
        listing.mtimes_ns,
        listing.blob_ids,
    )
    for head, mtime, size in zip(heads, pieces[1::3], pieces[2::3], strict=True):
        if head[:9] in _CLEAN_REGULAR and head[blob_end:path_at] == " 0\t" and size != b"0":
            paths.append(head[path_at:])
            sizes.append(int(size))
            seconds, _, nanoseconds = mtime.partition(b":")
            mtimes_ns.append(int(seconds) * 1_000_000_000 + int(nanoseconds))
            blob_ids.append(head[9:blob_end])
            continue
        match = _HEAD.match(head)
        if match is None:
            return None
        _, mode, blob_id, stage = head[: match.end() - 1].split(" ")
        if mode != _GITLINK_MODE_TEXT:
            listing.to_stat[head[match.end() :]] = blob_id if stage == "0" else None
    return listing


def _stat_every_entry(output: bytes) -> GitListing:
    """The entries of `git ls-files -z -s`, each left to stat."""
    listing = GitListing([], [], [], [], {})
    for record in _decoded(output):
        meta, _, path = record.partition("\t")
        mode, blob_id, stage = meta.split(" ")
        if mode != _GITLINK_MODE_TEXT:
            listing.to_stat[path] = blob_id if stage == "0" else None
    return listing


def _drop_changed(listing: GitListing, changed: frozenset[str]) -> None:
    """Take the entries git reports changed out of the vouched columns (they are in
    `to_stat`)."""
    if changed.isdisjoint(listing.paths):
        return
    kept = [index for index, path in enumerate(listing.paths) if path not in changed]
    listing.paths[:] = [listing.paths[index] for index in kept]
    listing.sizes[:] = [listing.sizes[index] for index in kept]
    listing.mtimes_ns[:] = [listing.mtimes_ns[index] for index in kept]
    listing.blob_ids[:] = [listing.blob_ids[index] for index in kept]


# -- the index file read directly (gitformat-index, versions 2 and 3, SHA-1) ------------------

_HEADER = struct.Struct(">4sII")
# After the ctime: mtime seconds and nanoseconds, (dev, ino), mode, (uid, gid), size, object id,
# flags; 62 bytes in all, the path follows (after two more bytes of flags when extended).
_ENTRY = struct.Struct(">8xII8xI8xI20sH")
_EXTENSION = struct.Struct(">4sI")
_CHECKSUM_BYTES = 20

_ASSUME_VALID = 0x8000
_EXTENDED = 0x4000
_STAGE = 0x3000
_NAME_LENGTH = 0x0FFF


# Git's index format, read field by field in one pass: each branch is a way the file can be
# damaged or a version of the format.
def read_index_file(data: bytes, prefix: bytes = b"") -> GitListing | None:  # noqa: C901, PLR0912
    """What `vouched_entries` gives for `git ls-files -z -v -s --debug` run in the folder
    `prefix` (as `git rev-parse --show-prefix` prints it: empty at the top of the work tree, else
    ending in "/"), read from the index file's bytes `data`; None when the index is not one read
    here: version 4 (prefix-compressed paths), a SHA-256 repository (its entries do not parse as
    SHA-1's), a split or sparse index (a required extension, named in lower case, that this does
    not follow), or bytes that do not parse to the last."""
    if len(data) < _HEADER.size + _CHECKSUM_BYTES:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        return None
    paths: list[bytes] = []
    sizes: list[int] = []
    mtimes_ns: list[int] = []
    object_ids: list[bytes] = []
    others: list[bytes] = []
    other_blob_ids: list[str | None] = []
    # Locals, not globals, in the loop: it runs once per file.
    unpack, cut, fixed = _ENTRY.unpack_from, len(prefix), _ENTRY.size
    not_vouched, regular, long_name = (
        _ASSUME_VALID | _EXTENDED | _STAGE,
        _REGULAR_MODES,
        _NAME_LENGTH,
    )
    position = _HEADER.size
    try:
        for _ in range(count):
            mtime_s, mtime_ns, mode, size, object_id, flags = unpack(data, position)
            name_at = position + fixed
            if flags & _EXTENDED:
                if version == 2:
                    return None
                name_at += 2
            length = flags & long_name
            # A name of 4095 bytes or more keeps 4095 there: its end is its NUL.
            end = name_at + length if length < long_name else data.find(b"\0", name_at + length)
            if end < name_at or data[end] != 0:
                return None
            name = data[name_at:end]
            # One to eight NULs end the path and pad the entry to a multiple of eight bytes.
            position += (end - position) // 8 * 8 + 8
            if cut:
                if not name.startswith(prefix):
                    continue
                name = name[cut:]
            if not flags & not_vouched and size and mode in regular:
                paths.append(name)
                sizes.append(size)
                mtimes_ns.append(mtime_s * 1_000_000_000 + mtime_ns)
                object_ids.append(object_id)
            elif mode != _GITLINK_MODE:
                others.append(name)
                other_blob_ids.append(None if flags & _STAGE else object_id.hex())
    except (struct.error, IndexError):  # an entry runs past the end of the file
        return None
    if not _ends_with_known_extensions(data, position):
        return None
    vouched, unvouched = _decoded_names(paths), _decoded_names(others)
    if len(vouched) != len(paths) or len(unvouched) != len(others):
        return None  # a NUL inside a name: not an index git wrote
    return GitListing(
        paths=vouched,
        sizes=sizes,
        mtimes_ns=mtimes_ns,
        blob_ids=list(map(bytes.hex, object_ids)),
        to_stat=dict(zip(unvouched, other_blob_ids, strict=True)),
    )


def _ends_with_known_extensions(data: bytes, position: int) -> bool:
    """Whether the extensions from `position` on end exactly at the checksum, none of them
    required (a lower-case name: `link` for a split index, `sdir` for a sparse one)."""
    end = len(data) - _CHECKSUM_BYTES
    while position < end:
        if end - position < _EXTENSION.size:
            return False
        name, size = _EXTENSION.unpack_from(data, position)
        if name[:1].islower():
            return False
        position += _EXTENSION.size + size
    return position == end


def _decoded_names(names: list[bytes]) -> list[str]:
    """`names` as text, all at once; a name that is not UTF-8 keeps its bytes as surrogates."""
    if not names:
        return []
    return b"\0".join(names).decode("utf-8", "surrogateescape").split("\0")
