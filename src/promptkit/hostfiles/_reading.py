"""The one read path for files under a root: confined to the root when the file is opened.

`read_confined` opens the file one path segment at a time below the root, each relative to an
open descriptor of the folder above it and never following a symlink (`O_NOFOLLOW` on every
segment), so a folder or file swapped for a symlink to outside the root after it was checked is
refused, whatever happened before the read (the root itself is the caller's choice, followed
like any path it gives). A symlink met on the way is resolved again at read time and followed only
when its target is inside the root and is not a credential file by name; its target is then
opened the same way, and a symlink found there is refused. The file's own name may always be
such a link; a folder only when the caller says so (`follow_folder_links`: override files may
sit in a linked folder, host files never do). Only regular files are opened: the kind is taken
without following links first, so a FIFO, socket or device is refused without being opened
(opening a FIFO blocks, opening a device can act on it), and the opened file must be the one
that was checked. A hard link (another name of it may be outside the root) is refused unless
the caller allows it.

Host files (`read_workspace_bytes`) and override files (`promptkit.overrides`) are read through
it. A refusal is a `ConfinedReadError`, a `WorkspaceError` worded for host files whose `reason`
lets another reader word it for its own users.

`WorkspaceReader` is the seam: code that reads workspace files takes one (default
`HOST_READER`), so a caller can count or observe the reads without patching anything.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, overload

from promptkit.errors import WorkspaceError
from promptkit.hostfiles._exclusions import is_credential_file_name

__all__ = [
    "HOST_READER",
    "ConfinedFile",
    "ConfinedReadError",
    "HostReader",
    "WorkspaceReader",
    "is_inside",
    "read_confined",
    "read_workspace_bytes",
]

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

RefusalReason = Literal["missing", "outside", "not_regular", "refused", "unreadable"]
FileKind = Literal["directory", "FIFO", "socket", "device", "special file"]


class ConfinedReadError(WorkspaceError):
    """A file `read_confined` did not read. `reason` says why: `missing` (it, a folder on its
    path or the root does not exist), `outside` (a link resolves to `target`, outside the
    root), `not_regular` (a `kind` of file that is never opened), `refused` (a hard link, a
    link to a credential file or to another link, a linked folder, a path that climbs out) or
    `unreadable` (`cause`: what the system said, or what changed while it was read)."""

    def __init__(
        self,
        message: str,
        reason: RefusalReason,
        *,
        cause: str = "",
        kind: FileKind | None = None,
        target: str | None = None,
    ) -> None:
        super().__init__(message)
        self.reason: RefusalReason = reason
        self.cause = cause
        self.kind = kind
        self.target = target


@dataclass(frozen=True)
class ConfinedFile:
    """What `read_confined` read: up to its limit of the file's bytes, and the size and
    modification time (seconds) the opened file had."""

    data: bytes
    size: int
    mtime: float


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
    longer exists, it is a directory, a FIFO/socket/device, a hard link, a link to a credential
    file, or unreadable.
    """
    return read_confined(root, relative, limit=limit).data


