"""`PathGlob`: the one glob syntax of workspaces (`*` within a segment, `**` across segments).

Mount include/exclude globs, `promptkit optimize --include/--exclude` and the `vfs_glob` and
`vfs_grep` tools all match relative POSIX paths with it, so a glob means the same everywhere.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import is_, itemgetter
from typing import cast

__all__ = ["PathFilter", "PathGlob", "literal_glob"]


@dataclass(frozen=True)
class PathGlob:
    """A path glob: `*`, `?` and `[...]` match within one path segment, `**` any segments.

    Each segment is matched with `fnmatch`'s translation (which cannot backtrack
    catastrophically) and `**` by a walk over pattern positions, so matching costs at most
    segments x path depth, whatever the pattern.
    """

    pattern: str
    segments: tuple[re.Pattern[str] | None, ...]
    # For each pattern position, the positions reachable from it by letting `**` match nothing.
    closures: tuple[frozenset[int], ...]

    @classmethod
    def compile(cls, pattern: str) -> PathGlob:
        parts = [part for part in pattern.split("/") if part not in ("", ".")]
        segments: list[re.Pattern[str] | None] = []
        for part in parts:
            if part == "**":
                if not segments or segments[-1] is not None:
                    segments.append(None)
            else:
                segments.append(re.compile(fnmatch.translate(part)))
        closures: list[frozenset[int]] = []
        for state in range(len(segments) + 1):
            reachable = {state}
            while state < len(segments) and segments[state] is None:
                state += 1
                reachable.add(state)
            closures.append(frozenset(reachable))
        return cls(pattern, tuple(segments), tuple(closures))

    def matches(self, relative_path: str) -> bool:
        """Whether `relative_path` (segments joined by `/`) matches the whole glob."""
        states = self.closures[0]
        for name in relative_path.split("/"):
            states = self.advance(states, name)
            if not states:
                return False
        return self.accepts(states)

    def advance(self, states: frozenset[int], name: str) -> frozenset[int]:
        """The pattern positions reachable from `states` by matching one path segment, `name`
        (empty when no path continuing this way can match)."""
        segments, closures = self.segments, self.closures
        advanced: set[int] = set()
        for state in states:
            if state == len(segments):
                continue
            segment = segments[state]
            if segment is None:
                advanced |= closures[state]
            elif segment.match(name):
                advanced |= closures[state + 1]
        return frozenset(advanced)

    def accepts(self, states: frozenset[int]) -> bool:
        """Whether a path that led to `states` matches the whole glob."""
        return len(self.segments) in states


@dataclass(frozen=True, slots=True)
class _FolderVerdict:
    """What the filter knows at a folder: whether an exclude leaves it out, and the globs that
    can still match below it, each with its pattern positions after the folder's path."""

    is_excluded: bool
    includes: tuple[tuple[PathGlob, frozenset[int]], ...]
    excludes: tuple[tuple[PathGlob, frozenset[int]], ...]
    # Set when a file's name cannot change the verdict: excluded, or nothing left to match.
    files_pass: bool | None = None


