"""Reading override files without trusting the filesystem: contained, bounded, never blocking.

An override file is read only when it is a regular file whose real path is inside the store's
root, and no larger than the store's `max_file_bytes` (`DEFAULT_MAX_FILE_BYTES`, 1 MiB: far
above any prompt text, far below what would hurt a render). It is opened non-blocking, so a
FIFO, device or socket in its place is refused at once instead of hanging the render. A write
checks first that the folder it creates or writes in does not lead out of the root (a `_shared`
that is a symlink to another directory), so nothing is ever written outside.

Every refusal is an `OverrideFileError`: the file, the line when one is known, and the reason,
which `check`, the render fallback and the CLI all report the same way.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from promptkit.errors import OverridesError

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
FIX_HINT = "fix the file by hand or run `promptkit overrides check` to list every problem"


class OverrideFileError(OverridesError):
    """An override file that cannot be used: `file`, `line` (when known) and `reason`."""

    def __init__(self, file: Path | str, reason: str, *, line: int | None = None) -> None:
        self.file = str(file)
        self.line = line
        self.reason = reason
        where = f"{file} line {line}" if line else str(file)
        super().__init__(f"{where}: {reason} ({FIX_HINT})")


def real_root(root: Path) -> str:
    """The root's real path (symlinks resolved); the root itself may be a link."""
    return os.path.realpath(root)


def is_inside(path: str, root: str) -> bool:
    """Whether the real path `path` is `root` or below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_override_bytes(root: Path, file: Path, *, max_bytes: int) -> tuple[bytes, float] | None:
    """The bytes of `file` and its mtime (seconds), or None when it does not exist.

    OverrideFileError when it resolves outside `root`, is not a regular file, is larger than
    `max_bytes`, or cannot be read.
    """
    real = _contained(root, file)
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OverrideFileError(file, f"cannot be read ({error.strerror or error})") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise OverrideFileError(
                file, f"is not a regular file ({_kind(info.st_mode)}); replace it with a TOML file"
            )
        if info.st_size > max_bytes:
            raise _too_large(file, info.st_size, max_bytes)
        raw = _read_up_to(descriptor, min(info.st_size, max_bytes) + 1)
    except OSError as error:
        raise OverrideFileError(file, f"cannot be read ({error.strerror or error})") from None
    finally:
        os.close(descriptor)
    if len(raw) > max_bytes:  # it grew while being read
        raise _too_large(file, len(raw), max_bytes)
    return raw, info.st_mtime


def _contained(root: Path, file: Path) -> str:
    """The path to open for `file`; OverrideFileError when it resolves outside `root`.

    Renders read a file every time, so the common case is cheap: when no folder or file below
    the root is a symlink (an lstat each), the file is inside. Otherwise its real path decides.
    """
    try:
        parts = file.relative_to(root).parts
    except ValueError:
        parts = ()
    current = str(root)
    for part in parts:
        current = f"{current}{os.sep}{part}"
        try:
            is_link = stat.S_ISLNK(os.lstat(current).st_mode)
        except FileNotFoundError:
            return str(file)  # opening it finds it missing
        except OSError:
            break
        if is_link:
            break
    else:
        if parts:
            return str(file)
    real = os.path.realpath(file)
    if not is_inside(real, real_root(root)):
        raise OverrideFileError(
            file,
            f"resolves to {real}, outside the overrides root {root}; it is not read (replace the"
            " symlink with the file itself)",
        )
    return real


def require_inside(root: Path, file: Path) -> None:
    """OverrideFileError unless writing `file` (creating its folders) stays inside `root`.

    The deepest folder of `file` that exists already must resolve inside the root: a folder
    created below it then is inside too, and a symlinked folder leading out is refused before
    anything (a folder, a lock file) is created through it.
    """
    inside = real_root(root)
    folder = file.parent
    while not folder.exists() and folder != folder.parent and folder != root:
        folder = folder.parent
    if not is_inside(os.path.realpath(folder), inside):
        raise OverrideFileError(
            file,
            f"{folder} leads outside the overrides root {root} (a symlink); nothing was written."
            " Replace the symlink with a real folder",
        )


def utf8_text(file: Path, raw: bytes) -> str:
    """`raw` decoded as UTF-8; OverrideFileError with the line of the first invalid byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise OverrideFileError(file, "not UTF-8 text; save the file as UTF-8", line=line) from None


def _too_large(file: Path, size: int, limit: int) -> OverrideFileError:
    return OverrideFileError(
        file,
        f"is {size} bytes, over the limit of {limit} bytes for an override file; shorten it, or"
        " pass a larger max_file_bytes to LocalPromptOverridesStore",
    )


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _read_up_to(descriptor: int, limit: int) -> bytes:
    """Up to `limit` bytes; os.read with the size known avoids a buffered reader's allocation."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(descriptor, remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
