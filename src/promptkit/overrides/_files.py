"""Reading override files without trusting the filesystem: contained, bounded, never blocking.

An override file is read only when it is a regular file whose real path is inside the store's
root, and no larger than the store's `max_file_bytes` (`DEFAULT_MAX_FILE_BYTES`, 1 MiB: far
above any prompt text, far below what would hurt a render). It is read through the confined
reader host files use (`promptkit.hostfiles.read_confined`), which follows a link only when it
resolves inside the root and takes a file's kind before opening it, so a FIFO, device or socket
in its place is refused at once instead of hanging the render. A write
checks first that the folder it creates or writes in does not lead out of the root (a `_shared`
that is a symlink to another directory), so nothing is ever written outside.

Every refusal is an `OverrideFileError`: the file, the line when one is known, and the reason,
which `check`, the render fallback and the CLI all report the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

from promptkit.errors import OverridesError
from promptkit.hostfiles import ConfinedReadError, is_inside, read_confined

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
FIX_HINT = "fix the file by hand or run `promptkit overrides check` to list every problem"
# How an override file's kind is named when it is not a regular file.
_KIND_WORDS = {
    "directory": "a directory",
    "FIFO": "a FIFO",
    "socket": "a socket",
    "device": "a device",
}


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


def read_override_bytes(root: Path, file: Path, *, max_bytes: int) -> tuple[bytes, float] | None:
    """The bytes of `file` and its mtime (seconds), or None when it does not exist.

    OverrideFileError when it resolves outside `root`, is not a regular file, is larger than
    `max_bytes`, or cannot be read. Read through the host files' confined reader, following
    the links that stay inside the root (a linked folder or file among the overrides).
    """
    relative = _relative(root, file)
    try:
        found = read_confined(
            root,
            relative,
            limit=max_bytes + 1,
            follow_folder_links=True,
            allow_hard_links=True,
            missing_ok=True,
        )
    except ConfinedReadError as error:
        raise _refused(root, file, error) from None
    if found is None:
        return None
    size = max(found.size, len(found.data))  # it may have grown while being read
    if size > max_bytes:
        raise _too_large(file, size, max_bytes)
    return found.data, found.mtime


def _relative(root: Path, file: Path) -> str:
    """`file`'s path below `root`, POSIX; OverrideFileError when it is not below it."""
    # Text first: a render reads its override files each time, and `Path.relative_to` would
    # cost a tenth of a read.
    root_text, file_text = os.fspath(root), os.fspath(file)
    if os.sep == "/" and file_text.startswith(root_text) and file_text[len(root_text) :][:1] == "/":
        return file_text[len(root_text) + 1 :]
    try:
        return file.relative_to(root).as_posix()
    except ValueError:
        raise OverrideFileError(
            file, f"is outside the overrides root {root}; it is not read"
        ) from None


def _refused(root: Path, file: Path, error: ConfinedReadError) -> OverrideFileError:
    if error.reason == "outside":
        return OverrideFileError(
            file,
            f"resolves to {error.target}, outside the overrides root {root}; it is not read"
            " (replace the symlink with the file itself)",
        )
    if error.reason == "not_regular":
        kind = _KIND_WORDS.get(error.kind or "", "not a regular file")
        return OverrideFileError(
            file, f"is not a regular file ({kind}); replace it with a TOML file"
        )
    return OverrideFileError(file, f"cannot be read ({error.cause})")


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
