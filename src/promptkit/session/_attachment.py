"""SessionAttachment: appending one session's changes to its store files as they happen.

An attachment holds the session directory's lock, writes the base when it starts (and on
`compact`), and appends one checksummed record per event to events.jsonl, chained to the one
before (see `promptkit.session._records`). Every value is passed through `redact_value` first,
so a credential that reached a session value is stored as `[REDACTED:<rule>]`. Before each
append it checks that events.jsonl is still the size it left it: a file that moved under it
means another writer, and the append is refused (`SessionStaleError`) rather than interleaved.
Starting also removes the temp files a killed writer of metadata.json or base.jsonl left.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from promptkit._durable import remove_orphaned_temps, write_atomically
from promptkit._input_files import file_kind
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import SessionCorruptError, SessionError, SessionStaleError
from promptkit.logging import get_logger
from promptkit.session._records import (
    BASE_FILE,
    EVENTS_FILE,
    LOCK_FILE,
    METADATA_FILE,
    StoreHead,
    base_lines,
    event_line,
    metadata_text,
    read_metadata,
    warn_unpersisted,
)
from promptkit.session._session import Session, StoredLog

if TYPE_CHECKING:
    from filelock import BaseFileLock

    from promptkit.session._store import SessionStore

_log = get_logger("promptkit.session")


@dataclass(frozen=True)
class FsyncPolicy:
    """When appended event records are forced to disk.

    Each record is handed to the operating system as soon as it is dispatched; the policy decides
    how often `fsync` makes it survive a power loss: after every event (the default), after
    every `n` events, or only on compaction and close.
    """

    mode: Literal["every_event", "every_n", "on_close"] = "every_event"
    n: int = 1

    def __post_init__(self) -> None:
        if self.mode not in ("every_event", "every_n", "on_close"):
            raise SessionError(
                f"unknown fsync mode {self.mode!r}: use 'every_event', 'every_n' or 'on_close'"
            )
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise SessionError(f"fsync every n events needs n >= 1, got {self.n!r}")

    @classmethod
    def every_event(cls) -> FsyncPolicy:
        return cls("every_event")

    @classmethod
    def every(cls, n: int) -> FsyncPolicy:
        return cls("every_n", n)

    @classmethod
    def on_close(cls) -> FsyncPolicy:
        return cls("on_close")


class SessionAttachment:
    """A session being recorded by a SessionStore; close it (or the store) when done."""

    def __init__(
        self,
        *,
        store: SessionStore,
        session: Session,
        workspace_root: Path,
        session_dir: Path,
        trace_id: str,
        file_lock: BaseFileLock,
    ) -> None:
        self._store = store
        self._session = session
        self._workspace_root = workspace_root
        self._session_dir = session_dir
        self._trace_id = trace_id
        self._file_lock = file_lock
        self._fsync = store.fsync
        self._fd: int | None = None
        self._size = 0
        self._unsynced = 0
        self._head: StoreHead = (0, "")
        self._created_at = SYSTEM_CLOCK.now()
        self._warned: set[type[Any]] = set()

    @property
    def session(self) -> Session:
        return self._session

    @property
    def session_dir(self) -> Path:
        return self._session_dir

    @property
    def trace_id(self) -> str:
        return self._trace_id

    @property
    def closed(self) -> bool:
        return self._fd is None

    def record(
        self,
        seq: int,
        event: str | None,
        changes: list[dict[str, Any]],
        unpersisted: tuple[type[Any], ...],
    ) -> None:
        """Append one event record (the session calls this under its lock, before applying)."""
        warn_unpersisted(self._session, unpersisted, self._warned)
        if not changes:
            return
        fd = self._require_open()
        path = self._session_dir / EVENTS_FILE
        if os.fstat(fd).st_size != self._size:
            raise SessionStaleError(
                f"{path} changed under this attachment (another process wrote to it); event"
                f" {seq} was refused and nothing was applied: close this attachment, load the"
                " session again and re-apply the change"
            )
        prev = self._head[1] if self._size else ""
        line, checksum = event_line(
            self._session.session_id, self._trace_id, seq, event, changes, prev
        )
        try:
            _write_all(fd, line)
        except OSError as exc:
            # Cut a partial line off so the log stays a sequence of whole records.
            os.ftruncate(fd, self._size)
            raise SessionError(
                f"could not append event {seq} to {path}: {exc}; nothing was applied"
            ) from exc
        self._size += len(line)
        self._head = (seq, checksum)
        self._unsynced += 1
        policy = self._fsync
        if policy.mode == "every_event" or (
            policy.mode == "every_n" and self._unsynced >= policy.n
        ):
            os.fsync(fd)
            self._unsynced = 0

    def compact(self) -> None:
        """Write the session's state as base.jsonl (atomically), then empty events.jsonl."""
        with self._session.changes_held():
            self._require_open()
            self._compact()
            self._write_metadata(status="active", head=self._head)

    def close(self) -> None:
        """Stop recording: fsync what is pending, mark the session closed, release its lock."""
        with self._session.changes_held():
            if self._fd is None:
                return
            # The copy in memory is exactly what the files now hold.
            self._session.detach_recorder(
                self, stored_log=StoredLog(str(self._session_dir), self._head)
            )
            try:
                if self._unsynced:
                    os.fsync(self._fd)
                self._write_metadata(status="closed", head=self._head)
            except OSError as exc:
                raise SessionError(
                    f"could not close session {self._session.session_id!r} in"
                    f" {self._session_dir}: {exc}; the events recorded before are kept and the"
                    " session loads as it was"
                ) from exc
            finally:
                self.release()
                self._store._forget(self)
        _log.info("session_detached", session_id=self._session.session_id, trace_id=self._trace_id)

    def __enter__(self) -> SessionAttachment:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self, *, existing: bool) -> None:
        """Open the files and write the session's current state as the base (the store calls
        this once, with the session's changes held, after checking the copy in hand is not
        stale)."""
        if existing:
            self._created_at = read_metadata(self._session_dir / METADATA_FILE).created_at
        for name in (METADATA_FILE, BASE_FILE):
            # Holding the directory lock, so no live writer of ours owns these temp files.
            remove_orphaned_temps(self._session_dir / name)
        # Metadata first: a directory with metadata but no base is a creation cut short.
        self._write_metadata(status="active")
        self._fd = _open_events(self._session_dir / EVENTS_FILE)
        self._compact()
        self._write_metadata(status="active", head=self._head)

    def _compact(self) -> None:
        fd = self._require_open()
        # The caller holds the session's changes, so no event falls between this state and
        # the truncation of events.jsonl below.
        lines, head = base_lines(self._session, self._trace_id)
        write_atomically(self._session_dir / BASE_FILE, lines)
        # The new base already holds every event; if we crash before the truncation, load
        # skips events whose seq is not above the base's.
        os.ftruncate(fd, 0)
        os.fsync(fd)
        self._size = 0
        self._unsynced = 0
        self._head = head

    def _write_metadata(
        self, *, status: Literal["active", "closed"], head: StoreHead | None = None
    ) -> None:
        """Write metadata.json; `head` is the last record the files are known to hold (fsynced)."""
        text = metadata_text(
            self._session,
            self._workspace_root,
            created_at=self._created_at,
            status=status,
            head=head,
        )
        write_atomically(self._session_dir / METADATA_FILE, [text.encode("utf-8")])

    def _require_open(self) -> int:
        if self._fd is None:
            raise SessionError(
                f"the store attachment of session {self._session.session_id!r} is closed; "
                "attach the session again to keep recording it"
            )
        return self._fd

    def release(self) -> None:
        """Close the events file and release the directory lock, without marking the session
        closed (the store calls this when a start fails)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._file_lock.release()


def acquire_session_lock(session_dir: Path) -> BaseFileLock:
    """The lock of `session_dir`, taken without waiting; SessionError when someone holds it."""
    from filelock import FileLock, Timeout

    lock = FileLock(session_dir / LOCK_FILE)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise SessionError(
            f"session {session_dir.name!r} is already being recorded (lock {lock.lock_file} is "
            "held by another attachment or process); close that attachment first"
        ) from None
    return lock


def _open_events(path: Path) -> int:
    """events.jsonl opened for appending; SessionCorruptError when it is not a regular file (a
    FIFO would block the open until a reader came, a directory cannot be written)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o644)
    except OSError as error:
        if error.errno not in (errno.EISDIR, errno.ENXIO):  # a directory; a FIFO, no reader
            raise
        kind = "directory" if error.errno == errno.EISDIR else "FIFO"
        raise SessionCorruptError(_not_regular(path, kind)) from error
    found = file_kind(os.fstat(fd).st_mode)
    if found is not None:
        os.close(fd)
        raise SessionCorruptError(_not_regular(path, found))
    os.set_blocking(fd, True)
    return fd


def _not_regular(path: Path, kind: str) -> str:
    return (
        f"{path}: a {kind}, not a regular file, so the session cannot be recorded there; remove"
        " it (or the whole session directory) by hand"
    )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
