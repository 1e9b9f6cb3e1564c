"""A workspace listing taken in a helper process, so a command's start and the listing share
two cores.

A model-driven `promptkit optimize` spends its first second importing (the CLI, the prompt
stack, a provider's SDK) and listing the workspace: `select_files` and the fingerprint of the
listing, per-name Python work that holds the interpreter's lock, so a thread cannot overlap it
with the imports. `start_listing_process(root)` runs exactly that work (`select_files`, and
`manifest_for_selection` with its `fingerprint_files`) in a child Python process started before
the imports, and `result()` and `manifest()` collect it: what the same calls in this process
return, the same values.

The helper is only ever a head start. Whatever goes wrong with it (no interpreter to start, an
import that fails, a workspace that cannot be listed, output that does not decode), `result()`
lists the workspace in this process instead, so a failure surfaces as the same error, raised
here, as without a helper; on one core it is merely no faster. The files cross as `marshal`
data of plain columns (two to three times quicker to write and read than JSON for 100,000
files): the interpreter at both ends is the same, and the bytes come from our own child, never
from outside. This module imports nothing heavy, since a command imports it first.

A model's first request describes the workspace by counts alone. So the caller says which globs
it will narrow the listing with (`narrow`), and the helper answers in two parts: first, down a
pipe, the counts of the files those globs allow (`summary()`), as soon as it has listed; then,
into a file, the manifest, whose fingerprint and git facts it works out while the caller sends
its request, and after it the files. The 100,000 records are decoded when a tool first needs a
path, while the model thinks, and not at all for a caller that wants only the manifest.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from promptkit.errors import WorkspaceError

if TYPE_CHECKING:
    from promptkit.hostfiles._listing import FileSelection, SkipReason
    from promptkit.hostfiles._manifest import WorkspaceManifest

__all__ = ["ListingProcess", "ListingSummary", "start_listing_process"]

# marshal's version 2 keeps no table of the objects written (versions 3 and 4 do, to share
# repeated ones): 100,000 files' columns are written in 25 ms and read in 22 ms, against 40 ms
# and 30 ms with version 4, whose table costs more than its short form of ASCII text saves.
_MARSHAL_VERSION = 2


@dataclass(frozen=True)
class ListingSummary:
    """What a listing helper says of its listing ahead of the files: where and how it was
    taken (through git, with which size cap), and the count, bytes and left-out reasons of the
    files the globs given to `narrow` allow."""

    root: Path
    from_git: bool
    max_file_bytes: int
    file_count: int
    total_bytes: int
    skipped: tuple[tuple[SkipReason, int], ...]


def start_listing_process(root: str | os.PathLike[str], max_file_bytes: int) -> ListingProcess:
    """Start listing the workspace at `root` in a child process; `result()` collects it."""
    try:
        resolved = Path(root).expanduser().resolve()
    except (OSError, RuntimeError):
        # A symlink loop, or no home folder for `~`: listing in this process says which.
        return ListingProcess(Path(root), max_file_bytes)
    started = _start_child(resolved, max_file_bytes)
    if started is None:
        return ListingProcess(resolved, max_file_bytes)
    return ListingProcess(resolved, max_file_bytes, *started)


def _start_child(
    root: Path, max_file_bytes: int
) -> tuple[subprocess.Popen[bytes], IO[bytes]] | None:
    """The helper, started: its stdin takes the globs of `narrow`, its stdout gives the summary,
    and the files go to an unnamed temporary file it inherits (written whenever it is done,
    unread, where a pipe would hold it up until the caller reads). None where a child cannot
    inherit a file descriptor by number (not POSIX: Windows), and the caller lists itself."""
    if os.name != "posix":
        return None
    try:
        # Kept open past this call: `ListingProcess.close` closes it.
        files = tempfile.TemporaryFile()  # noqa: SIM115
    except OSError:
        return None
    package_parent = str(Path(__file__).resolve().parents[2])  # the folder holding promptkit
    command = [sys.executable, "-P", "-c", _CHILD, package_parent, str(root), str(max_file_bytes)]
    try:
        process = subprocess.Popen(
            [*command, str(files.fileno())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pass_fds=(files.fileno(),),
        )
    except (OSError, ValueError):
        files.close()
        return None
    return process, files


# The child imports promptkit from where this process did: `-P` keeps the working folder off
# its path, and the folder holding promptkit goes first when this process had put it on its path
# at run time (an installed one is on the child's path already, behind the standard library).
_CHILD = (
    "import sys; sys.argv[1] in sys.path or sys.path.insert(0, sys.argv[1]);"
    " from promptkit.hostfiles._listing_process import serve_listing; serve_listing()"
)


@dataclass(frozen=True)
class _Child:
    process: subprocess.Popen[bytes]
    files: IO[bytes]


class ListingProcess:
    """A listing of `root` (resolved) under way in a child `process` (see the module doc),
    which writes its files into `files`; with no process, `result()` lists here."""

    def __init__(
        self,
        root: Path,
        max_file_bytes: int,
        process: subprocess.Popen[bytes] | None = None,
        files: IO[bytes] | None = None,
    ) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self._child = _Child(process, files) if process is not None and files is not None else None
        self._narrowing: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self._summary: ListingSummary | None = None
        self._manifest: WorkspaceManifest | None = None
        self._selection: FileSelection | None = None

    def lists(self, root: Path, max_file_bytes: int) -> bool:
        """Whether this is the listing `select_files(root, max_file_bytes=...)` would take."""
        return (root, max_file_bytes) == (self.root, self.max_file_bytes)

    def narrow(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        """Have `summary()` count the files `include` and `exclude` allow (as
        `FileSelection.narrowed` applies them); without this, it counts every file. Said once,
        before `summary()` or `result()`: later, it changes nothing."""
        stdin = self._child.process.stdin if self._child is not None else None
        if stdin is None or stdin.closed:
            return
        self._narrowing = (tuple(include), tuple(exclude))
        self._end_input(marshal.dumps(self._narrowing, _MARSHAL_VERSION))

    def summary(self) -> ListingSummary | None:
        """The helper's summary (see `ListingSummary`), waited for; None when the helper
        failed, and `result()` then lists here."""
        if self._summary is None and self._child is not None:
            self._end_input()
            stdout = self._child.process.stdout
            try:
                self._summary = self._decoded_summary(stdout.read() if stdout else b"")
            except (OSError, EOFError, TypeError, ValueError):
                self._summary = None
            if self._summary is None:
                self.close()
        return self._summary

    def result(self) -> tuple[FileSelection, str]:
        """The selection and its fingerprint, as `select_files` and `fingerprint_files` give
        them; taken in this process when the child failed (raising what they raise)."""
        from promptkit.hostfiles._listing import log_selection, select_files
        from promptkit.hostfiles._manifest import fingerprint_files

        selection = self._helper_selection()
        fingerprint = self._manifest.fingerprint if self._manifest is not None else None
        if selection is not None and fingerprint is not None:
            log_selection(selection)
            return selection, fingerprint
        selection = select_files(self.root, max_file_bytes=self.max_file_bytes)
        return selection, fingerprint_files(selection.files)

    def manifest(self) -> WorkspaceManifest | None:
        """The manifest of the workspace as the helper listed it (`manifest_for_selection`,
        git's facts read while it listed), waited for; None when the helper failed."""
        return self._helper_manifest()

    def close(self) -> None:
        """Stop the child if it is still running (its listing is no longer wanted)."""
        if self._child is None:
            return
        process, files = self._child.process, self._child.files
        self._child = None
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout, files):
            if stream is not None:
                stream.close()

    def __enter__(self) -> ListingProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _end_input(self, data: bytes = b"") -> None:
        """Write `data` to the child's stdin and close it: the child reads stdin to its end."""
        stdin = self._child.process.stdin if self._child is not None else None
        if stdin is None or stdin.closed:
            return
        try:
            stdin.write(data)
            stdin.close()
        except OSError:
            pass  # the child is gone, and its answer says so

    def _decoded_summary(self, data: bytes) -> ListingSummary | None:
        root, from_git, narrowing, counts = marshal.loads(data)
        file_count, total_bytes, skipped = counts
        summary = ListingSummary(
            Path(root),
            from_git,
            self.max_file_bytes,
            file_count,
            total_bytes,
            tuple(map(tuple, skipped)),
        )
        if summary.root != self.root or narrowing != self._narrowing:
            return None
        return summary

    def _helper_manifest(self) -> WorkspaceManifest | None:
        """The helper's manifest, the first thing in its file, once it has exited (read once);
        None when it failed."""
        from promptkit.hostfiles._manifest import WorkspaceManifest

        if self._manifest is None and self.summary() is not None and self._child is not None:
            child = self._child
            child.process.wait()
            try:
                if child.process.returncode == 0:
                    child.files.seek(0)
                    self._manifest = WorkspaceManifest.from_json(marshal.load(child.files))
            except (EOFError, TypeError, ValueError, WorkspaceError):
                self._manifest = None
            if self._manifest is None:
                self.close()
        return self._manifest

    def _helper_selection(self) -> FileSelection | None:
        """The helper's files, which follow its manifest (read once); None when it failed."""
        summary = self.summary()
        self._helper_manifest()  # read past first; when it fails, the child is closed
        child = self._child
        if self._selection is None and summary is not None and child is not None:
            try:
                self._selection = _decoded_selection(summary, marshal.load(child.files))
            except (EOFError, TypeError, ValueError):
                self._selection = None
            finally:
                self.close()
        return self._selection


