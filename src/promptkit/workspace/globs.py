"""`PathGlob`: the one glob syntax of workspaces (`*` within a segment, `**` across segments).

Mount include/exclude globs, `promptkit optimize --include/--exclude` and the `vfs_glob` and
`vfs_grep` tools all match relative POSIX paths with it, so a glob means the same everywhere.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass

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
        segments, closures = self.segments, self.closures
        end = len(segments)
        states = closures[0]
        for name in relative_path.split("/"):
            advanced: set[int] = set()
            for state in states:
                if state == end:
                    continue
                segment = segments[state]
                if segment is None:
                    advanced |= closures[state]
                elif segment.match(name):
                    advanced |= closures[state + 1]
            if not advanced:
                return False
            states = frozenset(advanced)
        return end in states


@dataclass(frozen=True)
class PathFilter:
    """Include and exclude globs together, over paths relative to a root.

    A file passes when it matches some include (or there are none) and no exclude matches it or
    one of its parent directories: `--exclude build` leaves out everything under `build/`, as a
    `.gitignore` line would.
    """

    includes: tuple[PathGlob, ...] = ()
    excludes: tuple[PathGlob, ...] = ()

    @classmethod
    def of(cls, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> PathFilter:
        return cls(
            tuple(PathGlob.compile(glob) for glob in include),
            tuple(PathGlob.compile(glob) for glob in exclude),
        )

    def allows(self, relative_path: str) -> bool:
        """Whether the file at `relative_path` passes the includes and excludes."""
        if self.includes and not any(glob.matches(relative_path) for glob in self.includes):
            return False
        return not self.excludes_directory(relative_path)

    def excludes_directory(self, relative_path: str) -> bool:
        """Whether an exclude matches `relative_path` or one of its parents, so a walk need not
        enter it."""
        if not self.excludes:
            return False
        parts = relative_path.split("/")
        return any(
            glob.matches("/".join(parts[:depth]))
            for depth in range(1, len(parts) + 1)
            for glob in self.excludes
        )


def literal_glob(relative_path: str) -> str:
    """A glob matching exactly `relative_path`, its `*`, `?` and `[` taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", relative_path)