def is_inside(path: str, root: str) -> bool:
    """Whether `path` is `root` or below it (both real paths: symlinks resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@overload
def read_confined(
    root: Path,
    relative: str,
    *,
    limit: int,
    follow_folder_links: bool = False,
    allow_hard_links: bool = False,
    missing_ok: Literal[False] = False,
) -> ConfinedFile: ...


@overload
def read_confined(
    root: Path,
    relative: str,
    *,
    limit: int,
    follow_folder_links: bool = False,
    allow_hard_links: bool = False,
    missing_ok: bool,
) -> ConfinedFile | None: ...


def read_confined(
    root: Path,
    relative: str,
    *,
    limit: int,
    follow_folder_links: bool = False,
    allow_hard_links: bool = False,
    missing_ok: bool = False,
) -> ConfinedFile | None:
    """Up to `limit` bytes of the regular file `relative` (POSIX, relative) inside `root` (which
    may itself be a symlink: the caller chose it); see the module doc. ConfinedReadError when
    it is not read; with `missing_ok`, None when it (or the root) does not exist."""
    segments = _segments(root, relative)
    read = _ConfinedRead(root, relative, follow_folder_links, allow_hard_links)
    try:
        return read.file(segments, limit, via_link=False)
    except _Refused as refused:
        if missing_ok and refused.reason == "missing":
            return None  # the file, a folder on its way or the root: missing all the same
        raise (_root_failure(root) or refused).error() from None


def _segments(root: Path, relative: str) -> list[str]:
    segments = relative.split("/")
    if relative.startswith("/") or ".." in segments or "\0" in relative or not relative:
        raise ConfinedReadError(
            f"{relative!r} escapes the workspace {root}: use a relative path",
            "refused",
            cause="the path climbs out of the root",
        )
    return [segment for segment in segments if segment not in ("", ".")]


def _root_failure(root: Path) -> _Refused | None:
    """Why the root itself cannot be read from, when that is why a read failed."""
    try:
        if stat.S_ISDIR(root.stat().st_mode):
            return None
        cause = os.strerror(errno.ENOTDIR)
        reason: RefusalReason = "unreadable"
    except OSError as error:
        cause = error.strerror or str(error)
        reason = "missing" if error.errno == errno.ENOENT else "unreadable"
    return _Refused(f"workspace {root} cannot be opened ({cause})", reason, cause=cause)


class _Refused(Exception):  # noqa: N818 (not an error: a refusal on its way to read_confined)
    """A refusal inside a read, made into a `ConfinedReadError` only when it leaves
    `read_confined`: a promptkit error redacts its message when it is made, which would cost
    an override lookup that finds no file more than the lookup itself."""

    def __init__(
        self,
        message: str,
        reason: RefusalReason,
        *,
        cause: str = "",
        kind: FileKind | None = None,
        target: str | None = None,
    ) -> None:
        super().__init__(message)
        self.reason: RefusalReason = reason
        self.facts = (message, reason, cause, kind, target)

    def error(self) -> ConfinedReadError:
        message, reason, cause, kind, target = self.facts
        return ConfinedReadError(message, reason, cause=cause, kind=kind, target=target)


class _ConfinedRead:
    """One read under way, and what its caller allows.

    A folder is an open descriptor, or None for the root: what lies in the root is named by
    its path, so the root itself is followed like any path its caller gives (and a read costs
    no descriptor of it), while every name below it is taken with `O_NOFOLLOW`.
    """

    __slots__ = ("allow_hard_links", "follow_folder_links", "relative", "root", "root_text")

    def __init__(
        self, root: Path, relative: str, follow_folder_links: bool, allow_hard_links: bool
    ) -> None:
        self.root = root
        self.root_text = os.fspath(root)
        self.relative = relative
        self.follow_folder_links = follow_folder_links
        self.allow_hard_links = allow_hard_links

    @property
    def where(self) -> str:
        return f"{self.relative} in workspace {self.root}"

    def file(self, segments: list[str], limit: int, *, via_link: bool) -> ConfinedFile:
        parent = self._open_parent(segments[:-1], limit, via_link=via_link)
        if isinstance(parent, ConfinedFile):
            return parent
        try:
            name = self._name_in(parent, segments[-1])
            try:
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                raise _Refused(
                    f"{self.where} no longer exists (deleted since it was listed)",
                    "missing",
                    cause="it does not exist",
                ) from None
            except OSError as error:
                raise self._unreadable(error) from None
            if stat.S_ISLNK(info.st_mode):
                if via_link:
                    raise _Refused(
                        f"{self.where} is a symlink to a symlink: it is not followed",
                        "refused",
                        cause="a symlink to a symlink is not followed",
                    )
                return self._link_target(limit)
            self._require_regular(info)
            try:
                descriptor = os.open(name, _FILE_FLAGS, dir_fd=parent)
            except OSError as error:
                raise self._open_failure(error) from None
        finally:
            if parent is not None:
                os.close(parent)
        try:
            opened = os.fstat(descriptor)
            if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise _Refused(
                    f"{self.where} was replaced while it was being read: read it again",
                    "unreadable",
                    cause="it was replaced while it was being read",
                )
            self._require_regular(opened)
            return ConfinedFile(_read_up_to(descriptor, limit), opened.st_size, opened.st_mtime)
        except OSError as error:
            raise self._unreadable(error) from None
        finally:
            os.close(descriptor)

    def _name_in(self, folder: int | None, name: str) -> str:
        """`name` as the os calls given `dir_fd=folder` take it."""
        return name if folder is not None else f"{self.root_text}{os.sep}{name}"

    def _open_parent(
        self, directories: list[str], limit: int, *, via_link: bool
    ) -> int | ConfinedFile | None:
        """The folder holding the file, reached without following any link; or the file read
        through a linked folder, when the caller follows those."""
        current: int | None = None
        for directory in directories:
            try:
                following = os.open(
                    self._name_in(current, directory), _DIRECTORY_FLAGS, dir_fd=current
                )
            except OSError as error:
                if current is not None:
                    os.close(current)
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    if self.follow_folder_links and not via_link:
                        return self._link_target(limit)
                    raise _Refused(
                        f"{self.where}: {directory!r} on its path is a symlink or not a"
                        " directory (symlinked directories are never followed)",
                        "refused",
                        cause=f"{directory!r} on its path is a symlink or not a directory",
                    ) from None
                if error.errno == errno.ENOENT:
                    raise _Refused(
                        f"{self.where} no longer exists (its directory {directory!r} is gone)",
                        "missing",
                        cause=f"its directory {directory!r} does not exist",
                    ) from None
                raise self._open_failure(error) from None
            if current is not None:
                os.close(current)
            current = following
        return current

    def _link_target(self, limit: int) -> ConfinedFile:
        # Resolved now, not when listed: the link may have been swapped since.
        target = os.path.realpath(self.root / self.relative)
        root_text = os.path.realpath(self.root)
        if target == root_text or not is_inside(target, root_text):
            raise _Refused(
                f"{self.relative} resolves outside the workspace {self.root}; it is not read",
                "outside",
                cause="it resolves outside the root",
                target=target,
            )
        resolved = target[len(root_text.rstrip(os.sep)) + 1 :]
        if is_credential_file_name(resolved.rpartition("/")[2]):
            raise _Refused(
                f"{self.relative} points to a credential file; it is not read",
                "refused",
                cause="it points to a credential file",
            )
        return self.file(resolved.split("/"), limit, via_link=True)

    def _require_regular(self, info: os.stat_result) -> None:
        mode = info.st_mode
        if stat.S_ISREG(mode):
            if info.st_nlink > 1 and not self.allow_hard_links:
                raise _Refused(
                    f"{self.where} is a hard link (another name of it may be outside the"
                    " workspace): it is not read",
                    "refused",
                    cause="it is a hard link, and another name of it may be outside the root",
                )
            return
        if stat.S_ISDIR(mode):
            raise _Refused(
                f"{self.where} is a directory, not a file", "not_regular", kind="directory"
            )
        kind: FileKind = (
            "FIFO"
            if stat.S_ISFIFO(mode)
            else "socket"
            if stat.S_ISSOCK(mode)
            else "device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "special file"
        )
        raise _Refused(
            f"{self.where} is a {kind}, not a regular file: it is never opened",
            "not_regular",
            kind=kind,
        )

    def _open_failure(self, error: OSError) -> _Refused:
        if error.errno == errno.ELOOP:
            return _Refused(
                f"{self.where} became a symlink after it was checked: it is not followed",
                "unreadable",
                cause="it became a symlink after it was checked",
            )
        return self._unreadable(error)

    def _unreadable(self, error: OSError) -> _Refused:
        cause = error.strerror or str(error)
        return _Refused(f"{self.where} cannot be read ({cause})", "unreadable", cause=cause)


def _read_up_to(descriptor: int, limit: int) -> bytes:
    """Up to `limit` bytes; os.read with the size known avoids a buffered reader's allocation."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(descriptor, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
