"""SessionStore in one process: layout, records, round trips, compaction, recovery, refusals."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from promptkit.errors import SessionCorruptError, SessionError
from promptkit.session import (
    FsyncPolicy,
    PromptRendered,
    Session,
    SessionStore,
    register_in_memory_slice_type,
    register_slice_type,
    replace_latest,
    resolve_state_root,
    workspace_id,
)
from promptkit.session._records import encode_record

from ..conftest import committed_repo
from .conftest import recorded_by_a_writer_that_died


@dataclass(frozen=True)
class Entry:
    index: int
    text: str


@dataclass(frozen=True)
class Focus:
    topic: str


@dataclass(frozen=True)
class Transient:
    text: str


@dataclass(frozen=True)
class Scratch:
    text: str


register_slice_type("test-store.entry", Entry)
register_slice_type("test-store.focus", Focus)
register_in_memory_slice_type(Scratch)

WHEN = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
PROC_FDS = Path("/proc/self/fd")


def _write(store: SessionStore, workspace: Path, count: int, session_id: str = "s1") -> Session:
    session = Session(session_id=session_id, tags={"branch": "main"})
    with store.attach(session, workspace):
        for index in range(count):
            session.dispatch(Entry(index, f"entry {index}"))
    return session


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _edit_and_reseal(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` in every record of `path` and write the checksums anew, as a
    careful hand edit would: the edit itself, not a checksum, is then what load reports."""
    lines: list[bytes] = []
    prev = ""
    for record in _records(path):
        record.pop("sum")
        record.pop("prev")
        edited = json.loads(json.dumps(record).replace(old, new))
        line, prev = encode_record(edited, prev)
        lines.append(line)
    path.write_bytes(b"".join(lines))


def test_state_root_argument_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTKIT_HOME", str(tmp_path / "from-env"))
    assert resolve_state_root(tmp_path / "explicit") == tmp_path / "explicit"


def test_state_root_comes_from_promptkit_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTKIT_HOME", str(tmp_path / "from-env"))
    assert SessionStore().state_root == tmp_path / "from-env"


def test_state_root_defaults_to_dot_promptkit_in_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROMPTKIT_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_state_root() == tmp_path / ".promptkit"


def test_workspace_id_is_twelve_hex_of_the_sha256_of_the_absolute_root(workspace: Path) -> None:
    import hashlib

    expected = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:12]
    assert workspace_id(workspace) == expected
    assert workspace_id(workspace / "sub" / "..") == expected


