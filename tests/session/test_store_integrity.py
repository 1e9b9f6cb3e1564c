"""Stored sessions are checked on load and never overwritten by an older copy: every record
carries a checksum chained to the one before, and a copy whose log moved on is refused."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from promptkit.errors import SessionCorruptError, SessionStaleError
from promptkit.session import Session, SessionStore, register_slice_type

from ..credentials import leaked_values, planted_file_text
from .conftest import recorded_by_a_writer_that_died


@dataclass(frozen=True)
class Step:
    index: int
    text: str


register_slice_type("test-integrity.step", Step)


def _stored(store: SessionStore, workspace: Path, count: int) -> Path:
    session = Session(session_id="s1")
    with store.attach(session, workspace):
        for index in range(count):
            session.dispatch(Step(index, f"step {index}"))
    return store.session_dir(workspace, "s1")


def _indexes(session: Session) -> list[int]:
    return [step.index for step in session.select_all(Step)]


def test_a_record_altered_after_writing_is_reported_with_its_file_and_line(
    store: SessionStore, workspace: Path
) -> None:
    events = _stored(store, workspace, 5) / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace('"index":2', '"index":7')
    events.write_text("".join(lines))

    with pytest.raises(SessionCorruptError, match=rf"{events}:3: record was altered"):
        store.load(workspace, "s1")


def test_a_deleted_middle_record_is_reported_where_the_chain_breaks(
    store: SessionStore, workspace: Path
) -> None:
    events = _stored(store, workspace, 5) / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    events.write_text("".join(lines[:2] + lines[3:]))

    with pytest.raises(SessionCorruptError, match=rf"{events}:3: the record before this one"):
        store.load(workspace, "s1")


def test_reordered_records_are_reported(store: SessionStore, workspace: Path) -> None:
    events = _stored(store, workspace, 4) / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    events.write_text("".join([lines[0], lines[2], lines[1], lines[3]]))

    with pytest.raises(SessionCorruptError, match=rf"{events}:2: the record before this one"):
        store.load(workspace, "s1")


def test_an_altered_base_value_is_reported_with_its_line(
    store: SessionStore, workspace: Path
) -> None:
    session_dir = _stored(store, workspace, 3)
    loaded = store.load(workspace, "s1")
    with store.attach(loaded, workspace):
        pass  # attaching writes the whole state as the base
    base = session_dir / "base.jsonl"
    base.write_text(base.read_text().replace("step 1", "step 8"))

    with pytest.raises(SessionCorruptError, match=rf"{base}:3: record was altered"):
        store.load(workspace, "s1")


def test_attaching_a_copy_after_the_log_moved_on_is_refused_and_keeps_the_newer_events(
    store: SessionStore, workspace: Path
) -> None:
    _stored(store, workspace, 3)
    older = store.load(workspace, "s1")
    newer = store.load(workspace, "s1")
    with store.attach(newer, workspace):
        newer.dispatch(Step(99, "from the other writer"))

    with pytest.raises(SessionStaleError, match="moved past the copy in hand"):
        store.attach(older, workspace)
    assert _indexes(store.load(workspace, "s1")) == [0, 1, 2, 99]


def test_a_copy_can_be_attached_again_after_its_own_attachment_closed(
    store: SessionStore, workspace: Path
) -> None:
    _stored(store, workspace, 1)
    loaded = store.load(workspace, "s1")
    with store.attach(loaded, workspace):
        loaded.dispatch(Step(5, "five"))
    with store.attach(loaded, workspace):
        loaded.dispatch(Step(6, "six"))

    assert _indexes(store.load(workspace, "s1")) == [0, 5, 6]


def test_an_append_after_another_writer_changed_the_log_is_refused_and_not_applied(
    store: SessionStore, workspace: Path
) -> None:
    session = Session(session_id="s1")
    with store.attach(session, workspace):
        session.dispatch(Step(0, "zero"))
        events = store.session_dir(workspace, "s1") / "events.jsonl"
        with events.open("a") as other_writer:
            other_writer.write(events.read_text().splitlines()[0] + "\n")

        with pytest.raises(SessionStaleError, match="changed under this attachment"):
            session.dispatch(Step(1, "one"))
        assert _indexes(session) == [0]


def test_a_session_stored_before_checksums_still_loads(
    store: SessionStore, workspace: Path
) -> None:
    session_dir = _stored(store, workspace, 3)
    for name in ("base.jsonl", "events.jsonl"):
        path = session_dir / name
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            del record["sum"], record["prev"]
            if record["kind"] == "base":
                record["format"] = 1
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
    metadata_path = session_dir / "metadata.json"
    metadata = json.loads(metadata_path.read_text())
    del metadata["head"]
    metadata_path.write_text(json.dumps(metadata | {"format": 1}))

    assert _indexes(store.load(workspace, "s1")) == [0, 1, 2]


def test_credentials_in_session_values_are_stored_redacted(
    store: SessionStore, workspace: Path
) -> None:
    session = Session(session_id="s1")
    with store.attach(session, workspace):
        session.dispatch(Step(0, planted_file_text()))
        store.compact(session)
        session.dispatch(Step(1, planted_file_text()))
    session_dir = store.session_dir(workspace, "s1")

    stored = "".join(path.read_text() for path in session_dir.iterdir() if path.is_file())
    assert leaked_values(stored) == []
    assert "[REDACTED:" in stored


def test_a_deleted_last_record_of_a_closed_session_is_reported(
    store: SessionStore, workspace: Path
) -> None:
    events = _stored(store, workspace, 4) / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    events.write_text("".join(lines[:-1]))

    with pytest.raises(SessionCorruptError, match=rf"{events}: ends at seq 3, but metadata.json"):
        store.load(workspace, "s1")


def test_an_emptied_event_log_of_a_closed_session_is_reported(
    store: SessionStore, workspace: Path
) -> None:
    events = _stored(store, workspace, 2) / "events.jsonl"
    events.write_text("")

    with pytest.raises(SessionCorruptError, match="records at the end were deleted"):
        store.load(workspace, "s1")


def test_events_appended_after_the_recorded_head_load_when_the_writer_died(
    store: SessionStore, workspace: Path
) -> None:
    recorded_by_a_writer_that_died(store, workspace, "s1", [Step(0, "zero"), Step(1, "one")])

    assert _indexes(store.load(workspace, "s1")) == [0, 1]


def test_a_crash_between_compaction_and_its_metadata_write_still_loads(
    store: SessionStore, workspace: Path
) -> None:
    session_dir = _stored(store, workspace, 3)
    metadata_before = (session_dir / "metadata.json").read_bytes()
    with store.attach(store.load(workspace, "s1"), workspace):
        pass  # compacts: the base is rewritten at the same seq with a new header checksum
    (session_dir / "metadata.json").write_bytes(metadata_before)  # its rewrite never happened

    assert _indexes(store.load(workspace, "s1")) == [0, 1, 2]