def _decoded_selection(summary: ListingSummary, answer: Any) -> FileSelection:
    from promptkit._gc import collector_paused
    from promptkit.hostfiles._listing import FileSelection, LeftOut, workspace_files

    max_file_bytes, paths, sizes, mtimes, blob_ids, left_out = answer
    with collector_paused():
        rows = zip(paths, sizes, mtimes, blob_ids, strict=True)
        return FileSelection(
            root=summary.root,
            files=tuple(workspace_files(rows)),
            left_out=tuple(map(LeftOut._make, left_out)),
            from_git=summary.from_git,
            max_file_bytes=max_file_bytes,
        )


def serve_listing() -> None:
    """The child's side: list `sys.argv[2]` with the size cap `sys.argv[3]`, read the globs of
    `narrow` from stdin, write the summary to stdout, then the manifest and the files to the
    file descriptor `sys.argv[4]`, as marshal data."""
    # Whatever else would be printed goes to stderr: stdout carries the summary alone.
    summary_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    files_out = os.fdopen(int(sys.argv[4]), "wb")
    from promptkit._gc import collector_paused
    from promptkit.hostfiles._listing import begin_selection

    # The caller imports meanwhile, on a core of its own: git leaves it that core.
    pending = begin_selection(sys.argv[2], max_file_bytes=int(sys.argv[3]), one_git_process=True)
    from promptkit.hostfiles._manifest import begin_manifest, fingerprint_files

    pending_manifest = begin_manifest(pending.root, ask_git=pending.git is not None)
    selection = pending.unlogged_result()
    narrowing = _narrowing(sys.stdin.buffer.read())
    narrowed = selection.narrowed(*narrowing)
    counts = (len(narrowed.files), narrowed.total_bytes, narrowed.skipped)
    summary = (str(selection.root), selection.from_git, narrowing, counts)
    summary_out.write(marshal.dumps(summary, _MARSHAL_VERSION))
    summary_out.close()
    with collector_paused():
        fingerprint = fingerprint_files(selection.files)
        manifest = pending_manifest.result(from_git=selection.from_git, fingerprint=fingerprint)
        # The files as four columns (path, size, mtime, blob id): a pass per column is a third
        # the cost of `zip(*files)`, which unpacks 100,000 arguments.
        columns = [tuple(map(itemgetter(column), selection.files)) for column in range(4)]
        left_out = [tuple(entry) for entry in selection.left_out]
        # The manifest first, so a caller that wants only it reads no files.
        files_out.write(marshal.dumps(manifest.to_json(), _MARSHAL_VERSION))
        answer: tuple[Any, ...] = (selection.max_file_bytes, *columns, left_out)
        files_out.write(marshal.dumps(answer, _MARSHAL_VERSION))
    files_out.close()


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
