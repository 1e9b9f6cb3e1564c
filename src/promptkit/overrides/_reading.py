"""Parsed override files, cached by content: a cached parse is never older than the file.

A cache keyed by (mtime, size, inode) serves stale content on filesystems with coarse
timestamps, where two writes within one tick can leave the same stamp (the inode of a replaced
file is often reused). So every read takes the file's bytes (small, and read without
blocking: `promptkit.overrides._files`) and reuses the parse only when the bytes are the same.
A write reads the file under its lock the same way, so it merges into what is on disk.

A file that cannot be used is remembered with its error, so a render that falls back reports it
once (`first_report`), not at every render. The last value each file parsed to is kept too
(`last_good`): a store serving a running application renders that text while the file is
broken, rather than the code's default.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar, cast

from promptkit.logging import get_logger
from promptkit.overrides._files import OverrideFileError, read_override_bytes, utf8_text
from promptkit.overrides._layout import FilePlace
from promptkit.overrides._shared import SharedSectionOverride
from promptkit.prompt import PromptOverride

Stored = PromptOverride | SharedSectionOverride
_Value = TypeVar("_Value", PromptOverride, SharedSectionOverride)
Decoder = Callable[..., _Value]
_CACHE_LIMIT = 256
_log = get_logger("promptkit.overrides")
_REPORTED_LIMIT = 1024


class OverrideReader:
    """Reads and parses the override files of one root; thread-safe, bounded memory."""

    def __init__(self, root: Path, *, max_file_bytes: int) -> None:
        self._root = root
        self._max_file_bytes = max_file_bytes
        self._parsed: OrderedDict[Path, tuple[bytes, Stored | OverrideFileError]] = OrderedDict()
        self._reported: OrderedDict[tuple[Path, str], None] = OrderedDict()
        self._good: OrderedDict[Path, Stored] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, file: Path, place: FilePlace, decode: Decoder[_Value]) -> _Value | None:
        """The parsed content of `file`, None when it does not exist; OverrideFileError when it
        cannot be used."""
        found = self.read_with_bytes(file, place, decode)
        return None if found is None else found[0]

    def read_with_bytes(
        self, file: Path, place: FilePlace, decode: Decoder[_Value]
    ) -> tuple[_Value, bytes] | None:
        """`read`, with the bytes the value was parsed from (for a caller that also needs the
        text, without reading the file a second time)."""
        try:
            found = read_override_bytes(self._root, file, max_bytes=self._max_file_bytes)
        except OverrideFileError:
            self.forget(file)
            raise
        if found is None:
            self.forget(file)
            with self._lock:
                self._good.pop(file, None)  # removed on purpose: no text to keep serving
            return None
        raw, mtime = found
        with self._lock:
            cached = self._parsed.get(file)
        if cached is not None and cached[0] == raw:
            if isinstance(cached[1], OverrideFileError):
                raise cached[1]
            return cast(_Value, cached[1]), raw
        try:
            value = decode(
                utf8_text(file, raw),
                file=file,
                place=place,
                modified_at=datetime.fromtimestamp(int(mtime), UTC),
            )
        except OverrideFileError as error:
            self._keep(file, raw, error)
            raise
        self._keep(file, raw, value)
        return value, raw

    def read_leniently(
        self, file: Path, place: FilePlace, decode: Decoder[_Value]
    ) -> _Value | None:
        """`read`, except that a file that cannot be used gives the last value read from it
        (None when there is none, so the code's defaults render) and, once per file and error,
        an `override_unreadable` error record saying which."""
        try:
            return self.read(file, place, decode)
        except OverrideFileError as error:
            kept = self.last_good(file)
            if self.first_report(error):
                _log.error(
                    "override_unreadable",
                    file=error.file,
                    line=error.line,
                    reason=error.reason,
                    fallback="the last good text read from the file is rendered instead"
                    if kept is not None
                    else "the code's default text is rendered instead",
                    hint="run `promptkit overrides check`; strict_overrides=True makes this raise",
                )
            return cast("_Value | None", kept)

    def wrote(self, file: Path, text: str, value: Stored) -> None:
        """Remember what the caller just wrote to `file`, so reading it back skips the parse."""
        self._keep(file, text.encode("utf-8"), value)

    def last_good(self, file: Path) -> Stored | None:
        """What `file` last parsed to through this reader (read or written), if anything."""
        with self._lock:
            return self._good.get(file)

    def cached_bytes(self, file: Path) -> bytes | None:
        """The bytes of `file` as last read or written through this reader."""
        with self._lock:
            cached = self._parsed.get(file)
        return cached[0] if cached is not None else None

    def forget(self, file: Path) -> None:
        with self._lock:
            self._parsed.pop(file, None)

    def first_report(self, error: OverrideFileError) -> bool:
        """True the first time this error of this file is seen (bounded memory)."""
        key = (Path(error.file), str(error))
        with self._lock:
            if key in self._reported:
                return False
            self._reported[key] = None
            if len(self._reported) > _REPORTED_LIMIT:
                self._reported.popitem(last=False)
            return True

    def _keep(self, file: Path, raw: bytes, value: Stored | OverrideFileError) -> None:
        with self._lock:
            self._parsed[file] = (raw, value)
            self._parsed.move_to_end(file)
            if len(self._parsed) > _CACHE_LIMIT:
                self._parsed.popitem(last=False)
            if not isinstance(value, OverrideFileError):
                self._good[file] = value
                self._good.move_to_end(file)
                if len(self._good) > _CACHE_LIMIT:
                    self._good.popitem(last=False)