@dataclass(frozen=True)
class PathFilter:
    """Include and exclude globs together, over paths relative to a root.

    A file passes when it matches some include (or there are none) and no exclude matches it or
    one of its parent directories: `--exclude build` leaves out everything under `build/`, as a
    `.gitignore` line would. Verdicts for folders are remembered, so a path costs one step per
    glob still alive at its folder however deep it is: filtering a listing of 100,000 files
    costs about as much as a pass over their names.
    """

    includes: tuple[PathGlob, ...] = ()
    excludes: tuple[PathGlob, ...] = ()
    # One filter serves one listing, so the cache is bounded by that listing's folders.
    _folders: dict[str, _FolderVerdict] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def of(cls, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> PathFilter:
        return cls(
            tuple(PathGlob.compile(glob) for glob in include),
            tuple(PathGlob.compile(glob) for glob in exclude),
        )

    @property
    def is_empty(self) -> bool:
        """Whether the filter lets every path through (no globs)."""
        return not self.includes and not self.excludes

    def allows(self, relative_path: str) -> bool:
        """Whether the file at `relative_path` passes the includes and excludes."""
        if not self.includes and not self.excludes:
            return True
        folder, _, name = relative_path.rpartition("/")
        verdict = self._folders.get(folder) or self._verdict(folder)
        if verdict.files_pass is not None:
            return verdict.files_pass
        for glob, states in verdict.excludes:
            if glob.accepts(glob.advance(states, name)):
                return False
        if not self.includes:
            return True
        return any(glob.accepts(glob.advance(states, name)) for glob, states in verdict.includes)

    def allows_each(self, relative_paths: Sequence[str]) -> list[bool]:
        """`allows` of each of `relative_paths`, asked once per folder wherever the folder's
        verdict settles its files (an exclude of whole folders settles them all): a pass over
        100,000 paths in C functions rather than a Python call per path."""
        plain = self._plain_excludes()
        if plain is not None:
            # A path is left out only when an excluded path's text ends it or is followed in it
            # by a slash. Often neither is in the listing (promptkit's own folders are left out
            # wherever they are): one search of all the names, each ended by a NUL no name can
            # hold, says so, and every path passes.
            joined = "\0".join(relative_paths) + "\0"
            if not any(f"{path}/" in joined or f"{path}\0" in joined for path in plain):
                return [True] * len(relative_paths)
        folders = list(map(itemgetter(0), map(str.rpartition, relative_paths, repeat("/"))))
        settled = {folder: self._verdict(folder).files_pass for folder in set(folders)}
        verdicts: list[bool | None] = list(map(settled.__getitem__, folders))
        for index in compress(count(), map(is_, verdicts, repeat(None))):
            verdicts[index] = self.allows(relative_paths[index])
        return cast("list[bool]", verdicts)  # every None was replaced just above

    def _plain_excludes(self) -> tuple[str, ...] | None:
        """The excluded paths when this filter is only excludes of plain relative paths (no
        wildcard, no `[`); None otherwise."""
        if self.includes or not self.excludes:
            return None
        plain: list[str] = []
        for glob in self.excludes:
            parts = [part for part in glob.pattern.split("/") if part not in ("", ".")]
            if not parts or any(character in glob.pattern for character in "*?["):
                return None
            plain.append("/".join(parts))
        return tuple(plain)

    def excludes_directory(self, relative_path: str) -> bool:
        """Whether an exclude matches `relative_path` or one of its parents, so a walk need not
        enter it."""
        return bool(self.excludes) and self._verdict(relative_path).is_excluded

    def _verdict(self, folder: str) -> _FolderVerdict:
        """The verdict at `folder` ("" is the root), from the nearest folder above it that is
        known; iterative, so depth costs no Python frames."""
        known = self._folders
        unknown: list[str] = []
        while folder not in known and folder:
            unknown.append(folder)
            folder = folder.rpartition("/")[0]
        if not folder and folder not in known:
            known[""] = _FolderVerdict(
                is_excluded=False,
                includes=tuple((glob, glob.closures[0]) for glob in self.includes),
                excludes=tuple((glob, glob.closures[0]) for glob in self.excludes),
                files_pass=None if self.includes or self.excludes else True,
            )
        verdict = known[folder]
        for path in reversed(unknown):  # outermost first: each step extends its parent's
            name = path.rpartition("/")[2]
            verdict = _folder_verdict(verdict, name, has_includes=bool(self.includes))
            known[path] = verdict
        return verdict


def _folder_verdict(parent: _FolderVerdict, name: str, *, has_includes: bool) -> _FolderVerdict:
    """The verdict at the folder `name` inside the folder of `parent`."""
    if not parent.includes and not parent.excludes:
        return parent  # no glob left to match: every folder below is judged as this one
    includes = _advanced(parent.includes, name)
    excludes = _advanced(parent.excludes, name)
    is_excluded = parent.is_excluded or any(glob.accepts(states) for glob, states in excludes)
    files_pass: bool | None = None
    if is_excluded or (has_includes and not includes):
        files_pass = False
    elif not excludes and not has_includes:
        files_pass = True
    return _FolderVerdict(is_excluded, includes, excludes, files_pass)


def _advanced(
    globs: tuple[tuple[PathGlob, frozenset[int]], ...], name: str
) -> tuple[tuple[PathGlob, frozenset[int]], ...]:
    """Each glob moved past the segment `name`, without those that can no longer match."""
    moved = ((glob, glob.advance(states, name)) for glob, states in globs)
    return tuple((glob, states) for glob, states in moved if states)


def literal_glob(relative_path: str) -> str:
    """A glob matching exactly `relative_path`, its `*`, `?` and `[` taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", relative_path)
