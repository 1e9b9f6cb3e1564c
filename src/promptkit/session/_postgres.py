"""PostgresSessionStore: sessions kept in PostgreSQL, with the file store's records and guarantees.

A stored session is a row of `promptkit_sessions` (the texts metadata.json and base.jsonl would
hold, and the head: seq and checksum of the last record) and one row of
`promptkit_session_events` per event after the base, holding the line events.jsonl would hold.
The record format, its checksum chain and the checks made on load are those of the file store
(`promptkit.session._records`): a record altered, deleted or moved after it was written fails
the load, naming the session and the record.

Every event is one transaction: it locks the session's row, checks that the stored head is
still the one this attachment last wrote or loaded, inserts the record and moves the head. So
appends from any number of processes are ordered by the head, never interleaved inside an event
(a conversation turn is one event), and never lost: an append over a head another worker moved
is refused with `SessionStaleError` and nothing is applied, as the file store refuses a stale
copy; load the session again and re-apply. Two attachments may hold one session at once (the
file store's directory lock has no equivalent across machines); the first append wins.

A broken connection is retried (bounded, `promptkit.database.Database`); a retry that finds its
own record at the head knows the first attempt committed and does not write it again. What still
fails is a typed `DatabaseError` naming the database.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from promptkit._names import require_key
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.database import Database
from promptkit.errors import SessionError, SessionStaleError
from promptkit.logging import get_logger
from promptkit.session._attached import Attached
from promptkit.session._records import (
    StoredSession,
    StoreHead,
    base_lines,
    check_head,
    event_line,
    metadata_text,
    parse_base,
    parse_metadata,
    replay_records,
    require_current,
    trace_id_or_new,
    warn_unpersisted,
    workspace_id,
)
from promptkit.session._session import Session, StoredLog

if TYPE_CHECKING:
    from psycopg import Connection

_log = get_logger("promptkit.session")


class PostgresSessionStore:
    """Persists sessions in the PostgreSQL database at `url` (see the module doc); the same
    calls as `SessionStore`. The pool holds `pool_size` connections at most and a call waits
    `pool_timeout` seconds for one; a broken connection is retried `attempts` times in all."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 4,
        pool_timeout: float = 5.0,
        attempts: int = 3,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._database = Database(
            url,
            min_size=0,
            max_size=pool_size,
            pool_timeout=pool_timeout,
            attempts=attempts,
            clock=clock,
        )
        self._attached: Attached[PostgresSessionAttachment] = Attached()

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self._database.label!r})"

    @property
    def database(self) -> str:
        """The database, as messages name it (no password)."""
        return self._database.label

    @property
    def state_folders(self) -> tuple[Path, ...]:
        """None: the sessions are in the database."""
        return ()

    def location(self, workspace_root: Path | str, session_id: str) -> str:
        """How the store names session `session_id` of `workspace_root` (the `StoredLog`
        location of a copy loaded from it); the id is checked first."""
        require_key(session_id, what="session id", error=SessionError)
        return f"{self._database.label}#{workspace_id(workspace_root)}/{session_id}"

    def attach(
        self, session: Session, workspace_root: Path | str, *, trace_id: str | None = None
    ) -> PostgresSessionAttachment:
        """Record every later change of `session` under `workspace_root` until closed.

        A new session's state is written as its base first. A stored session with the same id
        can only be continued by a copy `load` returned, and only while the stored head is
        still where that copy was loaded (`SessionStaleError` otherwise): its events are then
        appended after that head. `trace_id` (key rule; default a fresh random id) marks every
        record written through this attachment.
        """
        trace = trace_id_or_new(trace_id)
        root = Path(workspace_root).expanduser().resolve()
        location = self.location(root, session.session_id)

        def start() -> PostgresSessionAttachment:
            attachment = PostgresSessionAttachment(
                store=self,
                database=self._database,
                session=session,
                workspace_root=root,
                location=location,
                trace_id=trace,
            )
            attachment.start()
            return attachment

        attachment = session.attach_recorder(start)
        self._attached.add(attachment)
        _log.info("session_attached", session_id=session.session_id, path=location, trace_id=trace)
        return attachment

    def compact(self, session: Session) -> None:
        """Rewrite `session`'s stored base with its current state and drop its event rows."""
        self._attached.of(session).compact()

    def load(self, workspace_root: Path | str, session_id: str) -> Session:
        """Rebuild session `session_id` of `workspace_root` from its base and events in seq
        order, every record's checksum verified (SessionCorruptError naming the record
        otherwise). Slice names must be registered in this process; register reducers again on
        the returned session before dispatching more events."""
        location = self.location(workspace_root, session_id)
        key = (workspace_id(workspace_root), session_id)

        def read(connection: Connection[tuple[Any, ...]], _: Database) -> Any:
            row = connection.execute(
                "SELECT metadata, base, head_seq, head_sum, updated_at, base_seq"
                " FROM promptkit_sessions WHERE workspace_id = %s AND session_id = %s",
                key,
            ).fetchone()
            if row is None:
                return None
            events = connection.execute(
                "SELECT line FROM promptkit_session_events WHERE workspace_id = %s AND"
                " session_id = %s AND seq > %s ORDER BY seq",
                (*key, row[5]),
            ).fetchall()
            return row, "".join(line for (line,) in events)

        found = self._database.run(read, what=f"load session {session_id}")
        if found is None:
            raise SessionError(
                f"no stored session {session_id!r} for workspace {Path(workspace_root)} (looked"
                f" in {location})"
            )
        (metadata_doc, base_text, head_seq, head_sum, updated_at, _), events_text = found
        metadata = parse_metadata(
            metadata_doc, f"{location} metadata", session_id=session_id, last_activity=updated_at
        )
        base, slices = parse_base(base_text.encode("utf-8"), f"{location} base", session_id)
        events = f"{location} events"
        head = replay_records(events_text.encode("utf-8"), events, session_id, base, slices)
        check_head(head, (head_seq, head_sum), events=events, recorder=f"{location} head")
        return Session.restore(
            session_id=session_id,
            tags=metadata.tags,
            seq=head[0],
            slices=slices,
            stored_log=StoredLog(location, head),
        )

    def sessions(self, workspace_root: Path | str) -> tuple[StoredSession, ...]:
        """The stored sessions of `workspace_root`, most recently active first."""
        label = self._database.label

        def read(connection: Connection[tuple[Any, ...]], _: Database) -> list[Any]:
            return connection.execute(
                "SELECT session_id, metadata, updated_at FROM promptkit_sessions"
                " WHERE workspace_id = %s ORDER BY updated_at DESC, session_id DESC",
                (workspace_id(workspace_root),),
            ).fetchall()

        rows = self._database.run(read, what="list sessions")
        return tuple(
            parse_metadata(
                metadata,
                f"{label}#{session_id} metadata",
                session_id=session_id,
                last_activity=updated_at,
            )
            for session_id, metadata, updated_at in rows
        )

    def latest(self, workspace_root: Path | str) -> Session | None:
        """The most recently active stored session of `workspace_root`, loaded; None if none."""
        stored = self.sessions(workspace_root)
        return self.load(workspace_root, stored[0].session_id) if stored else None

    def close(self) -> None:
        """Close every attachment made through this store, then the pool."""
        for attachment in self._attached.all():
            attachment.close()
        self._database.close()

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def forget(self, attachment: PostgresSessionAttachment) -> None:
        self._attached.forget(attachment)


