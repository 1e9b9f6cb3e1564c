"""Durable file replacement: a reader sees the old file or the new one, whole, even after a crash.

The new content goes to a temporary file in the same directory (`.<name>.<pid>.<random>.tmp`),
is fsynced, then replaces the target with `os.replace` (atomic on POSIX and Windows); fsyncing
the directory afterwards makes the rename itself survive a power loss. Overrides, session files,
execution records and workspace manifests are all written this way.

A writer killed mid-write leaves its temp file behind. The pid in the name says whose it was:
`remove_orphaned_temps`, called by the next writer of the same file while it holds that file's
lock, removes the temp files of processes that are gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

TEMP_SUFFIX = ".tmp"
DEFAULT_MODE = 0o644


def write_atomically(path: Path, data: str | bytes | Iterable[bytes]) -> Path:
    """Replace `path` with `data` (text is written as UTF-8); returns `path`.

    Missing parent directories are created. The file keeps the permissions of the one it
    replaces, or gets 0644: mkstemp's private 0600 would hide an ordinary output file.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=TEMP_SUFFIX, dir=folder)
    temp = Path(temp_name)
    try:
        temp.chmod(_mode_of(path))
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, str):
                handle.write(data.encode("utf-8"))
            elif isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    fsync_directory(folder)
    return path


def remove_orphaned_temps(path: Path) -> int:
    """Remove the temp files `write_atomically` left for `path` in processes that are gone.

    Call it while holding the lock every writer of `path` takes: a live writer's temp file is
    never touched (its pid is alive), and neither is one of this process. Returns how many
    files were removed. Where liveness cannot be asked (Windows), nothing is removed.
    """
    if os.name != "posix":
        return 0
    pattern = re.compile(re.escape(f".{path.name}.") + r"(\d+)\.[^/]*" + re.escape(TEMP_SUFFIX))
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        found = pattern.fullmatch(entry.name)
        if found is None or _is_alive(int(found.group(1))):
            continue
        with contextlib.suppress(FileNotFoundError):
            entry.unlink()
            removed += 1
    return removed


def fsync_directory(directory: Path) -> None:
    """Flush a directory's entries to disk; a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def _is_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        # Another user's process (alive), or a number no process can have: leave it alone.
        return True
    return True


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return DEFAULT_MODE