def test_session_files_follow_the_documented_layout(
    store: SessionStore, state_root: Path, workspace: Path
) -> None:
    _write(store, workspace, 2)
    session_dir = state_root / "workspaces" / workspace_id(workspace) / "sessions" / "s1"
    assert {p.name for p in session_dir.iterdir()} >= {
        "base.jsonl",
        "events.jsonl",
        "metadata.json",
    }
    metadata = json.loads((session_dir / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["workspace_root"] == str(workspace.resolve())
    assert metadata["status"] == "closed"
    assert metadata["tags"] == {"branch": "main"}
    assert datetime.fromisoformat(metadata["created_at"]) <= datetime.fromisoformat(
        metadata["updated_at"]
    )


def test_parent_id_and_trace_id_are_recorded(store: SessionStore, workspace: Path) -> None:
    parent = Session(session_id="parent")
    child = Session(session_id="child", parent=parent)
    with store.attach(child, workspace, trace_id="run-42"):
        child.dispatch(Entry(0, "x"))
    session_dir = store.session_dir(workspace, "child")
    metadata = json.loads((session_dir / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["parent_id"] == "parent"
    assert {r["trace_id"] for r in _records(session_dir / "events.jsonl")} == {"run-42"}
    assert store.sessions(workspace)[0].parent_id == "parent"


def test_every_record_carries_trace_session_seq_and_utc_time(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 3)
    session_dir = store.session_dir(workspace, "s1")
    records = _records(session_dir / "base.jsonl") + _records(session_dir / "events.jsonl")
    assert [r["seq"] for r in records if r["kind"] == "event"] == [1, 2, 3]
    for record in records:
        assert isinstance(record["trace_id"], str) and record["trace_id"]
        assert record["session_id"] == "s1"
        recorded = datetime.fromisoformat(str(record["recorded_at"]))
        assert recorded.utcoffset() == timedelta(0)


def test_loaded_session_has_the_same_slices_seq_and_tags(
    store: SessionStore, workspace: Path
) -> None:
    written = _write(store, workspace, 5)
    loaded = store.load(workspace, "s1")
    assert loaded.select_all(Entry) == written.select_all(Entry)
    assert loaded.seq == written.seq == 5
    assert loaded.tags == {"branch": "main"}


def test_seed_clear_and_rollback_are_persisted(store: SessionStore, workspace: Path) -> None:
    session = Session(session_id="edits")
    with store.attach(session, workspace):
        session.dispatch(Entry(1, "one"))
        snapshot = session.snapshot()
        session.seed_slice(Entry, [Entry(2, "two"), Entry(3, "three")])
        session.clear_slice(Entry, lambda e: e.index == 2)
        session.dispatch(Focus("testing"))
        session.rollback(snapshot)
        session.dispatch(Entry(4, "four"))
        expected = session.select_all(Entry)
    loaded = store.load(workspace, "edits")
    assert loaded.select_all(Entry) == expected == (Entry(1, "one"), Entry(4, "four"))
    assert loaded.select_all(Focus) == ()


def test_custom_reducer_results_are_replayed_without_the_reducer(
    store: SessionStore, workspace: Path
) -> None:
    session = Session(session_id="focus")
    session.register_reducer(Focus, replace_latest)
    with store.attach(session, workspace):
        session.dispatch(Focus("a"))
        session.dispatch(Focus("b"))
    assert store.load(workspace, "focus").select_all(Focus) == (Focus("b"),)


def test_attach_writes_the_existing_state_as_base(store: SessionStore, workspace: Path) -> None:
    session = Session(session_id="late")
    session.dispatch(Entry(0, "before attach"))
    store.attach(session, workspace).close()
    assert store.load(workspace, "late").select_all(Entry) == (Entry(0, "before attach"),)


def test_loaded_session_can_be_attached_again_and_continued(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 2)
    resumed = store.load(workspace, "s1")
    with store.attach(resumed, workspace):
        resumed.dispatch(Entry(2, "entry 2"))
    loaded = store.load(workspace, "s1")
    assert [e.index for e in loaded.select_all(Entry)] == [0, 1, 2]
    assert loaded.seq == 3


def test_attaching_a_new_session_over_a_stored_id_is_refused(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 2)
    with pytest.raises(SessionError, match=r"already exists .* store\.load"):
        store.attach(Session(session_id="s1"), workspace)
    assert len(store.load(workspace, "s1").select_all(Entry)) == 2


def test_attaching_a_session_twice_is_refused(store: SessionStore, workspace: Path) -> None:
    session = Session(session_id="twice")
    store.attach(session, workspace)
    with pytest.raises(SessionError, match="already attached"):
        store.attach(session, workspace)


def test_a_second_store_cannot_record_a_session_being_recorded(
    store: SessionStore, state_root: Path, workspace: Path
) -> None:
    store.attach(Session(session_id="busy"), workspace)
    other = store.load(workspace, "busy")
    with SessionStore(state_root) as second, pytest.raises(SessionError, match="already being"):
        second.attach(other, workspace)


def test_compact_moves_events_into_base_and_empties_events(
    store: SessionStore, workspace: Path
) -> None:
    session = Session(session_id="compacted")
    store.attach(session, workspace)
    for index in range(4):
        session.dispatch(Entry(index, "x"))
    store.compact(session)
    session_dir = store.session_dir(workspace, "compacted")
    assert (session_dir / "events.jsonl").read_bytes() == b""
    header, *values = _records(session_dir / "base.jsonl")
    assert header["seq"] == 4 and len(values) == 4
    session.dispatch(Entry(4, "after compaction"))
    assert len(store.load(workspace, "compacted").select_all(Entry)) == 5
    assert [p.name for p in session_dir.iterdir() if p.name.endswith(".tmp")] == []


def test_events_already_in_the_base_are_not_replayed_twice(
    store: SessionStore, workspace: Path
) -> None:
    session = Session(session_id="half-compacted")
    store.attach(session, workspace)
    for index in range(3):
        session.dispatch(Entry(index, "x"))
    events = store.session_dir(workspace, "half-compacted") / "events.jsonl"
    before = events.read_bytes()
    store.compact(session)
    # As if the process died after base.jsonl was replaced but before events.jsonl was emptied.
    events.write_bytes(before)
    assert len(store.load(workspace, "half-compacted").select_all(Entry)) == 3


def test_compact_refuses_a_session_that_is_not_attached(store: SessionStore) -> None:
    with pytest.raises(SessionError, match="not attached to this store"):
        store.compact(Session())


def test_dispatch_after_close_is_no_longer_recorded(store: SessionStore, workspace: Path) -> None:
    session = _write(store, workspace, 1)
    session.dispatch(Entry(99, "not recorded"))
    assert len(store.load(workspace, "s1").select_all(Entry)) == 1


@pytest.mark.parametrize(
    "policy", [FsyncPolicy.every_event(), FsyncPolicy.every(3), FsyncPolicy.on_close()]
)
def test_every_fsync_policy_records_every_event(
    policy: FsyncPolicy, state_root: Path, workspace: Path
) -> None:
    with SessionStore(state_root, fsync=policy) as store:
        _write(store, workspace, 7)
        assert len(store.load(workspace, "s1").select_all(Entry)) == 7


def test_fsync_every_n_needs_a_positive_n() -> None:
    with pytest.raises(SessionError, match="n >= 1"):
        FsyncPolicy.every(0)


def test_corrupt_middle_line_raises_naming_file_and_line(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 3)
    events = store.session_dir(workspace, "s1") / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1][:40] + "\n"
    events.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(SessionCorruptError, match=rf"{events}:2: record is not valid JSON"):
        store.load(workspace, "s1")


def test_corrupt_last_line_with_its_newline_is_not_taken_for_a_torn_append(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 2)
    events = store.session_dir(workspace, "s1") / "events.jsonl"
    with events.open("a", encoding="utf-8") as handle:
        handle.write("{broken}\n")
    with pytest.raises(SessionCorruptError, match=rf"{events}:3:"):
        store.load(workspace, "s1")


def test_torn_last_line_is_skipped_with_a_warning_naming_file_and_line(
    store: SessionStore, workspace: Path
) -> None:
    # The writer died during its last append: the session was never closed.
    recorded_by_a_writer_that_died(
        store, workspace, "s1", [Entry(index, f"entry {index}") for index in range(3)]
    )
    events = store.session_dir(workspace, "s1") / "events.jsonl"
    whole = events.read_bytes()
    last_start = whole.rstrip(b"\n").rfind(b"\n") + 1
    events.write_bytes(whole[: last_start + 25])
    with capture_logs() as logs:
        loaded = store.load(workspace, "s1")
    assert [e.index for e in loaded.select_all(Entry)] == [0, 1]
    assert loaded.seq == 2
    warnings = [log for log in logs if log["event"] == "session_torn_line_skipped"]
    assert warnings == [
        {
            "event": "session_torn_line_skipped",
            "log_level": "warning",
            "file": str(events),
            "line": 3,
            "reason": "unterminated last line, left by a crash during an append",
        }
    ]


def test_record_of_another_session_is_reported_as_corrupt(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 1)
    events = store.session_dir(workspace, "s1") / "events.jsonl"
    _edit_and_reseal(events, '"session_id": "s1"', '"session_id": "s2"')
    with pytest.raises(SessionCorruptError, match=rf"{events}:1: record belongs to session 's2'"):
        store.load(workspace, "s1")


def test_unknown_slice_name_on_load_says_what_to_register(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 1)
    events = store.session_dir(workspace, "s1") / "events.jsonl"
    _edit_and_reseal(events, "test-store.entry", "test-store.gone")
    with pytest.raises(
        SessionError, match=rf"{events}:1: unknown slice type name 'test-store.gone'"
    ):
        store.load(workspace, "s1")


def test_missing_session_is_a_clear_error(store: SessionStore, workspace: Path) -> None:
    with pytest.raises(SessionError, match="no stored session 'nobody'"):
        store.load(workspace, "nobody")


@pytest.mark.parametrize("bad_id", ["..", "../escape", "a/b", "/etc", "nul\x00byte", "UPPER", ""])
def test_traversal_and_malformed_ids_are_refused_before_any_path_is_built(
    store: SessionStore, state_root: Path, workspace: Path, bad_id: str
) -> None:
    with pytest.raises(SessionError, match="invalid session id"):
        store.load(workspace, bad_id)
    with pytest.raises(SessionError, match="invalid session id"):
        store.session_dir(workspace, bad_id)
    with pytest.raises(SessionError, match="invalid session id"):
        Session(session_id=bad_id)
    assert not state_root.exists()


def test_tags_follow_the_key_rule() -> None:
    with pytest.raises(SessionError, match="invalid session tag name"):
        Session(tags={"../x": "y"})
    with pytest.raises(SessionError, match="invalid value of session tag 'x'"):
        Session(tags={"x": "a/b"})


def test_latest_is_none_for_a_workspace_without_sessions(
    store: SessionStore, workspace: Path
) -> None:
    assert store.latest(workspace) is None


def test_latest_loads_the_most_recently_active_session(
    store: SessionStore, workspace: Path
) -> None:
    _write(store, workspace, 1, session_id="older")
    _write(store, workspace, 2, session_id="newer")
    older = store.load(workspace, "older")
    with store.attach(older, workspace):
        older.dispatch(Entry(5, "touched last"))
    latest = store.latest(workspace)
    assert latest is not None and latest.session_id == "older"
    assert [s.session_id for s in store.sessions(workspace)] == ["older", "newer"]


def test_sessions_of_another_workspace_are_not_listed(
    store: SessionStore, workspace: Path, tmp_path: Path
) -> None:
    _write(store, workspace, 1)
    other = tmp_path / "other"
    other.mkdir()
    assert store.sessions(other) == ()


def test_unregistered_slices_are_kept_in_memory_only_with_a_warning(
    store: SessionStore, workspace: Path
) -> None:
    session = Session(session_id="mixed")
    with capture_logs() as logs, store.attach(session, workspace):
        session.dispatch(Transient("a"))
        session.dispatch(Transient("b"))
        session.dispatch(Entry(1, "kept"))
    warnings = [log for log in logs if log["event"] == "session_slice_not_persisted"]
    assert [w["slice_type"] for w in warnings] == ["Transient"]
    loaded = store.load(workspace, "mixed")
    assert loaded.select_all(Transient) == ()
    assert loaded.select_all(Entry) == (Entry(1, "kept"),)


def test_slices_declared_in_memory_are_neither_recorded_nor_warned_about(
    store: SessionStore, workspace: Path
) -> None:
    session = Session(session_id="declared")
    with capture_logs() as logs, store.attach(session, workspace):
        session.dispatch(Scratch("a"))
        session.dispatch(Transient("b"))
    warnings = [log for log in logs if log["event"] == "session_slice_not_persisted"]
    assert [w["slice_type"] for w in warnings] == ["Transient"]
    assert session.select_all(Scratch) == (Scratch("a"),)
    assert store.load(workspace, "declared").select_all(Scratch) == ()


def test_promptkit_events_are_recorded_by_every_store(store: SessionStore, workspace: Path) -> None:
    session = Session(session_id="prompts")
    rendered = PromptRendered("ns", "key", "name", "# hi", (), WHEN)
    with store.attach(session, workspace):
        session.dispatch(rendered)
    assert store.load(workspace, "prompts").select_all(PromptRendered) == (rendered,)


def test_records_are_utf8_json(store: SessionStore, workspace: Path) -> None:
    session = Session(session_id="unicode")
    with store.attach(session, workspace):
        session.dispatch(Entry(0, "세션 ✓"))
    raw = (store.session_dir(workspace, "unicode") / "events.jsonl").read_bytes()
    assert "세션 ✓".encode() in raw
    assert store.load(workspace, "unicode").select_all(Entry) == (Entry(0, "세션 ✓"),)


@pytest.mark.skipif(not PROC_FDS.is_dir(), reason="counting open files needs /proc/self/fd")
def test_store_files_are_not_left_open_after_close(state_root: Path, workspace: Path) -> None:
    before = len(list(PROC_FDS.iterdir()))
    with SessionStore(state_root) as store:
        _write(store, workspace, 3)
        store.attach(store.load(workspace, "s1"), workspace)
    assert len(list(PROC_FDS.iterdir())) == before


def test_sessions_stored_inside_a_git_repository_are_ignored_by_git(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"README.md": "# Demo\n"})
    with SessionStore(repo / ".state").attach(Session(), repo) as attachment:
        attachment.session.dispatch(Entry(0, "entry 0"))

    untracked = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert untracked.stdout == ""
