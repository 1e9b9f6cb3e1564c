"""The stored form of a session: files, record lines with their checksum chain, and reading.

Layout of one session directory (see `promptkit.session._store` for where it lives):

    metadata.json  what the session is (id, workspace, tags, status)
    base.jsonl     the slices at one seq: a header record, then one record per value
    events.jsonl   changes after it, one record per event, appended

Every record is one line of UTF-8 JSON carrying trace_id, session_id, seq, recorded_at and kind.
Since format 2 each record also ends with `"prev"` (the checksum of the record before it in the
same file, "" for the first) and `"sum"` (the first 16 hex digits of sha256 over the line
without its `sum`). So a record altered after it was written fails its own checksum, and a
deleted or reordered record breaks the chain at the next line: loading names the file and line.
metadata.json records the head (seq and checksum of the last record) whenever the files are
known to hold it: on attach, compaction and close. A load whose log ends before that head is
missing records at its end; only records appended after it (a process that died while
recording) can be lost without a trace, as a crash would lose them.
Format 1 files (no checksums) still load, unchecked; attaching rewrites them in format 2.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from promptkit._input_files import file_kind, open_regular_file
from promptkit._names import require_key
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import SessionCorruptError, SessionError, SessionStaleError
from promptkit.logging import get_logger
from promptkit.secrets import redact_value
from promptkit.session._codec import codec_for
from promptkit.session._slices import slice_name, slice_type_named

if TYPE_CHECKING:
    from promptkit.session._session import Session

_log = get_logger("promptkit.session")

STORE_FORMAT = 2
READABLE_FORMATS = (1, 2)
BASE_FILE = "base.jsonl"
EVENTS_FILE = "events.jsonl"
METADATA_FILE = "metadata.json"
LOCK_FILE = ".lock"

_SUM_SUFFIX = re.compile(rb',"sum":"([0-9a-f]{16})"\}$')
# How much of the end of events.jsonl is read to find its last record (records are one line
# each and rarely longer; a longer one makes `stored_head` read more).
_TAIL_CHUNK = 64 * 1024

StoreHead = tuple[int, str]
"""The last record of a stored session: (seq, checksum); the checksum is "" for format 1."""


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
    head: StoreHead | None = None
    """The last record the files were known to hold when metadata was written (None before
    format 2 recorded it)."""


def workspace_id(workspace_root: Path | str) -> str:
    """First 12 hex digits of sha256 of the workspace root's absolute, symlink-free path."""
    absolute = str(Path(workspace_root).expanduser().resolve())
    return hashlib.sha256(absolute.encode("utf-8")).hexdigest()[:12]


