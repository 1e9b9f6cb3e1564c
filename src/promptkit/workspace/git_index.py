"""What git already knows about a work tree's files, so a listing needs no `lstat` per file.

Three `git ls-files` run side by side: the index with the stat data git cached for each entry
(`-z -v -s --debug`), the tracked files changed since (`-z --modified`, deleted ones included)
and the untracked files no ignore rule covers (`-z --others --exclude-standard`). An index
entry that git reports unchanged is, as far as a listing cares, what the index says: a regular
file (its mode), its blob id, and its size, since git decided it was unchanged by comparing the
file's current `lstat` with exactly that cached stat data. Those entries are `vouched`; every
other path is left for the caller to `lstat`:

- entries git does not compare (skip-worktree and assume-unchanged: `-v` tags them), changed,
  deleted or unmerged entries, and symlinks (a listing resolves them);
- entries whose cached size is 0 (git zeroes the size of racily clean entries, so 0 proves
  nothing);
- untracked files.

Submodules (gitlinks) are not files and are left out. `--debug` output is written for people,
though its shape has not changed since git 1.7; when it does not parse, no entry is vouched for
and every path is left to `lstat`. Paths are decoded with `surrogateescape`, so a name that is
not UTF-8 survives (with lone surrogates) for the caller to refuse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from promptkit.workspace._git import RunningGit, run_git_together, start_git_together

__all__ = ["GitListing", "RunningGitListing", "start_git_listing", "vouched_entries"]

# The start of a head git vouches for: tag H (cached, compared), a regular file's mode.
_CLEAN_REGULAR = frozenset({"H 100644 ", "H 100755 "})
_GITLINK_MODE = "160000"

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


def start_git_listing(root: Path) -> RunningGitListing:
    """Start listing `root` with git; `result()` waits for it."""
    return RunningGitListing(
        root,
        start_git_together(
            root,
            ("ls-files", "-z", "-v", "-s", "--debug"),
            ("ls-files", "-z", "--modified"),
            ("ls-files", "-z", "--others", "--exclude-standard"),
        ),
    )


@dataclass(frozen=True)
class RunningGitListing:
    """A git listing under way in other processes (see `start_git_listing`)."""

    root: Path
    running: RunningGit

    def result(self) -> GitListing | None:
        """The listing, waited for; None when git could not list the work tree."""
        # The index is parsed while git still compares the work tree with it and looks for
        # untracked files: on a large tree, those two take longer than reading the index.
        indexed = self.running.output(0)
        listing = None if indexed is None else vouched_entries(indexed)
        changed, untracked = self.running.output(1), self.running.output(2)
        if indexed is None or changed is None or untracked is None:
            return None
        if listing is None:
            # The index could not be read as expected: nothing is vouched for, all is stat-ed.
            plain = run_git_together(self.root, ("ls-files", "-z", "-s"))[0]
            if plain is None:
                return None
            listing = _stat_every_entry(plain)
        changed_paths = frozenset(_decoded(changed))
        for path in changed_paths:
            # A changed entry is stat-ed, with no blob id: its content has moved on.
            listing.to_stat[path] = None
        _drop_changed(listing, changed_paths)
        for path in _decoded(untracked):
            # An untracked nested repository is listed as "dir/"; the caller's stat says so.
            listing.to_stat[path.rstrip("/")] = None
        return listing


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
        if mode != _GITLINK_MODE:
            listing.to_stat[head[match.end() :]] = blob_id if stage == "0" else None
    return listing


def _stat_every_entry(output: bytes) -> GitListing:
    """The entries of `git ls-files -z -s`, each left to stat."""
    listing = GitListing([], [], [], [], {})
    for record in _decoded(output):
        meta, _, path = record.partition("\t")
        mode, blob_id, stage = meta.split(" ")
        if mode != _GITLINK_MODE:
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
