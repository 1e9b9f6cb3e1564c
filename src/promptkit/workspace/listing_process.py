"""A workspace listing taken in a helper process, so a command's start and the listing share
two cores.

A model-driven `promptkit optimize` spends its first second importing (the CLI, the prompt
stack, a provider's SDK) and listing the workspace: `select_files` and the fingerprint of the
listing, per-name Python work that holds the interpreter's lock, so a thread cannot overlap it
with the imports. `start_listing_process(root)` runs exactly that work (`select_files` and
`fingerprint_files`) in a child Python process started before the imports, and `result()`
collects it: what the same calls in this process return, the same values.

The helper is only ever a head start. Whatever goes wrong with it (no interpreter to start, an
import that fails, a workspace that cannot be listed, output that does not decode), `result()`
lists the workspace in this process instead, so a failure surfaces as the same error, raised
here, as without a helper; on one core it is merely no faster. The result crosses as `marshal`
data of plain columns (two to three times quicker to write and read than JSON for 100,000
files): the interpreter at both ends is the same, and the bytes come from our own child, never
from outside. This module imports nothing heavy, since a command imports it first.

A caller that needs only the listing's size before its files (a model's first request
describes the workspace by counts) says which globs it will narrow the listing with
(`narrow`), and `summary()` then gives the workspace's manifest (its fingerprint, and git's facts
read while the helper listed) and the narrowed counts, which the helper writes ahead of the
files: the 100,000 records are decoded later, when a tool first needs them,
while the model thinks rather than before the request.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from promptkit.errors import WorkspaceError
from promptkit.workspace._git import start_into_file

if TYPE_CHECKING:
    from promptkit.workspace.files import FileSelection, SkipReason
    from promptkit.workspace.manifest import WorkspaceManifest

__all__ = ["ListingProcess", "ListingSummary", "start_listing_process"]

# marshal's version 2 keeps no table of the objects written (versions 3 and 4 do, to share
# repeated ones): 100,000 files' columns are written in 25 ms and read in 22 ms, against 40 ms
# and 30 ms with version 4, whose table costs more than its short form of ASCII text saves.
_MARSHAL_VERSION = 2


def start_listing_process(root: str | os.PathLike[str], max_file_bytes: int) -> ListingProcess:
    """Start listing the workspace at `root` in a child process; `result()` collects it."""
    try:
        resolved = Path(root).expanduser().resolve()
    except (OSError, RuntimeError):
        # A symlink loop, or no home folder for `~`: listing in this process says which.
        return ListingProcess(Path(root), max_file_bytes, None)
    package_parent = str(Path(__file__).resolve().parents[2])  # the folder holding promptkit
    command = [
        sys.executable,
        "-P",
        "-c",
        _CHILD,
        package_parent,
        str(resolved),
        str(max_file_bytes),
    ]
    # A file, not a pipe: the child writes its answer whenever it is done, unread. Its stdin
    # is a pipe that carries the globs of `narrow`.
    return ListingProcess(resolved, max_file_bytes, start_into_file(command, stdin=True))


# The child imports promptkit from where this process did: `-P` keeps the working folder off
# its path, and the folder holding promptkit goes first when this process had put it on its path
# at run time (an installed one is on the child's path already, behind the standard library).
_CHILD = (
    "import sys; sys.argv[1] in sys.path or sys.path.insert(0, sys.argv[1]);"
    " from promptkit.workspace.listing_process import serve_listing; serve_listing()"
)


@dataclass(frozen=True)
class ListingSummary:
    """What a listing helper says of its listing ahead of the files: where and how it was
    taken, the workspace's manifest as of the listing (`manifest_for_selection`: its
    fingerprint is `fingerprint_files` of every file), and the count, bytes and left-out
    reasons of the files the globs given to `narrow` allow."""

    root: Path
    from_git: bool
    manifest: WorkspaceManifest
    file_count: int
    total_bytes: int
    skipped: tuple[tuple[SkipReason, int], ...]


class ListingProcess:
    """A listing of `root` (resolved) under way in a child process; see the module doc."""

    def __init__(
        self,
        root: Path,
        max_file_bytes: int,
        child: tuple[subprocess.Popen[bytes], IO[bytes]] | None,
    ) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self._child = child
        self._narrowing: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self._summary: ListingSummary | None = None

    def lists(self, root: Path, max_file_bytes: int) -> bool:
        """Whether this is the listing `select_files(root, max_file_bytes=...)` would take."""
        return (root, max_file_bytes) == (self.root, self.max_file_bytes)

    def narrow(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        """Have `summary()` count the files `include` and `exclude` allow (as
        `FileSelection.narrowed` applies them); without this, it counts every file. Said once,
        before `summary()` or `result()`: later, it changes nothing."""
        if self._child is None or self._child[0].stdin is None or self._child[0].stdin.closed:
            return
        self._narrowing = (tuple(include), tuple(exclude))
        self._end_input(marshal.dumps(self._narrowing, _MARSHAL_VERSION))

    def summary(self) -> ListingSummary | None:
        """The helper's summary (see `ListingSummary`), waited for; None when the helper
        failed, and `result()` then lists here."""
        if self._summary is None and self._child is not None:
            output = self._output()
            try:
                self._summary = self._decoded_summary(output) if output is not None else None
            except (EOFError, TypeError, ValueError, WorkspaceError):
                self._summary = None
            if self._summary is None:
                self.close()
        return self._summary

    def result(self) -> tuple[FileSelection, str]:
        """The selection and its fingerprint, as `select_files` and `fingerprint_files` give
        them; taken in this process when the child failed (raising what they raise)."""
        from promptkit.workspace.files import log_selection, select_files
        from promptkit.workspace.manifest import fingerprint_files

        summary = self.summary()
        selection = self._decoded_files(summary) if summary is not None else None
        if selection is not None and summary is not None and summary.manifest.fingerprint:
            log_selection(selection)
            return selection, summary.manifest.fingerprint
        selection = select_files(self.root, max_file_bytes=self.max_file_bytes)
        return selection, fingerprint_files(selection.files)

    def close(self) -> None:
        """Stop the child if it is still running (its listing is no longer wanted)."""
        if self._child is None:
            return
        process, output = self._child
        self._child = None
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdin is not None:
            process.stdin.close()
        output.close()

    def __enter__(self) -> ListingProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _end_input(self, data: bytes = b"") -> None:
        """Write `data` to the child's stdin and close it: the child reads stdin to its end."""
        assert self._child is not None
        stdin = self._child[0].stdin
        if stdin is None or stdin.closed:
            return
        try:
            stdin.write(data)
            stdin.close()
        except OSError:
            pass  # the child is gone, and its exit status says so

    def _output(self) -> IO[bytes] | None:
        """The child's output from its start, once it has exited; None when it failed."""
        assert self._child is not None
        process, output = self._child
        self._end_input()
        process.wait()
        if process.returncode != 0:
            return None
        output.seek(0)
        return output

    def _decoded_summary(self, output: IO[bytes]) -> ListingSummary | None:
        from promptkit.workspace.manifest import WorkspaceManifest

        root, from_git, manifest, narrowing, counts = marshal.load(output)
        file_count, total_bytes, skipped = counts
        summary = ListingSummary(
            Path(root),
            from_git,
            WorkspaceManifest.from_json(manifest),
            file_count,
            total_bytes,
            tuple(map(tuple, skipped)),
        )
        if summary.root != self.root or narrowing != self._narrowing:
            return None
        return summary

    def _decoded_files(self, summary: ListingSummary) -> FileSelection | None:
        """The files, which follow the summary; None when they do not decode."""
        from promptkit.workspace.files import (
            FileSelection,
            LeftOut,
            collector_paused,
            workspace_files,
        )

        if self._child is None:
            return None  # closed since the summary: listed again here
        try:
            paths, sizes, mtimes, blob_ids, left_out = marshal.load(self._child[1])
            with collector_paused():
                rows = zip(paths, sizes, mtimes, blob_ids, strict=True)
                return FileSelection(
                    root=summary.root,
                    files=tuple(workspace_files(rows)),
                    left_out=tuple(map(LeftOut._make, left_out)),
                    from_git=summary.from_git,
                    max_file_bytes=self.max_file_bytes,
                )
        except (EOFError, TypeError, ValueError):
            return None
        finally:
            self.close()


