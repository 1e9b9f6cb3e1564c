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
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

from promptkit.workspace._git import start_into_file

if TYPE_CHECKING:
    from promptkit.workspace.files import FileSelection

__all__ = ["ListingProcess", "start_listing_process"]

# marshal's version 4 writes ASCII text in a short form that reads a quarter faster than
# version 2's UTF-8 (21 ms against 29 ms for 100,000 files), and writes it as fast.
_MARSHAL_VERSION = 4


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
    # A file, not a pipe: the child writes its answer whenever it is done, unread.
    return ListingProcess(resolved, max_file_bytes, start_into_file(command))


# The child imports promptkit from where this process did: `-P` keeps the working folder off
# its path, and the folder holding promptkit goes first when this process had put it on its path
# at run time (an installed one is on the child's path already, behind the standard library).
_CHILD = (
    "import sys; sys.argv[1] in sys.path or sys.path.insert(0, sys.argv[1]);"
    " from promptkit.workspace.listing_process import serve_listing; serve_listing()"
)


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

    def lists(self, root: Path, max_file_bytes: int) -> bool:
        """Whether this is the listing `select_files(root, max_file_bytes=...)` would take."""
        return (root, max_file_bytes) == (self.root, self.max_file_bytes)

    def result(self) -> tuple[FileSelection, str]:
        """The selection and its fingerprint, as `select_files` and `fingerprint_files` give
        them; taken in this process when the child failed (raising what they raise)."""
        from promptkit.workspace.files import log_selection, select_files
        from promptkit.workspace.manifest import fingerprint_files

        answer = self._answer()
        if answer is not None:
            log_selection(answer[0])
            return answer
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
        output.close()

    def __enter__(self) -> ListingProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _answer(self) -> tuple[FileSelection, str] | None:
        from promptkit.workspace.files import (
            FileSelection,
            LeftOut,
            collector_paused,
            workspace_files,
        )

        if self._child is None:
            return None
        process, output = self._child
        try:
            process.wait()
            output.seek(0)
            data = output.read() if process.returncode == 0 else b""
        finally:
            self.close()
        try:
            root, from_git, paths, sizes, mtimes, blob_ids, left_out, fingerprint = marshal.loads(
                data
            )
            with collector_paused():
                rows = zip(paths, sizes, mtimes, blob_ids, strict=True)
                selection = FileSelection(
                    root=Path(root),
                    files=tuple(workspace_files(rows)),
                    left_out=tuple(map(LeftOut._make, left_out)),
                    from_git=from_git,
                    max_file_bytes=self.max_file_bytes,
                )
        except (EOFError, TypeError, ValueError):
            return None
        if selection.root != self.root or not isinstance(fingerprint, str):
            return None
        return selection, fingerprint


def serve_listing() -> None:
    """The child's side: list `sys.argv[2]` with the size cap `sys.argv[3]` and write the
    selection and its fingerprint to stdout as marshal data."""
    # Whatever else would be printed goes to stderr: stdout carries the answer alone.
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from promptkit.workspace.files import begin_selection, collector_paused

    pending = begin_selection(sys.argv[2], max_file_bytes=int(sys.argv[3]))
    from promptkit.workspace.manifest import fingerprint_files

    selection = pending.unlogged_result()
    with collector_paused():
        # The files as four columns (path, size, mtime, blob id); four empty ones for none.
        paths, sizes, mtimes, blob_ids = list(zip(*selection.files, strict=True)) or [()] * 4
        answer.write(
            marshal.dumps(
                (
                    str(selection.root),
                    selection.from_git,
                    paths,
                    sizes,
                    mtimes,
                    blob_ids,
                    [tuple(entry) for entry in selection.left_out],
                    fingerprint_files(selection.files),
                ),
                _MARSHAL_VERSION,
            )
        )
    answer.close()