class PostgresSessionAttachment:
    """A session being recorded by a PostgresSessionStore; close it (or the store) when done."""

    def __init__(
        self,
        *,
        store: PostgresSessionStore,
        database: Database,
        session: Session,
        workspace_root: Path,
        location: str,
        trace_id: str,
    ) -> None:
        self._store = store
        self._database = database
        self._session = session
        self._workspace_root = workspace_root
        self._location = location
        self._key = (workspace_id(workspace_root), session.session_id)
        self._trace_id = trace_id
        self._head: StoreHead = (0, "")
        self._base_seq = 0
        self._created_at = SYSTEM_CLOCK.now()
        self._closed = False
        self._warned: set[type[Any]] = set()

    @property
    def session(self) -> Session:
        return self._session

    @property
    def location(self) -> str:
        return self._location

    @property
    def trace_id(self) -> str:
        return self._trace_id

    @property
    def closed(self) -> bool:
        return self._closed

    def start(self) -> None:
        """Write a new session's base, or continue a stored one from the head the copy was
        loaded at (the store calls this with the session's changes held)."""

        def begin(connection: Connection[tuple[Any, ...]], _: Database) -> None:
            row = self._locked_row(connection)
            if row is None:
                self._write_base(connection, exists=False)
                return
            stored_head, base_seq, metadata = (row[0], row[1]), row[2], row[3]
            require_current(self._session, self._location, stored_head)
            self._created_at = parse_metadata(
                metadata,
                self._location,
                session_id=self._session.session_id,
                last_activity=self._created_at,
            ).created_at
            self._head, self._base_seq = stored_head, base_seq
            if self._session.seq != stored_head[0]:
                # Changed in memory since it was loaded: its state becomes the new base.
                self._write_base(connection, exists=True)
            else:
                self._write_metadata(connection, "active")

        self._database.run(begin, what=f"attach session {self._session.session_id}")

    def record(
        self,
        seq: int,
        event: str | None,
        changes: list[dict[str, Any]],
        unpersisted: tuple[type[Any], ...],
    ) -> None:
        """Append one event record in one transaction (the session calls this under its lock,
        before applying): refused with SessionStaleError when another worker moved the head."""
        warn_unpersisted(self._session, unpersisted, self._warned)
        if not changes:
            return
        self._require_open()
        prev = self._head[1] if self._head[0] > self._base_seq else ""
        line, checksum = event_line(
            self._session.session_id, self._trace_id, seq, event, changes, prev
        )

        def append(connection: Connection[tuple[Any, ...]], database: Database) -> None:
            row = self._locked_row(connection)
            stored = None if row is None else (row[0], row[1])
            if database.attempt > 1 and stored == (seq, checksum):
                return  # the attempt whose commit was cut off did store it
            if stored != self._head:
                raise _stale(self._session.session_id, self._location, stored, self._head)
            connection.execute(
                "INSERT INTO promptkit_session_events (workspace_id, session_id, seq, line)"
                " VALUES (%s, %s, %s, %s)",
                (*self._key, seq, line.decode("utf-8")),
            )
            connection.execute(
                "UPDATE promptkit_sessions SET head_seq = %s, head_sum = %s, updated_at = now()"
                " WHERE workspace_id = %s AND session_id = %s",
                (seq, checksum, *self._key),
            )

        self._database.run(append, what=f"append event {seq} of session {self._session.session_id}")
        self._head = (seq, checksum)

    def compact(self) -> None:
        """Write the session's state as its base and drop the event rows, in one transaction."""
        with self._session.changes_held():
            self._require_open()

            def rewrite(connection: Connection[tuple[Any, ...]], _: Database) -> None:
                row = self._locked_row(connection)
                stored = None if row is None else (row[0], row[1])
                if stored != self._head:
                    raise _stale(self._session.session_id, self._location, stored, self._head)
                self._write_base(connection, exists=True)

            self._database.run(rewrite, what=f"compact session {self._session.session_id}")

    def close(self) -> None:
        """Stop recording and mark the session closed."""
        with self._session.changes_held():
            if self._closed:
                return
            self._closed = True
            # The copy in memory is exactly what the rows now hold.
            self._session.detach_recorder(self, stored_log=StoredLog(self._location, self._head))

            def finish(connection: Connection[tuple[Any, ...]], _: Database) -> None:
                row = self._locked_row(connection)
                # Another worker appended since: the session is theirs to mark.
                if row is not None and (row[0], row[1]) == self._head:
                    self._write_metadata(connection, "closed")

            try:
                self._database.run(finish, what=f"close session {self._session.session_id}")
            finally:
                self._store.forget(self)
        _log.info("session_detached", session_id=self._session.session_id, trace_id=self._trace_id)

    def __enter__(self) -> PostgresSessionAttachment:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------

    def _require_open(self) -> None:
        if self._closed:
            raise SessionError(
                f"the store attachment of session {self._session.session_id!r} is closed; "
                "attach the session again to keep recording it"
            )

    def _locked_row(self, connection: Connection[tuple[Any, ...]]) -> Any:
        """(head_seq, head_sum, base_seq, metadata) of the session's row, locked; None when
        there is none yet (the advisory lock then keeps a second creator out)."""
        connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", self._key)
        return connection.execute(
            "SELECT head_seq, head_sum, base_seq, metadata FROM promptkit_sessions"
            " WHERE workspace_id = %s AND session_id = %s FOR UPDATE",
            self._key,
        ).fetchone()

    def _write_base(self, connection: Connection[tuple[Any, ...]], *, exists: bool) -> None:
        # The caller holds the session's changes: no event falls between this state and the
        # rows written below.
        lines, head = base_lines(self._session, self._trace_id)
        base = b"".join(lines).decode("utf-8")
        metadata = self._metadata("active", head)
        if exists:
            connection.execute(
                "DELETE FROM promptkit_session_events WHERE workspace_id = %s AND session_id = %s",
                self._key,
            )
        connection.execute(
            "INSERT INTO promptkit_sessions (workspace_id, session_id, metadata, base, base_seq,"
            " head_seq, head_sum) VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (workspace_id, session_id) DO UPDATE SET metadata = EXCLUDED.metadata,"
            " base = EXCLUDED.base, base_seq = EXCLUDED.base_seq, head_seq = EXCLUDED.head_seq,"
            " head_sum = EXCLUDED.head_sum, updated_at = now()",
            (*self._key, metadata, base, head[0], head[0], head[1]),
        )
        self._head, self._base_seq = head, head[0]

    def _write_metadata(
        self, connection: Connection[tuple[Any, ...]], status: Literal["active", "closed"]
    ) -> None:
        connection.execute(
            "UPDATE promptkit_sessions SET metadata = %s, updated_at = now()"
            " WHERE workspace_id = %s AND session_id = %s",
            (self._metadata(status, self._head), *self._key),
        )

    def _metadata(self, status: Literal["active", "closed"], head: StoreHead) -> str:
        return metadata_text(
            self._session,
            self._workspace_root,
            created_at=self._created_at,
            status=status,
            head=head,
        )


def _stale(
    session_id: str, location: str, stored: StoreHead | None, in_hand: StoreHead
) -> SessionStaleError:
    found = "no longer exists" if stored is None else f"ends at seq {stored[0]}"
    return SessionStaleError(
        f"session {session_id!r} in {location} moved past the copy in hand: the stored log"
        f" {found}, this copy is at seq {in_hand[0]}. Nothing was applied; load the session"
        f" again (store.load(workspace_root, {session_id!r})) and re-apply your change"
    )
