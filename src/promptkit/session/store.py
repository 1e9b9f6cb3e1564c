"""SessionStore: durable JSONL persistence of sessions, per workspace, with crash recovery.

Layout under the state root (explicit argument > $PROMPTKIT_HOME > ~/.promptkit):

    workspaces/<workspace_id>/sessions/<session_id>/metadata.json
                                                   /base.jsonl    the slices at one seq
                                                   /events.jsonl  changes after it, appended

A session's state is base plus every event record with a higher seq, applied in seq order.
Records hold the *changes* an event made (values appended, or a slice's new contents), never the
reducer that made them, so loading needs no reducers. Every record carries trace_id, session_id,
seq and recorded_at (ISO 8601 UTC) and is one line of UTF-8 JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from promptkit.durable import write_atomically
from promptkit.errors import SessionCorruptError, SessionError
from promptkit.logging import get_logger
from promptkit.names import require_key
from promptkit.session.codec import codec_for
from promptkit.session.session import Session
from promptkit.session.slices import slice_name, slice_type_named

if TYPE_CHECKING:
    from filelock import BaseFileLock

_log = get_logger("promptkit.session")

STORE_FORMAT = 1
BASE_FILE = "base.jsonl"
EVENTS_FILE = "events.jsonl"
METADATA_FILE = "metadata.json"
LOCK_FILE = ".lock"


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


_EVERY_EVENT = FsyncPolicy()


def resolve_state_root(state_root: Path | str | None = None) -> Path:
    """The state root: `state_root` if given, else $PROMPTKIT_HOME, else ~/.promptkit."""
    chosen = state_root if state_root is not None else os.environ.get("PROMPTKIT_HOME") or None
    path = Path(chosen) if chosen is not None else Path.home() / ".promptkit"
    return path.expanduser().resolve()


def workspace_id(workspace_root: Path | str) -> str:
    """First 12 hex digits of sha256 of the workspace root's absolute, symlink-free path."""
    absolute = str(Path(workspace_root).expanduser().resolve())
    return hashlib.sha256(absolute.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class StoredSession:
    """What `metadata.json` says about one stored session, plus when its files last changed."""

    session_id: str
    workspace_root: Path
    parent_id: str | None
    tags: dict[str, str]
    created_at: datetime
    updated_at: datetime
    status: Literal["active", "closed"]
    last_activity: datetime


class SessionStore:
    """Persists sessions under a state root; see the module docstring for the layout."""

    def __init__(
        self, state_root: Path | str | None = None, *, fsync: FsyncPolicy = _EVERY_EVENT
    ) -> None:
        self._state_root = resolve_state_root(state_root)
        self._fsync = fsync
        self._lock = threading.Lock()
        self._attachments: list[SessionAttachment] = []

    @property
    def state_root(self) -> Path:
        return self._state_root

    @property
    def fsync(self) -> FsyncPolicy:
        return self._fsync

    def session_dir(self, workspace_root: Path | str, session_id: str) -> Path:
        """Where session `session_id` of `workspace_root` lives; the id is checked first."""
        require_key(session_id, what="session id", error=SessionError)
        return self._sessions_dir(workspace_root) / session_id

    def attach(
        self, session: Session, workspace_root: Path | str, *, trace_id: str | None = None
    ) -> SessionAttachment:
        """Record every later change of `session` under `workspace_root` until closed.

        The current state is written as the new base first (so a session that already holds
        values, or was loaded, starts complete). A stored session with the same id can only be
        continued by the session `load` returned for it; anything else is refused rather than
        overwritten. `trace_id` (key rule; default a fresh random id) marks every record written
        through this attachment.
        """
        trace = (
            uuid.uuid4().hex
            if trace_id is None
            else require_key(trace_id, what="trace id", error=SessionError)
        )
        root = Path(workspace_root).expanduser().resolve()
        session_dir = self.session_dir(root, session.session_id)
        with session._lock:
            if session._recorder is not None:
                raise SessionError(
                    f"session {session.session_id!r} is already attached to a store; "
                    "close that attachment before attaching it again"
                )
            session_dir.mkdir(parents=True, exist_ok=True)
            attachment = SessionAttachment(
                store=self,
                session=session,
                workspace_root=root,
                session_dir=session_dir,
                trace_id=trace,
                file_lock=_acquire(session_dir),
            )
            try:
                stored = any((session_dir / name).exists() for name in (METADATA_FILE, BASE_FILE))
                if stored and session._store_dir != session_dir:
                    raise SessionError(
                        f"session {session.session_id!r} already exists in {session_dir}; "
                        f"continue it with store.load(workspace_root, {session.session_id!r}) "
                        "or give this session another id"
                    )
                attachment._start(existing=stored)
            except BaseException:
                attachment._release()
                raise
            session._attach_recorder(attachment, session_dir)
        with self._lock:
            self._attachments.append(attachment)
        _log.info(
            "session_attached",
            session_id=session.session_id,
            path=str(session_dir),
            trace_id=trace,
        )
        return attachment

    def compact(self, session: Session) -> None:
        """Rewrite `session`'s base.jsonl atomically with its current state; empty events.jsonl."""
        with self._lock:
            found = [a for a in self._attachments if a.session is session]
        if not found:
            raise SessionError(
                f"session {session.session_id!r} is not attached to this store; "
                "attach it before compacting"
            )
        found[0].compact()

    def load(self, workspace_root: Path | str, session_id: str) -> Session:
        """Rebuild session `session_id` of `workspace_root` from base plus events in seq order.

        A torn last line of events.jsonl (a crash mid-append) is skipped with a warning; any
        other damaged record raises SessionCorruptError naming file:line. Slice names must be
        registered in this process. Reducers are code, not data: register them again on the
        returned session before dispatching more events.
        """
        session_dir = self.session_dir(workspace_root, session_id)
        if not session_dir.is_dir():
            raise SessionError(
                f"no stored session {session_id!r} for workspace {Path(workspace_root)} "
                f"(looked in {session_dir})"
            )
        metadata = _read_metadata(session_dir / METADATA_FILE)
        base_seq, slices = _read_base(session_dir / BASE_FILE, session_id)
        seq = _replay_events(session_dir / EVENTS_FILE, session_id, base_seq, slices)
        return Session._restored(
            session_id=session_id,
            tags=metadata.tags,
            seq=seq,
            slices=slices,
            store_dir=session_dir,
        )

    def sessions(self, workspace_root: Path | str) -> tuple[StoredSession, ...]:
        """The stored sessions of `workspace_root`, most recently active first."""
        sessions_dir = self._sessions_dir(workspace_root)
        if not sessions_dir.is_dir():
            return ()
        found = []
        for entry in sessions_dir.iterdir():
            metadata_path = entry / METADATA_FILE
            # Directories we did not create (bad names, no metadata) are not sessions.
            if not (entry.is_dir() and _is_key(entry.name) and metadata_path.is_file()):
                continue
            found.append(_read_metadata(metadata_path))
        return tuple(sorted(found, key=lambda s: (s.last_activity, s.session_id), reverse=True))

    def latest(self, workspace_root: Path | str) -> Session | None:
        """The most recently active stored session of `workspace_root`, loaded; None if none."""
        stored = self.sessions(workspace_root)
        return self.load(workspace_root, stored[0].session_id) if stored else None

    def close(self) -> None:
        """Close every attachment made through this store (fsync, unlock, status 'closed')."""
        with self._lock:
            attachments = list(self._attachments)
        for attachment in attachments:
            attachment.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _sessions_dir(self, workspace_root: Path | str) -> Path:
        return self._state_root / "workspaces" / workspace_id(workspace_root) / "sessions"

    def _forget(self, attachment: SessionAttachment) -> None:
        with self._lock:
            if attachment in self._attachments:
                self._attachments.remove(attachment)


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
        self._created_at = datetime.now(UTC)
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
        for slice_type in unpersisted:
            if slice_type not in self._warned:
                self._warned.add(slice_type)
                _log.warning(
                    "session_slice_not_persisted",
                    session_id=self._session.session_id,
                    slice_type=slice_type.__qualname__,
                    hint="register it with register_slice_type to persist its values, or"
                    " with register_in_memory_slice_type if it is meant to stay in memory",
                )
        if not changes:
            return
        fd = self._require_open()
        line = _line(
            self._header(seq, "event") | {"event": event, "changes": changes},
        )
        path = self._session_dir / EVENTS_FILE
        try:
            _write_all(fd, line)
        except OSError as exc:
            # Cut a partial line off so the log stays a sequence of whole records.
            os.ftruncate(fd, self._size)
            raise SessionError(
                f"could not append event {seq} to {path}: {exc}; nothing was applied"
            ) from exc
        self._size += len(line)
        self._unsynced += 1
        policy = self._fsync
        if policy.mode == "every_event" or (
            policy.mode == "every_n" and self._unsynced >= policy.n
        ):
            os.fsync(fd)
            self._unsynced = 0

    def compact(self) -> None:
        """Write the session's state as base.jsonl (atomically), then empty events.jsonl."""
        with self._session._lock:
            self._require_open()
            self._compact()
            self._write_metadata(status="active")

    def close(self) -> None:
        """Stop recording: fsync what is pending, mark the session closed, release its lock."""
        with self._session._lock:
            if self._fd is None:
                return
            self._session._detach_recorder(self)
            if self._unsynced:
                os.fsync(self._fd)
            try:
                self._write_metadata(status="closed")
            finally:
                self._release()
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

    def _start(self, *, existing: bool) -> None:
        if existing:
            self._created_at = _read_metadata(self._session_dir / METADATA_FILE).created_at
        # Metadata first: a directory with metadata but no base is a creation cut short.
        self._write_metadata(status="active")
        self._fd = os.open(
            self._session_dir / EVENTS_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
        )
        self._compact()

    def _compact(self) -> None:
        fd = self._require_open()
        seq, slices = self._session._state()
        counts: dict[str, int] = {}
        value_lines: list[bytes] = []
        for slice_type, values in slices.items():
            name = slice_name(slice_type)
            if name is None:
                continue
            codec = codec_for(slice_type)
            counts[name] = len(values)
            header = self._header(seq, "value")
            for value in values:
                value_lines.append(_line(header | {"slice": name, "value": codec.encode(value)}))
        base_header = _line(self._header(seq, "base") | {"format": STORE_FORMAT, "slices": counts})
        write_atomically(self._session_dir / BASE_FILE, [base_header, *value_lines])
        # The new base already holds every event; if we crash before the truncation, load
        # skips events whose seq is not above the base's.
        os.ftruncate(fd, 0)
        os.fsync(fd)
        self._size = 0
        self._unsynced = 0

    def _header(self, seq: int, kind: str) -> dict[str, Any]:
        return {
            "trace_id": self._trace_id,
            "session_id": self._session.session_id,
            "seq": seq,
            "recorded_at": datetime.now(UTC).isoformat(),
            "kind": kind,
        }

    def _write_metadata(self, *, status: Literal["active", "closed"]) -> None:
        parent = self._session.parent
        document = {
            "format": STORE_FORMAT,
            "session_id": self._session.session_id,
            "workspace_root": str(self._workspace_root),
            "workspace_id": workspace_id(self._workspace_root),
            "parent_id": parent.session_id if parent is not None else None,
            "tags": dict(self._session.tags),
            "created_at": self._created_at.isoformat(),
            "updated_at": datetime.now(UTC).isoformat(),
            "status": status,
        }
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
        write_atomically(self._session_dir / METADATA_FILE, [text.encode("utf-8")])

    def _require_open(self) -> int:
        if self._fd is None:
            raise SessionError(
                f"the store attachment of session {self._session.session_id!r} is closed; "
                "attach the session again to keep recording it"
            )
        return self._fd

    def _release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._file_lock.release()


def _acquire(session_dir: Path) -> BaseFileLock:
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


def _line(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _is_key(name: str) -> bool:
    try:
        require_key(name, what="session id", error=SessionError)
    except SessionError:
        return False
    return True


def _read_metadata(path: Path) -> StoredSession:
    try:
        document = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise SessionCorruptError(
            f"{path}: missing; the session directory was not created by SessionStore or was "
            "partly deleted"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SessionCorruptError(f"{path}: not valid JSON ({exc}); fix or remove it") from None
    try:
        activity = max(
            (path.parent / name).stat().st_mtime_ns
            for name in (METADATA_FILE, BASE_FILE, EVENTS_FILE)
            if (path.parent / name).exists()
        )
        status = document["status"]
        if status not in ("active", "closed"):
            raise ValueError(f"unknown status {status!r}")
        tags = document["tags"]
        if not isinstance(tags, dict):
            raise TypeError("tags must be an object")
        if document["session_id"] != path.parent.name:
            raise ValueError(f"session_id {document['session_id']!r} is not the directory name")
        return StoredSession(
            session_id=str(document["session_id"]),
            workspace_root=Path(document["workspace_root"]),
            parent_id=document["parent_id"],
            tags={str(k): str(v) for k, v in tags.items()},
            created_at=datetime.fromisoformat(document["created_at"]),
            updated_at=datetime.fromisoformat(document["updated_at"]),
            status=status,
            last_activity=datetime.fromtimestamp(activity / 1e9, UTC),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SessionCorruptError(
            f"{path}: unexpected metadata ({exc!r}); fix or remove it"
        ) from None


def _lines(path: Path, *, allow_torn_tail: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each line; a torn last line is skipped when allowed."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SessionCorruptError(
            f"{path}: missing; the session was never completely created or the file was removed"
        ) from None
    lines = data.split(b"\n")
    # An unterminated tail stays in `lines`: it is either a complete record or a torn one.
    terminated = lines[-1] == b""
    if terminated:
        lines.pop()
    last = len(lines)
    for number, raw in enumerate(lines, start=1):
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if allow_torn_tail and number == last and not terminated:
                _log.warning(
                    "session_torn_line_skipped",
                    file=str(path),
                    line=number,
                    reason="unterminated last line, left by a crash during an append",
                )
                return
            raise SessionCorruptError(
                f"{path}:{number}: record is not valid JSON ({exc}); the file is damaged: "
                "restore it or delete that line by hand to load what remains"
            ) from None
        if not isinstance(record, dict):
            raise SessionCorruptError(f"{path}:{number}: record is not a JSON object")
        yield number, record


def _field(record: dict[str, Any], key: str, kind: type, path: Path, number: int) -> Any:
    value = record.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SessionCorruptError(
            f"{path}:{number}: field {key!r} missing or not a {kind.__name__}"
        )
    return value


def _check_record(
    record: dict[str, Any], kind: str, session_id: str, path: Path, number: int
) -> int:
    """The record's seq, once its kind, session and common fields are as expected."""
    if record.get("kind") != kind:
        raise SessionCorruptError(f"{path}:{number}: expected a {kind!r} record")
    found = _field(record, "session_id", str, path, number)
    if found != session_id:
        raise SessionCorruptError(
            f"{path}:{number}: record belongs to session {found!r}, not {session_id!r}"
        )
    _field(record, "trace_id", str, path, number)
    _field(record, "recorded_at", str, path, number)
    seq: int = _field(record, "seq", int, path, number)
    return seq


def _decode_values(
    name: str, values: list[Any], path: Path, number: int
) -> tuple[type[Any], list[Any]]:
    try:
        slice_type = slice_type_named(name)
        codec = codec_for(slice_type)
        return slice_type, [codec.decode(value) for value in values]
    except SessionError as exc:
        raise SessionError(f"{path}:{number}: {exc}") from None


def _read_base(path: Path, session_id: str) -> tuple[int, dict[type[Any], list[Any]]]:
    records = _lines(path, allow_torn_tail=False)
    first = next(records, None)
    if first is None:
        raise SessionCorruptError(f"{path}: empty; expected the base header record")
    number, header = first
    base_seq = _check_record(header, "base", session_id, path, number)
    if header.get("format") != STORE_FORMAT:
        raise SessionCorruptError(f"{path}:{number}: unsupported format {header.get('format')!r}")
    counts: dict[str, int] = _field(header, "slices", dict, path, number)
    slices: dict[type[Any], list[Any]] = {}
    seen: dict[str, int] = {}
    for number, record in records:
        if _check_record(record, "value", session_id, path, number) != base_seq:
            raise SessionCorruptError(f"{path}:{number}: expected seq {base_seq} like the header")
        name = _field(record, "slice", str, path, number)
        slice_type, values = _decode_values(name, [record.get("value")], path, number)
        slices.setdefault(slice_type, []).extend(values)
        seen[name] = seen.get(name, 0) + 1
    if seen != counts:
        raise SessionCorruptError(
            f"{path}: holds {seen} values per slice but its header promises {counts}; "
            "the base file is incomplete"
        )
    return base_seq, slices


_Decoded = tuple[type[Any], str, list[Any]]


def _replay_events(
    path: Path, session_id: str, base_seq: int, slices: dict[type[Any], list[Any]]
) -> int:
    if not path.exists():
        return base_seq
    # Decoded as read, so the raw JSON of each line can be freed at once.
    pending: list[tuple[int, int, list[_Decoded]]] = []
    for number, record in _lines(path, allow_torn_tail=True):
        seq = _check_record(record, "event", session_id, path, number)
        if seq > base_seq:
            changes = _field(record, "changes", list, path, number)
            pending.append((seq, number, [_decode_change(c, path, number) for c in changes]))
    # Appends arrive in seq order; sorting (stable) only matters for a hand-edited file.
    pending.sort(key=lambda item: item[0])
    last = base_seq
    for seq, number, decoded in pending:
        if seq == last:
            raise SessionCorruptError(f"{path}:{number}: seq {seq} appears twice")
        last = seq
        for slice_type, op, values in decoded:
            if op == "append":
                slices.setdefault(slice_type, []).extend(values)
            else:
                slices[slice_type] = values
    return last


def _decode_change(change: Any, path: Path, number: int) -> _Decoded:
    if not isinstance(change, dict):
        raise SessionCorruptError(f"{path}:{number}: a change is not a JSON object")
    op = change.get("op")
    if op not in ("append", "set"):
        raise SessionCorruptError(f"{path}:{number}: unknown change op {op!r}")
    name = _field(change, "slice", str, path, number)
    values = _field(change, "values", list, path, number)
    slice_type, decoded = _decode_values(name, values, path, number)
    return slice_type, op, decoded
