"""Hash-guarded overrides kept in PostgreSQL, one row per document, served from a per-process cache.

A row of `promptkit_overrides` holds exactly the text an override file would hold, keyed by the
file's path under an overrides folder (`ns/prompt_key/tag.toml`), so the entry logic, the
format, the hash guard and the hand-edit detection are those of the file store
(`promptkit.overrides._documents`), and `promptkit overrides push/pull` move documents between
files and rows byte for byte.

Writes lock, never lose an update: a read-modify-write takes a transaction-scoped advisory lock
on the document's path (it covers a row not written yet), reads the row, writes the new text
with its `version` one higher, and commits; a second writer waits for the lock and merges into
what the first committed. A write whose connection broke is retried (bounded); a retry that
finds its own text already stored returns it instead of writing it twice.

Reads are served from a cache kept fresh by LISTEN/NOTIFY: a trigger notifies every change of a
row, and a listener thread drops that row's cached value when the notification arrives
(milliseconds after the commit). While the listener is not connected nothing is served from the
cache as fresh. When the database cannot be reached, `resolve` serves the last good value it
read for the document (the code's defaults when it read none) and logs
`overrides_database_unreachable` once per outage; writes raise `DatabaseUnavailableError` naming
the database.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.database import NOTIFY_CHANNEL, Database
from promptkit.errors import DatabaseError, DatabaseUnavailableError, OverridesError
from promptkit.logging import get_logger
from promptkit.overrides._documents import (
    Change,
    DocumentOverridesStore,
    ReadDocument,
    _Value,
    decoder_of,
)
from promptkit.overrides._files import DEFAULT_MAX_FILE_BYTES, OverrideFileError
from promptkit.overrides._layout import FilePlace, place_at
from promptkit.overrides._reading import Decoder, Stored

if TYPE_CHECKING:
    from psycopg import Connection

_log = get_logger("promptkit.overrides")
_CACHE_LIMIT = 1024
_LISTEN_WAIT = 0.5
_RECONNECT_PAUSES = (0.2, 0.5, 1.0, 2.0)
_FIRST_CONNECT_WAIT = 3.0


@dataclass(frozen=True)
class StoredDocument:
    """One document as the database holds it: its path under an overrides folder, its text,
    and when it last changed."""

    path: str
    text: str
    updated_at: datetime


class PostgresOverridesStore(DocumentOverridesStore[str]):
    """Overrides kept in the PostgreSQL database at `url` (see the module doc).

    `files_root` is the overrides folder that relative paths in documents are relative to (a
    shared digest's workspace, a promotion's dataset), as in the checkout the documents were
    pushed from. `default_tag` is the project's tag: a tag with no shared digest of its own
    renders that tag's. `strict_overrides=True` makes a render raise on a document it cannot use.
    `max_document_bytes` bounds a document's size, as `max_file_bytes` does a file's. The pool
    holds `pool_size` connections at most and a call waits `pool_timeout` seconds for one
    (`DatabaseBusyError` after that); a broken connection is retried `attempts` times in all.
    Close the store (or use it as a context manager) to stop its listener and pool.
    """

    def __init__(
        self,
        url: str,
        *,
        files_root: str | Path = "overrides",
        default_tag: str = "latest",
        strict_overrides: bool = False,
        max_document_bytes: int = DEFAULT_MAX_FILE_BYTES,
        pool_size: int = 4,
        pool_timeout: float = 5.0,
        attempts: int = 3,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        super().__init__(Path(files_root), default_tag=default_tag)
        if not isinstance(max_document_bytes, int) or max_document_bytes <= 0:
            raise OverridesError(
                f"max_document_bytes must be a positive number of bytes, got {max_document_bytes!r}"
            )
        self._database = Database(
            url,
            # Reads come from the cache: connections are opened when a write or a miss needs
            # one, and nothing retries in the background while the database is down.
            min_size=0,
            max_size=pool_size,
            pool_timeout=pool_timeout,
            attempts=attempts,
            clock=clock,
        )
        self._strict = strict_overrides
        self._max_bytes = max_document_bytes
        self._cache = _DocumentCache(self._database)

    def __repr__(self) -> str:
        return f"PostgresOverridesStore({self._database.label!r})"

    @property
    def database(self) -> str:
        """The database, as messages name it (no password)."""
        return self._database.label

    @property
    def strict_overrides(self) -> bool:
        return self._strict

    @property
    def location(self) -> str:
        return self._database.label

    def read_documents(self) -> tuple[ReadDocument, ...]:
        """Every document, by path, each read strictly (an unusable one with its error)."""
        found: list[ReadDocument] = []
        for document in self.documents():
            location = self._location(document.path)
            try:
                place = place_at(tuple(document.path.split("/")), location)
                value = self._decode(document.path, place, decoder_of(place), document)
            except OverridesError as error:
                found.append(ReadDocument(location, document.text, None, error))
                continue
            found.append(ReadDocument(location, document.text, value))
        return tuple(found)

    def documents(self, *, tag: str | None = None) -> tuple[StoredDocument, ...]:
        """Every document's text as stored (of `tag` only, when given), by path."""

        def read(connection: Connection[tuple[Any, ...]], _: Database) -> list[StoredDocument]:
            rows = connection.execute(
                "SELECT path, document, updated_at FROM promptkit_overrides ORDER BY path"
            ).fetchall()
            return [StoredDocument(path, text, updated_at) for path, text, updated_at in rows]

        found = self._database.run(read, what="read the overrides")
        suffix = f"/{tag}.toml"
        return tuple(d for d in found if tag is None or d.path.endswith(suffix))

    def tag_documents(self, tag: str) -> dict[str, str]:
        """The text of every document of `tag`, exactly as stored, by path."""
        return {document.path: document.text for document in self.documents(tag=tag)}

    def replace_documents(
        self, documents: Mapping[str, str], *, tag: str
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Make the documents of `tag` exactly `documents` (path: text, stored byte for byte) in
        one transaction, each checked first; returns the paths written and removed."""
        self.checked_documents(documents, tag=tag)
        for path, text in documents.items():
            self._check_size(path, text)

        def write(connection: Connection[tuple[Any, ...]], _: Database) -> tuple[Any, ...]:
            stored = _tag_documents(connection, tag)
            # Each document's own lock, in one order, so no single write interleaves a push.
            for path in sorted({*stored, *documents}):
                connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (path,))
            stored = _tag_documents(connection, tag)
            written = [p for p, text in sorted(documents.items()) if stored.get(p) != text]
            removed = sorted(set(stored) - set(documents))
            for path in written:
                _store_row(connection, path, documents[path])
            if removed:
                connection.execute(
                    "DELETE FROM promptkit_overrides WHERE path = ANY(%s)", (removed,)
                )
            return tuple(written), tuple(removed)

        written, removed = self._database.run(write, what=f"push the documents of tag {tag}")
        self._cache.forget_all()
        return written, removed

    @property
    def listening(self) -> bool:
        """Whether the cache's listener is connected (only then are cached values served)."""
        return self._cache.is_listening()

    def wait_for_change(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the cache to drop a value: a change notified by the
        database, or the listener connecting or losing the database. True when one came."""
        return self._cache.wait_for_change(timeout)

    def close(self) -> None:
        """Stop the cache's listener and close the pool."""
        self._cache.close()
        self._database.close()

    def __enter__(self) -> PostgresOverridesStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the documents: rows ------------------------------------------------------------------

    def _where(self, place: FilePlace) -> str:
        return place.relative_path

    def _location(self, where: str) -> str:
        return f"{where} in {self._database.label}"

    def _decode(
        self, path: str, place: FilePlace, decode: Decoder[_Value], document: StoredDocument
    ) -> _Value:
        if place.kind == "shared":
            return decode(
                document.text,
                file=self._location(path),
                place=place,
                modified_at=document.updated_at,
                files_root=self._files_root,
            )
        return decode(
            document.text, file=self._location(path), place=place, modified_at=document.updated_at
        )

    def _read(
        self, where: str, place: FilePlace, decode: Decoder[_Value], *, lenient: bool
    ) -> _Value | None:
        found = self._cache.get(where)
        if found is not None:
            value, error = found
            if error is None:
                return value  # type: ignore[return-value]
            if not lenient:
                raise error
            return self._cache.last_good(where)  # type: ignore[return-value]
        try:
            if lenient and self._cache.is_down():
                # The listener lost the database: serve what was read, without waiting on it.
                raise self._cache.outage
            return self._fetch(where, place, decode)
        except DatabaseError as error:
            if not lenient:
                raise
            self._cache.report_outage(error)
            return self._cache.last_good(where)  # type: ignore[return-value]
        except OverrideFileError as error:
            if not lenient:
                raise
            self._cache.report_unusable(error)
            return self._cache.last_good(where)  # type: ignore[return-value]

    def _fetch(self, where: str, place: FilePlace, decode: Decoder[_Value]) -> _Value | None:
        """Read the row and keep what it gave in the cache, unless it changed meanwhile."""
        generation = self._cache.generation

        def read(connection: Connection[tuple[Any, ...]], _: Database) -> StoredDocument | None:
            return _select(connection, where)

        if not self._cache.is_listening():
            self._cache.start()
        document = self._database.run(read, what=f"read overrides {where}")
        if document is None:
            self._cache.keep(where, generation, None, None)
            return None
        try:
            value = self._decode(where, place, decode, document)
        except OverrideFileError as error:
            self._cache.keep(where, generation, None, error)
            raise
        self._cache.keep(where, generation, value, None)
        return value

    def _update(
        self, where: str, place: FilePlace, decode: Decoder[_Value], change: Change[_Value]
    ) -> _Value | None:
        written: list[str] = []

        def write(connection: Connection[tuple[Any, ...]], database: Database) -> _Value | None:
            connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (where,))
            document = _select(connection, where)
            current = None if document is None else self._decode(where, place, decode, document)
            if database.attempt > 1 and document is not None and document.text in written:
                return current  # the attempt whose commit was cut off did store it
            updated = change(current)
            if updated is None:
                return None
            text = self._encode(updated)
            self._check_size(where, text)
            _store_row(connection, where, text)
            written.append(text)
            return updated

        try:
            return self._database.run(write, what=f"write overrides {where}")
        finally:
            # Read-your-writes: this process's next read goes to the row, not the cache.
            self._cache.forget(where)

    def _remove(self, where: str) -> bool:
        removed: list[bool] = []

        def delete(connection: Connection[tuple[Any, ...]], _: Database) -> bool:
            connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (where,))
            row = connection.execute(
                "DELETE FROM promptkit_overrides WHERE path = %s RETURNING path", (where,)
            ).fetchone()
            removed.append(row is not None)
            return any(removed)

        try:
            return self._database.run(delete, what=f"remove overrides {where}")
        finally:
            self._cache.forget(where, removed=True)

    def _check_size(self, where: str, text: str) -> None:
        size = len(text.encode("utf-8"))
        if size > self._max_bytes:
            raise OverrideFileError(
                self._location(where),
                f"would be {size} bytes, over the limit of {self._max_bytes} bytes for an"
                " override document; nothing was written (shorten the text, or pass a larger"
                " max_document_bytes to PostgresOverridesStore)",
            )