def serve_listing() -> None:
    """The child's side: list `sys.argv[2]` with the size cap `sys.argv[3]`, read the globs of
    `narrow` from stdin, and write the summary, then the files, to stdout as marshal data."""
    # Whatever else would be printed goes to stderr: stdout carries the answer alone.
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from promptkit.workspace.files import begin_selection, collector_paused

    pending = begin_selection(sys.argv[2], max_file_bytes=int(sys.argv[3]))
    from promptkit.workspace.manifest import begin_manifest, fingerprint_files

    pending_manifest = begin_manifest(pending.root)
    selection = pending.unlogged_result()
    narrowing = _narrowing(sys.stdin.buffer.read())
    narrowed = selection.narrowed(*narrowing)
    with collector_paused():
        counts = (len(narrowed.files), narrowed.total_bytes, narrowed.skipped)
        fingerprint = fingerprint_files(selection.files)
        manifest = pending_manifest.result(from_git=selection.from_git, fingerprint=fingerprint)
        summary = (
            str(selection.root),
            selection.from_git,
            manifest.to_json(),
            narrowing,
            counts,
        )
        answer.write(marshal.dumps(summary, _MARSHAL_VERSION))
        # The files as four columns (path, size, mtime, blob id): a pass per column is a third
        # the cost of `zip(*files)`, which unpacks 100,000 arguments.
        columns = [tuple(map(itemgetter(column), selection.files)) for column in range(4)]
        left_out = [tuple(entry) for entry in selection.left_out]
        answer.write(marshal.dumps((*columns, left_out), _MARSHAL_VERSION))
    answer.close()


def _narrowing(data: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The include and exclude globs `narrow` sent; none when it sent nothing, or something
    that does not decode (the summary then names no globs, and the caller, which sent some,
    lists in its own process)."""
    try:
        include, exclude = marshal.loads(data)
        globs: tuple[Any, ...] = (*include, *exclude)
    except (EOFError, TypeError, ValueError):
        return (), ()
    if not all(isinstance(glob, str) for glob in globs):
        return (), ()
    return tuple(include), tuple(exclude)
