"""Hash-guarded section overrides stored as TOML files, one per (namespace, prompt, tag).

The store never drops entries it did not write; staleness is decided at render time. Every
read-modify-write holds the file's lock, reads the file from disk and replaces it atomically,
so concurrent writers in any number of processes lose nothing on any filesystem; the root's
`.gitignore` (written when absent) keeps lock and temp files out of review. Parses are cached
by content (`promptkit.overrides._reading`).

A render never fails because of a file: for a file it cannot use, `resolve` serves the last
text it read from that file (the code's defaults when it read none) and logs
`override_unreadable` once per file and error, unless the store was made with
`strict_overrides=True`. The other reads (`read_file`, `list_overrides`, the writes) raise.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from promptkit._durable import remove_orphaned_temps, write_atomically
from promptkit.errors import OverridesError
from promptkit.logging import get_logger
from promptkit.overrides._atomic import ensure_ignore_file, locked, remove_file
from promptkit.overrides._documents import (
    Change,
    DocumentOverridesStore,
    ReadDocument,
    _Value,
    decoder_of,
)
from promptkit.overrides._files import (
    DEFAULT_MAX_FILE_BYTES,
    OverrideFileError,
    read_override_bytes,
    require_inside,
    utf8_text,
)
from promptkit.overrides._layout import (
    FilePlace,
    file_at,
    override_files,
    place_of,
    shared_place,
)
from promptkit.overrides._reading import Decoder, OverrideReader, Stored

_log = get_logger("promptkit.overrides")


class LocalPromptOverridesStore(DocumentOverridesStore[Path]):
    """Overrides kept in `root` (default `overrides/`), one readable TOML file per prompt and tag.

    Files: `<root>/<ns segments>/<prompt_key>/<tag>.toml` for a prompt, and
    `<root>/_shared/<section_key>/<tag>.toml` for a section shared by every prompt with that
    key. `default_tag` is the project's tag: a tag with no shared digest of its own renders
    that tag's (see `SharedSectionStore.default_tag`). `lock_timeout` bounds how long a write
    waits for another writer of the same file.
    `strict_overrides=True` makes a render raise on a file it cannot use instead of falling
    back to the defaults. `max_file_bytes` bounds the size of a file read or written (default
    1 MiB). The first write also creates `<root>/.gitignore`, when absent, for the lock and
    temp files.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "overrides",
        *,
        default_tag: str = "latest",
        lock_timeout: float = 60.0,
        strict_overrides: bool = False,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        if not isinstance(max_file_bytes, int) or max_file_bytes <= 0:
            raise OverridesError(
                f"max_file_bytes must be a positive number of bytes, got {max_file_bytes!r}"
            )
        self._root = Path(root)
        super().__init__(self._root, default_tag=default_tag)
        self._lock_timeout = lock_timeout
        self._strict = strict_overrides
        self._max_file_bytes = max_file_bytes
        self._reader = OverrideReader(self._root, max_file_bytes=max_file_bytes)

    def __repr__(self) -> str:
        return f"LocalPromptOverridesStore(root={str(self._root)!r})"

    @property
    def root(self) -> Path:
        return self._root

    @property
    def location(self) -> str:
        return str(self._root)

    @property
    def strict_overrides(self) -> bool:
        """Whether a render raises on a file it cannot use (else: defaults, and one log)."""
        return self._strict

    def prompt_file(self, ns: str, prompt_key: str, tag: str = "latest") -> Path:
        """The file that holds (ns, prompt_key, tag); OverridesError for an invalid name."""
        return self._prompt_place(ns, prompt_key, tag)[0]

    def shared_file(self, section_key: str, tag: str = "latest") -> Path:
        """The file that holds the shared override of `section_key` under `tag`."""
        return file_at(self._root, shared_place(section_key, tag))

    def read_documents(self) -> tuple[ReadDocument, ...]:
        """Every file under the root, each read strictly (an unusable one with its error)."""
        found: list[ReadDocument] = []
        for file in override_files(self._root):
            try:
                place = place_of(self._root, file)
                read = self._reader.read_with_bytes(file, place, decoder_of(place))
            except OverridesError as error:
                found.append(ReadDocument(str(file), None, None, error))
                continue
            if read is not None:
                # The bytes the value was parsed from (UTF-8, or it would not have parsed), not
                # a second, unchecked read; newlines as a text-mode read gives them.
                value, raw = read
                text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
                found.append(ReadDocument(str(file), text, value))
        return tuple(found)

    def tag_documents(self, tag: str) -> dict[str, str]:
        """The text of every file of `tag` under the root, by its path there (`/`-separated);
        OverrideFileError for a file that cannot be read."""
        found: dict[str, str] = {}
        for file in override_files(self._root):
            relative = file.relative_to(self._root).as_posix()
            if place_of(self._root, file).tag != tag:
                continue
            read = read_override_bytes(self._root, file, max_bytes=self._max_file_bytes)
            if read is not None:
                found[relative] = utf8_text(file, read[0])
        return found

    def replace_documents(
        self, documents: Mapping[str, str], *, tag: str
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Make the files of `tag` exactly `documents` (path under the root: text, written byte
        for byte), each checked first; returns the paths written and removed. Each file is
        replaced atomically under its lock; the tag as a whole is not (a reader may see some
        files new and others not yet)."""
        self.checked_documents(documents, tag=tag)
        stored = self.tag_documents(tag)
        written = [path for path, text in sorted(documents.items()) if stored.get(path) != text]
        removed = sorted(set(stored) - set(documents))
        for path in written:
            file = self._root / path
            with self._locked(file):
                write_atomically(file, documents[path])
            self._reader.forget(file)
        for path in removed:
            self._remove(self._root / path)
        return tuple(written), tuple(removed)

    def read_file(self, file: Path) -> Stored | None:
        """The parsed content of one file under the root, checked against its place;
        OverrideFileError when it cannot be used."""
        place = place_of(self._root, file)
        return self._reader.read(file, place, decoder_of(place))

    def record_hand_edits(self, file: Path, *, dry_run: bool = False) -> bool:
        """Rewrite `file` in promptkit's form when it differs from it, which records bodies
        edited by hand as the operator's, dated by the file's modification time. True when the
        file differs (and, unless `dry_run`, was rewritten)."""
        place = place_of(self._root, file)
        if dry_run:
            value = self._reader.read(file, place, decoder_of(place))
            return value is not None and self._differs(file, value)
        with self._locked(file):
            value = self._reader.read(file, place, decoder_of(place))
            if value is None or not self._differs(file, value):
                return False
            self._write(file, self._encode(value), value)
        _log.info("overrides_hand_edits_recorded", file=str(file))
        return True

    def record_all_hand_edits(self, *, dry_run: bool = False) -> tuple[str, ...]:
        # Files are compared byte for byte (`record_hand_edits`): text read back with its line
        # endings translated would hide an edit that changed only them.
        edited: list[str] = []
        for file in override_files(self._root):
            try:
                if self.record_hand_edits(file, dry_run=dry_run):
                    edited.append(str(file))
            except OverridesError:
                continue  # `check` reports the file
        return tuple(edited)

    # -- the documents: files -----------------------------------------------------------------

    def _where(self, place: FilePlace) -> Path:
        return file_at(self._root, place)

    def _location(self, where: Path) -> str:
        return str(where)

    def _read(
        self, where: Path, place: FilePlace, decode: Decoder[_Value], *, lenient: bool
    ) -> _Value | None:
        if lenient:
            return self._reader.read_leniently(where, place, decode)
        return self._reader.read(where, place, decode)

    def _update(
        self, where: Path, place: FilePlace, decode: Decoder[_Value], change: Change[_Value]
    ) -> _Value | None:
        if not where.exists() and change(None) is None:
            # Nothing to change: do not leave folders or a lock file behind either.
            return None
        with self._locked(where):
            # Read from disk under the lock: the change is made to what another writer just wrote.
            updated = change(self._reader.read(where, place, decode))
            if updated is not None:
                self._write(where, self._encode(updated), updated)
        return updated

    def _remove(self, where: Path) -> bool:
        if not where.exists():
            # Nothing to remove: do not leave folders or a lock file behind either.
            return False
        with self._locked(where):
            removed = remove_file(where)
        self._reader.forget(where)
        return removed

    @contextlib.contextmanager
    def _locked(self, file: Path) -> Iterator[None]:
        """Hold the lock of `file`, whose lock file the root's `.gitignore` keeps out of git;
        refused before anything is created when the file's folder leads out of the root."""
        require_inside(self._root, file)
        ensure_ignore_file(self._root)
        with locked(file, timeout=self._lock_timeout):
            # A writer killed mid-write left its temp file; under the lock it is no one's.
            remove_orphaned_temps(file)
            yield

    def _differs(self, file: Path, value: Stored) -> bool:
        return self._encode(value).encode("utf-8") != self._reader.cached_bytes(file)

    def _write(self, file: Path, text: str, value: Stored) -> None:
        """Replace `file` with `text` (the caller holds its lock) and remember `value` for it."""
        size = len(text.encode("utf-8"))
        if size > self._max_file_bytes:
            raise OverrideFileError(
                file,
                f"would be {size} bytes, over the limit of {self._max_file_bytes} bytes for an"
                " override file; nothing was written (shorten the text, or pass a larger"
                " max_file_bytes to LocalPromptOverridesStore)",
            )
        write_atomically(file, text)
        self._reader.wrote(file, text, value)
