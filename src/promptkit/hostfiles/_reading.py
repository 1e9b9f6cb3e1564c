"""The one read path for workspace files: confined to the root when the file is opened.

`read_workspace_bytes` opens the file relative to an open descriptor of the root, one path
segment at a time and never following a symlink (`O_NOFOLLOW` on every segment), so a directory
or file swapped for a symlink to outside the root after it was listed is refused, whatever
happened between listing and reading. A symlink that is itself the file (listed because it
resolved inside the root) is resolved again at read time, checked again, and its target opened
the same way. Only regular files are opened: the kind is taken without following links first,
so a FIFO, socket or device is refused without being opened (opening a FIFO blocks, opening a
device can act on it), and the opened file must be the one that was checked.

`WorkspaceReader` is the seam: code that reads workspace files takes one (default
`HOST_READER`), so a caller can count or observe the reads without patching anything.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from promptkit.errors import WorkspaceError
from promptkit.hostfiles._exclusions import is_credential_file_name

__all__ = ["HOST_READER", "HostReader", "WorkspaceReader", "read_workspace_bytes"]

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class WorkspaceReader(Protocol):
    """Reads up to `limit` bytes of the file `relative` inside `root` (see `read_workspace_bytes`
    for the contract: WorkspaceError saying why a file cannot be read)."""

    def read(self, root: Path, relative: str, *, limit: int) -> bytes: ...


@dataclass(frozen=True)
class HostReader:
    """The reader of the host filesystem: `read_workspace_bytes`."""

    def read(self, root: Path, relative: str, *, limit: int) -> bytes:
        return read_workspace_bytes(root, relative, limit=limit)


HOST_READER: WorkspaceReader = HostReader()


def read_workspace_bytes(root: Path, relative: str, *, limit: int) -> bytes:
    """Up to `limit` bytes of the regular file `relative` (POSIX, relative) inside `root`.

    Raises WorkspaceError naming the file and why it was not read: it escapes the root, it no
    longer exists, it is a directory, a FIFO/socket/device, a credential file, or unreadable.
    """
    segments = _segments(root, relative)
    try:
        root_descriptor = os.open(root, _DIRECTORY_FLAGS)
    except OSError as error:
        raise WorkspaceError(
            f"workspace {root} cannot be opened ({error.strerror or error})"
        ) from None
    try:
        return _read_confined(root_descriptor, root, relative, segments, limit, via_link=False)
    finally:
        os.close(root_descriptor)


def _segments(root: Path, relative: str) -> list[str]:
    segments = relative.split("/")
    if relative.startswith("/") or ".." in segments or "\0" in relative or not relative:
        raise WorkspaceError(f"{relative!r} escapes the workspace {root}: use a relative path")
    return [segment for segment in segments if segment not in ("", ".")]


def _read_confined(
    root_descriptor: int,
    root: Path,
    relative: str,
    segments: list[str],
    limit: int,
    *,
    via_link: bool,
) -> bytes:
    where = f"{relative} in workspace {root}"
    parent = _open_parent(root_descriptor, segments[:-1], where)
    try:
        name = segments[-1]
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            raise WorkspaceError(
                f"{where} no longer exists (deleted since it was listed)"
            ) from None
        except OSError as error:
            raise WorkspaceError(f"{where} cannot be read ({error.strerror or error})") from None
        if stat.S_ISLNK(info.st_mode):
            if via_link:
                raise WorkspaceError(f"{where} is a symlink to a symlink: it is not followed")
            return _read_link_target(root_descriptor, root, relative, limit)
        _require_regular(info, where)
        try:
            descriptor = os.open(name, _FILE_FLAGS, dir_fd=parent)
        except OSError as error:
            raise WorkspaceError(_open_failure(where, error)) from None
    finally:
        os.close(parent)
    try:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            raise WorkspaceError(f"{where} was replaced while it was being read: read it again")
        _require_regular(opened, where)
        return _read_up_to(descriptor, limit)
    except OSError as error:
        raise WorkspaceError(f"{where} cannot be read ({error.strerror or error})") from None
    finally:
        os.close(descriptor)


def _open_parent(root_descriptor: int, directories: list[str], where: str) -> int:
    """A descriptor of the directory holding the file, reached without following any link."""
    current = os.dup(root_descriptor)
    for directory in directories:
        try:
            following = os.open(directory, _DIRECTORY_FLAGS, dir_fd=current)
        except OSError as error:
            os.close(current)
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise WorkspaceError(
                    f"{where}: {directory!r} on its path is a symlink or not a directory"
                    " (symlinked directories are never followed)"
                ) from None
            if error.errno == errno.ENOENT:
                raise WorkspaceError(
                    f"{where} no longer exists (its directory {directory!r} is gone)"
                ) from None
            raise WorkspaceError(_open_failure(where, error)) from None
        os.close(current)
        current = following
    return current


def _read_link_target(root_descriptor: int, root: Path, relative: str, limit: int) -> bytes:
    # Resolved now, not when listed: the link may have been swapped since.
    target = os.path.realpath(root / relative)
    root_text = str(root)
    if not target.startswith(root_text.rstrip("/") + "/"):
        raise WorkspaceError(f"{relative} resolves outside the workspace {root}; it is not read")
    resolved = target[len(root_text.rstrip("/")) + 1 :]
    if is_credential_file_name(resolved.rpartition("/")[2]):
        raise WorkspaceError(f"{relative} points to a credential file; it is not read")
    return _read_confined(
        root_descriptor, root, relative, resolved.split("/"), limit, via_link=True
    )


def _require_regular(info: os.stat_result, where: str) -> None:
    mode = info.st_mode
    if stat.S_ISREG(mode):
        if info.st_nlink > 1:
            raise WorkspaceError(
                f"{where} is a hard link (another name of it may be outside the workspace):"
                " it is not read"
            )
        return
    if stat.S_ISDIR(mode):
        raise WorkspaceError(f"{where} is a directory, not a file")
    kind = (
        "FIFO"
        if stat.S_ISFIFO(mode)
        else "socket"
        if stat.S_ISSOCK(mode)
        else "device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "special file"
    )
    raise WorkspaceError(f"{where} is a {kind}, not a regular file: it is never opened")


def _open_failure(where: str, error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return f"{where} became a symlink after it was checked: it is not followed"
    return f"{where} cannot be read ({error.strerror or error})"


def _read_up_to(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(descriptor, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
