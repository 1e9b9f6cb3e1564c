"""Cross-process locks and crash-safe replacement of override files.

Every read-modify-write holds `<file>.lock` (a `filelock` lock, so it works across processes on
POSIX and Windows) and replaces the file with `promptkit._durable.write_atomically`; a writer
killed at any point leaves either the old file or the new one, never a torn one. Lock files
stay behind on purpose: deleting a lock file that another process is waiting on would let two
writers in at once. So that they never show up in
review, `ensure_ignore_file` gives the store's root a `.gitignore` naming lock and temp files.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from promptkit._durable import DEFAULT_MODE, TEMP_SUFFIX, fsync_directory
from promptkit.errors import OverridesError
from promptkit.logging import get_logger

_log = get_logger("promptkit.overrides")

LOCK_SUFFIX = ".lock"
IGNORE_FILE = ".gitignore"
IGNORE_TEXT = f"""\
# Written by promptkit: the lock and temp files of override writes are not for review.
*{LOCK_SUFFIX}
.*{TEMP_SUFFIX}
"""


@contextlib.contextmanager
def locked(path: Path, *, timeout: float) -> Iterator[None]:
    """Hold the cross-process lock of `path` (creating its folder if needed)."""
    # Imported by the first write, not with the store: reading overrides takes no lock, and
    # the import is a fiftieth of a second of a command's start.
    from filelock import FileLock, Timeout

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path) + LOCK_SUFFIX, timeout=timeout)
    try:
        # A waiter polls every 50 ms: a writer that just released the lock and takes it again
        # has the file parsed already, so letting it go on is cheaper than frequent handoffs.
        lock.acquire(poll_interval=0.05)
    except Timeout as error:
        raise OverridesError(
            f"{path}: another writer has held {path.name}{LOCK_SUFFIX} for more than"
            f" {timeout:g}s; retry, or remove the lock file if no promptkit process is running"
        ) from error
    try:
        yield
    finally:
        lock.release()


def ensure_ignore_file(root: Path) -> None:
    """Give `root` a `.gitignore` for lock and temp files, unless it has one already.

    An existing file is never touched: it may be the user's own.
    """
    ignore = root / IGNORE_FILE
    if ignore.exists():
        return
    root.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f"{IGNORE_FILE}.", suffix=TEMP_SUFFIX, dir=root)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            temp.chmod(DEFAULT_MODE)
            handle.write(IGNORE_TEXT.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        # A hard link publishes the whole file under its name, or fails when the name exists
        # (another writer, or the user, was first); os.replace would overwrite theirs.
        os.link(temp, ignore)
    except FileExistsError:
        pass
    except OSError as error:
        # For instance a filesystem without hard links: this file is a convenience, so it
        # never fails the override write that asked for it.
        _log.warning("overrides_ignore_file_not_written", file=str(ignore), reason=error.strerror)
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    fsync_directory(root)


def remove_file(path: Path) -> bool:
    """Delete `path` durably; False when it did not exist."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    fsync_directory(path.parent)
    return True