def _select(connection: Connection[tuple[Any, ...]], path: str) -> StoredDocument | None:
    row = connection.execute(
        "SELECT document, updated_at FROM promptkit_overrides WHERE path = %s", (path,)
    ).fetchone()
    return None if row is None else StoredDocument(path, row[0], row[1])


def _tag_documents(connection: Connection[tuple[Any, ...]], tag: str) -> dict[str, str]:
    suffix = f"/{tag}.toml"
    rows = connection.execute("SELECT path, document FROM promptkit_overrides").fetchall()
    return {path: text for path, text in rows if path.endswith(suffix)}


def _store_row(connection: Connection[tuple[Any, ...]], path: str, text: str) -> None:
    connection.execute(
        "INSERT INTO promptkit_overrides (path, document, version) VALUES (%s, %s, 1)"
        " ON CONFLICT (path) DO UPDATE SET document = EXCLUDED.document,"
        " version = promptkit_overrides.version + 1, updated_at = now()",
        (path, text),
    )


class _DocumentCache:
    """Decoded documents by path, trusted only while the listener is connected; the last good
    value of each, for when the database cannot be reached. Thread-safe, bounded."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._fresh: OrderedDict[str, tuple[Stored | None, OverrideFileError | None]] = (
            OrderedDict()
        )
        self._good: OrderedDict[str, Stored] = OrderedDict()
        self._reported: set[str] = set()
        self.generation = 0
        self._listening = False
        self._outage_reported = False
        self._started = False
        self._failures = 0
        self.outage: DatabaseError = DatabaseUnavailableError(
            f"{database.label} cannot be reached", database=database.label
        )
        self._connected = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def is_listening(self) -> bool:
        return self._listening

    def is_down(self) -> bool:
        """Whether the listener was started and has lost the database (it keeps retrying)."""
        return self._started and not self._listening and self._connected.is_set()

    def get(self, path: str) -> tuple[Stored | None, OverrideFileError | None] | None:
        """The cached value of `path` (value, or the error it gave), or None when not cached.
        While the listener is down every cached value may be stale: none is given."""
        if not self._listening:
            return None
        with self._lock:
            return self._fresh.get(path)

    def keep(
        self, path: str, generation: int, value: Stored | None, error: OverrideFileError | None
    ) -> None:
        """Keep what a read of `path` begun at `generation` gave, unless a change was notified
        since (the read may predate it) or the listener is down."""
        with self._lock:
            if value is not None:
                self._good[path] = value
                self._good.move_to_end(path)
                if len(self._good) > _CACHE_LIMIT:
                    self._good.popitem(last=False)
            elif error is None:
                self._good.pop(path, None)  # removed on purpose: no text to keep serving
            if self._outage_reported:
                self._outage_reported = False
                _log.info("overrides_database_reachable", database=self._database.label)
            if generation != self.generation or not self._listening:
                return
            self._fresh[path] = (value, error)
            self._fresh.move_to_end(path)
            if len(self._fresh) > _CACHE_LIMIT:
                self._fresh.popitem(last=False)

    def last_good(self, path: str) -> Stored | None:
        with self._lock:
            return self._good.get(path)

    def wait_for_change(self, timeout: float) -> bool:
        with self._changed:
            generation = self.generation
            return self._changed.wait_for(lambda: self.generation != generation, timeout)

    def _bump(self) -> None:
        """A value may have changed (the caller holds the lock): reads begun before it are not
        kept, and waiters wake."""
        self.generation += 1
        self._changed.notify_all()

    def forget(self, path: str, *, removed: bool = False) -> None:
        with self._lock:
            self._bump()
            self._fresh.pop(path, None)
            if removed:
                self._good.pop(path, None)

    def forget_all(self) -> None:
        with self._lock:
            self._bump()
            self._fresh.clear()

    def report_outage(self, error: DatabaseError) -> None:
        """Log the outage once, until a read succeeds again."""
        with self._lock:
            if self._outage_reported:
                return
            self._outage_reported = True
        _log.warning(
            "overrides_database_unreachable",
            database=self._database.label,
            error=str(error).splitlines()[0],
            fallback="the last good text read from the database is rendered until it is back",
        )

    def report_unusable(self, error: OverrideFileError) -> None:
        with self._lock:
            key = str(error)
            if key in self._reported:
                return
            self._reported.add(key)
        _log.error(
            "override_unreadable",
            file=error.file,
            line=error.line,
            reason=error.reason,
            fallback="the last good text read from the database is rendered instead",
            hint="pull, fix and push the document, or set the entry again",
        )

    # -- the listener -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the listener thread (once) and wait briefly for it to connect."""
        with self._lock:
            if not self._started:
                self._started = True
                self._thread = threading.Thread(
                    target=self._listen, name="promptkit-overrides-listener", daemon=True
                )
                self._thread.start()
        self._connected.wait(_FIRST_CONNECT_WAIT)

    def close(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=_LISTEN_WAIT * 4)

    def _listen(self) -> None:
        while not self._stopped.is_set():
            try:
                self._serve_notifications()
            except DatabaseError as error:
                self._went_down(error)
            except Exception as error:  # psycopg's OperationalError and kin: the connection broke
                self._went_down(
                    DatabaseUnavailableError(
                        f"{self._database.label}: {_first_line(error)}",
                        database=self._database.label,
                    )
                )
            pause = _RECONNECT_PAUSES[min(self._failures, len(_RECONNECT_PAUSES) - 1)]
            self._failures += 1
            self._stopped.wait(pause)

    def _serve_notifications(self) -> None:
        with self._database.connect() as connection:
            connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
            with self._lock:
                # Anything may have changed while no one listened.
                self._bump()
                self._fresh.clear()
                self._listening = True
                self._failures = 0
            self._connected.set()
            while not self._stopped.is_set():
                for notification in connection.notifies(timeout=_LISTEN_WAIT):
                    self.forget(notification.payload)

    def _went_down(self, error: DatabaseError) -> None:
        with self._lock:
            self.outage = error
            was_listening = self._listening
            self._listening = False
            self._bump()
            self._fresh.clear()
        self._connected.set()
        if was_listening:
            # Information only: the one warning comes with the first read it affects.
            _log.info(
                "overrides_listener_disconnected",
                database=self._database.label,
                error=_first_line(error),
            )


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
