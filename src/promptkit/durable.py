"""Durable file replacement: a reader sees the old file or the new one, whole, even after a crash.

The new content goes to a temporary file in the same directory (`.<name>.<random>.tmp`), is
fsynced, then replaces the target with `os.replace` (atomic on POSIX and Windows); fsyncing the
directory afterwards makes the rename itself survive a power loss. Overrides, session files,
execution records and workspace manifests are all written this way.
"""

from __future__ import annotations

import contextlib
import os
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
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=folder)
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


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return DEFAULT_MODE