def encode_record(record: dict[str, Any], prev: str) -> tuple[bytes, str]:
    """`record` as one checksummed line chained to `prev`, and that line's checksum."""
    body = json.dumps(
        record | {"prev": prev}, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    checksum = _checksum(body.encode("utf-8"))
    return f'{body[:-1]},"sum":"{checksum}"}}\n'.encode(), checksum


def _checksum(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def read_session_file(path: Path, missing: str) -> bytes:
    """All of one of a session's files; SessionCorruptError when it is `missing` (the message
    says why), unreadable, or not a regular file: it is opened without blocking and its kind
    checked before a byte is read, since a FIFO would block the read and a device never ends."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SessionCorruptError(f"{path}: missing; {missing}") from None
    except OSError as error:
        raise SessionCorruptError(f"{path}: cannot be read ({error.strerror})") from error
    kind = file_kind(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise SessionCorruptError(
            f"{path}: a {kind}, not a regular file, so it was not read; a session's files are"
            " regular files written by SessionStore: remove it (or the whole session"
            " directory) by hand"
        )
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def read_metadata(path: Path) -> StoredSession:
    data = read_session_file(
        path, "the session directory was not created by SessionStore or was partly deleted"
    )
    activity = max(
        (path.parent / name).stat().st_mtime_ns
        for name in (METADATA_FILE, BASE_FILE, EVENTS_FILE)
        if (path.parent / name).exists()
    )
    return parse_metadata(
        data,
        str(path),
        session_id=path.parent.name,
        last_activity=datetime.fromtimestamp(activity / 1e9, UTC),
    )


def parse_metadata(
    data: bytes | str, path: str, *, session_id: str, last_activity: datetime
) -> StoredSession:
    """What metadata.json's text `data` (from `path`) says of session `session_id`."""
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SessionCorruptError(f"{path}: not valid JSON ({exc}); fix or remove it") from None
    try:
        status = document["status"]
        if status not in ("active", "closed"):
            raise ValueError(f"unknown status {status!r}")
        tags = document["tags"]
        if not isinstance(tags, dict):
            raise TypeError("tags must be an object")
        if document["session_id"] != session_id:
            raise ValueError(f"session_id {document['session_id']!r} is not {session_id!r}")
        return StoredSession(
            session_id=str(document["session_id"]),
            workspace_root=Path(document["workspace_root"]),
            parent_id=document["parent_id"],
            tags={str(k): str(v) for k, v in tags.items()},
            created_at=datetime.fromisoformat(document["created_at"]),
            updated_at=datetime.fromisoformat(document["updated_at"]),
            status=status,
            last_activity=last_activity,
            head=_recorded_head(document.get("head")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SessionCorruptError(
            f"{path}: unexpected metadata ({exc!r}); fix or remove it"
        ) from None


def metadata_text(
    session: Session,
    workspace_root: Path,
    *,
    created_at: datetime,
    status: Literal["active", "closed"],
    head: StoreHead | None,
) -> str:
    """metadata.json's text for `session`; `head` is the last record the store is known to
    hold, so a load can tell a deleted last record from one never written."""
    parent = session.parent
    document: dict[str, Any] = {
        "format": STORE_FORMAT,
        "session_id": session.session_id,
        "workspace_root": str(workspace_root),
        "workspace_id": workspace_id(workspace_root),
        "parent_id": parent.session_id if parent is not None else None,
        "tags": redact_value(dict(session.tags)),
        "created_at": created_at.isoformat(),
        "updated_at": SYSTEM_CLOCK.now().isoformat(),
        "status": status,
    }
    if head is not None:
        document["head"] = {"seq": head[0], "sum": head[1]}
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def record_header(session_id: str, trace_id: str, seq: int, kind: str) -> dict[str, Any]:
    """The fields every record starts with."""
    return {
        "trace_id": trace_id,
        "session_id": session_id,
        "seq": seq,
        "recorded_at": SYSTEM_CLOCK.now().isoformat(),
        "kind": kind,
    }


def event_line(
    session_id: str,
    trace_id: str,
    seq: int,
    event: str | None,
    changes: list[dict[str, Any]],
    prev: str,
) -> tuple[bytes, str]:
    """The record of event `seq` as one line chained to `prev`, and its checksum."""
    record = record_header(session_id, trace_id, seq, "event") | {
        "event": event,
        "changes": redact_value(changes),
    }
    return encode_record(record, prev)


def base_lines(session: Session, trace_id: str) -> tuple[list[bytes], StoreHead]:
    """base.jsonl's lines holding `session`'s state now (the caller holds its changes), and the
    head they leave: the base header's seq and checksum."""
    state = session.snapshot()
    seq, session_id = state.seq, session.session_id
    counts: dict[str, int] = {}
    values: list[dict[str, Any]] = []
    for slice_type, slice_values in state.slices.items():
        name = slice_name(slice_type)
        if name is None:
            continue
        codec = codec_for(slice_type)
        counts[name] = len(slice_values)
        header = record_header(session_id, trace_id, seq, "value")
        for value in slice_values:
            values.append(header | {"slice": name, "value": redact_value(codec.encode(value))})
    base = record_header(session_id, trace_id, seq, "base") | {
        "format": STORE_FORMAT,
        "slices": counts,
    }
    header_line, header_checksum = encode_record(base, "")
    lines = [header_line]
    prev = header_checksum
    for record in values:
        line, prev = encode_record(record, prev)
        lines.append(line)
    return lines, (seq, header_checksum)


def warn_unpersisted(
    session: Session, unpersisted: tuple[type[Any], ...], warned: set[type[Any]]
) -> None:
    """Warn once per slice type (remembered in `warned`) that its changes are not stored."""
    for slice_type in unpersisted:
        if slice_type not in warned:
            warned.add(slice_type)
            _log.warning(
                "session_slice_not_persisted",
                session_id=session.session_id,
                slice_type=slice_type.__qualname__,
                hint="register it with register_slice_type to persist its values, or"
                " with register_in_memory_slice_type if it is meant to stay in memory",
            )


def _recorded_head(value: Any) -> StoreHead | None:
    if value is None:
        return None
    seq, checksum = value["seq"], value["sum"]
    if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(checksum, str):
        raise TypeError("head must hold an integer seq and a string sum")
    return (seq, checksum)


def trace_id_or_new(trace_id: str | None) -> str:
    """`trace_id`, checked against the key rule, or a fresh random id when None: what marks
    every record an attachment writes."""
    if trace_id is not None:
        return require_key(trace_id, what="trace id", error=SessionError)
    import uuid  # here: a program that never attaches a session does not load it

    return uuid.uuid4().hex


def require_current(session: Session, location: str, stored: StoreHead | None) -> None:
    """Refuse to attach `session` over the session a store keeps at `location` unless it is
    the copy `load` returned from there and the stored head (`stored`; None when it cannot be
    read) is still where that copy was loaded: writing anything else would drop the stored
    session, or the events appended after the copy was loaded."""
    in_hand = session.stored_log
    if in_hand is None or in_hand.location != location:
        raise SessionError(
            f"session {session.session_id!r} already exists in {location}; "
            f"continue it with store.load(workspace_root, {session.session_id!r}) "
            "or give this session another id"
        )
    if stored is not None and stored != in_hand.head:
        raise SessionStaleError(
            f"session {session.session_id!r} in {location} moved past the copy in hand: the"
            f" stored log ends at seq {stored[0]}, this copy was loaded at seq {in_hand.head[0]}."
            " Attaching it would drop the newer events; load the session again"
            f" (store.load(workspace_root, {session.session_id!r})) and re-apply your changes"
        )


def check_head(
    loaded: StoreHead, recorded: StoreHead | None, *, events: str, recorder: str = METADATA_FILE
) -> None:
    """Refuse a loaded log that ends before the seq metadata.json (`recorder`) recorded for it;
    `events` names the log (the events file).

    Only the seq is compared: a compaction rewrites the base at the same seq with a new header
    checksum, and a crash between that and the metadata write must not read as damage. An
    altered record is caught by its own checksum.
    """
    if recorded is None or loaded[0] >= recorded[0]:
        return
    raise SessionCorruptError(
        f"{events}: ends at seq {loaded[0]}, but {recorder} recorded"
        f" seq {recorded[0]} as written: records at the end were deleted; restore the session"
        " from a backup"
    )


@dataclass(frozen=True)
class _Line:
    number: int
    record: dict[str, Any]
    checksum: str


def _file_bytes(path: Path) -> bytes:
    return read_session_file(
        path, "the session was never completely created or the file was removed"
    )


def _lines(data: bytes, path: str, *, allow_torn_tail: bool) -> Iterator[_Line]:
    """Each record of `data` (the records of `path`: a file, or a database's rows), its checksum
    chain verified; a torn last line is skipped when allowed."""
    lines = data.split(b"\n")
    # An unterminated tail stays in `lines`: it is either a complete record or a torn one.
    terminated = lines[-1] == b""
    if terminated:
        lines.pop()
    last = len(lines)
    prev: str | None = ""
    for number, raw in enumerate(lines, start=1):
        try:
            record = json.loads(raw)
        except RecursionError:
            raise SessionCorruptError(
                f"{path}:{number}: record is nested too deeply to read; the file was not"
                " written by SessionStore: restore it or delete that line by hand"
            ) from None
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
        if number == 1 and "sum" not in record:
            prev = None  # a format 1 file: written before records carried checksums
        checksum = "" if prev is None else _verified(raw, record, prev, path, number)
        if prev is not None:
            prev = checksum
        yield _Line(number, record, checksum)


def _verified(raw: bytes, record: dict[str, Any], prev: str, path: str, number: int) -> str:
    """The record's checksum, once it matches the line and the line follows `prev`."""
    found = _SUM_SUFFIX.search(raw)
    if found is None or _checksum(raw[: found.start()] + b"}") != found.group(1).decode():
        raise SessionCorruptError(
            f"{path}:{number}: record was altered after it was written (its checksum does not"
            " match); restore the file from a backup, or delete that line by hand to load what"
            " remains"
        )
    if record.get("prev") != prev:
        raise SessionCorruptError(
            f"{path}:{number}: the record before this one is missing or out of order (the"
            " checksum chain breaks here); restore the file from a backup"
        )
    return found.group(1).decode()


def _field(record: dict[str, Any], key: str, kind: type, path: str, number: int) -> Any:
    value = record.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SessionCorruptError(
            f"{path}:{number}: field {key!r} missing or not a {kind.__name__}"
        )
    return value


def _check_record(line: _Line, kind: str, session_id: str, path: str) -> int:
    """The record's seq, once its kind, session and common fields are as expected."""
    record, number = line.record, line.number
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
    name: str, values: list[Any], path: str, number: int
) -> tuple[type[Any], list[Any]]:
    try:
        slice_type = slice_type_named(name)
        codec = codec_for(slice_type)
        return slice_type, [codec.decode(value) for value in values]
    except SessionError as exc:
        raise SessionError(f"{path}:{number}: {exc}") from None


def read_base(path: Path, session_id: str) -> tuple[StoreHead, dict[type[Any], list[Any]]]:
    """The base's head (seq and header checksum) and its slices."""
    return parse_base(_file_bytes(path), str(path), session_id)


def parse_base(
    data: bytes, path: str, session_id: str
) -> tuple[StoreHead, dict[type[Any], list[Any]]]:
    """`read_base` of the records `data` (base.jsonl's bytes, from `path`)."""
    records = _lines(data, path, allow_torn_tail=False)
    header = next(records, None)
    if header is None:
        raise SessionCorruptError(f"{path}: empty; expected the base header record")
    number = header.number
    base_seq = _check_record(header, "base", session_id, path)
    if header.record.get("format") not in READABLE_FORMATS:
        raise SessionCorruptError(
            f"{path}:{number}: unsupported format {header.record.get('format')!r}"
        )
    counts: dict[str, int] = _field(header.record, "slices", dict, path, number)
    slices: dict[type[Any], list[Any]] = {}
    seen: dict[str, int] = {}
    for line in records:
        if _check_record(line, "value", session_id, path) != base_seq:
            raise SessionCorruptError(
                f"{path}:{line.number}: expected seq {base_seq} like the header"
            )
        name = _field(line.record, "slice", str, path, line.number)
        slice_type, values = _decode_values(name, [line.record.get("value")], path, line.number)
        slices.setdefault(slice_type, []).extend(values)
        seen[name] = seen.get(name, 0) + 1
    if seen != counts:
        raise SessionCorruptError(
            f"{path}: holds {seen} values per slice but its header promises {counts}; "
            "the base file is incomplete"
        )
    return (base_seq, header.checksum), slices


_Decoded = tuple[type[Any], str, list[Any]]


def replay_events(
    path: Path, session_id: str, base: StoreHead, slices: dict[type[Any], list[Any]]
) -> StoreHead:
    """Apply the events after `base` to `slices`; the head of the stored session."""
    if not path.exists():
        return base
    return replay_records(_file_bytes(path), str(path), session_id, base, slices)


def replay_records(
    data: bytes, path: str, session_id: str, base: StoreHead, slices: dict[type[Any], list[Any]]
) -> StoreHead:
    """`replay_events` of the records `data` (events.jsonl's bytes, from `path`)."""
    # Decoded as read, so the raw JSON of each line can be freed at once.
    pending: list[tuple[int, int, list[_Decoded]]] = []
    head = base
    for line in _lines(data, path, allow_torn_tail=True):
        seq = _check_record(line, "event", session_id, path)
        if seq > base[0]:
            changes = _field(line.record, "changes", list, path, line.number)
            decoded = [_decode_change(c, path, line.number) for c in changes]
            pending.append((seq, line.number, decoded))
            head = (seq, line.checksum)
    # Appends arrive in seq order (the chain proves it for format 2); sorting (stable) only
    # matters for a hand-edited format 1 file.
    pending.sort(key=lambda item: item[0])
    last = base[0]
    for seq, number, decoded in pending:
        if seq == last:
            raise SessionCorruptError(f"{path}:{number}: seq {seq} appears twice")
        last = seq
        for slice_type, op, values in decoded:
            if op == "append":
                slices.setdefault(slice_type, []).extend(values)
            else:
                slices[slice_type] = values
    return head


def _decode_change(change: Any, path: str, number: int) -> _Decoded:
    if not isinstance(change, dict):
        raise SessionCorruptError(f"{path}:{number}: a change is not a JSON object")
    op = change.get("op")
    if op not in ("append", "set"):
        raise SessionCorruptError(f"{path}:{number}: unknown change op {op!r}")
    name = _field(change, "slice", str, path, number)
    values = _field(change, "values", list, path, number)
    slice_type, decoded = _decode_values(name, values, path, number)
    return slice_type, op, decoded


def stored_head(session_dir: Path) -> StoreHead | None:
    """The head of the session stored in `session_dir` without loading it: the last event
    record after the base, else the base header; None when there is no readable base."""
    try:
        with open_regular_file(session_dir / BASE_FILE) as base_file:
            header = json.loads(base_file.readline())
        base: StoreHead = (int(header["seq"]), str(header.get("sum", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    last = _last_record(session_dir / EVENTS_FILE)
    if last is None or not isinstance(last.get("seq"), int) or last["seq"] <= base[0]:
        return base
    return (last["seq"], str(last.get("sum", "")))


def _last_record(path: Path) -> dict[str, Any] | None:
    """The last complete record of `path` (a torn tail is ignored), or None."""
    try:
        with open_regular_file(path) as file:
            size = file.seek(0, 2)
            chunk = b""
            start = size
            while start > 0:
                start = max(0, start - _TAIL_CHUNK)
                file.seek(start)
                chunk = file.read(size - start)
                lines = chunk.rstrip(b"\n").split(b"\n")
                if len(lines) > 1 or start == 0:
                    break
    except OSError:
        return None
    for raw in reversed(chunk.split(b"\n")):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            return record
    return None
