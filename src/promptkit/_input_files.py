"""Files a user names as input (a dataset, a reply script): opened only when regular, read
within a size, and YAML read without aliases.

`open_regular_file` takes the kind of a path from its `stat` before opening it: a FIFO would
block the open, and a device such as `/dev/zero` never ends, so both are refused unopened, and
the opened file must still be a regular file (opened without blocking, should the name have
changed meanwhile). `read_limited` reads a whole file up to a size and says when it is larger.
`yaml_loader` is PyYAML's safe loader refusing aliases: an alias makes a value share a node, and a
few nested aliases (an "alias bomb") expand into billions of values once the document is used.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from promptkit.errors import InputFileError

if TYPE_CHECKING:
    import yaml


def open_regular_file(path: Path) -> BinaryIO:
    """`path` opened for binary reading; InputFileError when it is not a regular file or cannot
    be opened (the message names the file and what it is)."""
    try:
        kind = file_kind(path.stat().st_mode)
        if kind is None:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            kind = file_kind(os.fstat(fd).st_mode)
            if kind is None:
                os.set_blocking(fd, True)
                return os.fdopen(fd, "rb")
            os.close(fd)
    except OSError as error:
        raise InputFileError(f"{path}: cannot be read ({error.strerror or error})") from None
    raise InputFileError(f"{path}: a {kind}, not a regular file; it was not read")


def read_limited(handle: BinaryIO, path: Path, limit: int) -> bytes:
    """All of an opened file; InputFileError when it holds more than `limit` bytes."""
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputFileError(f"{path}: larger than {limit:,} bytes, the most read from it")
    return data


def file_kind(mode: int) -> str | None:
    """None for a regular file, else what it is (`directory`, `FIFO`, `socket`, `device`)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def yaml_loader(text: str) -> yaml.SafeLoader:
    """A safe loader of `text` that raises `yaml.MarkedYAMLError` at the first alias (`*name`)."""
    import yaml

    class _NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    "aliases (*name) are not read: write each value out",
                    event.start_mark,
                )
            return super().compose_node(parent, index)

    return _NoAliasLoader(text)
