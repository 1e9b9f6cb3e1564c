"""The public seam a session store works through: `Session.restore`, `attach_recorder`,
`detach_recorder`, `changes_held` and `stored_log`. A store written against it alone (the
in-memory one below) records and restores a session, and `SessionStore` uses nothing else."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from promptkit.errors import SessionError
from promptkit.session import Session, SessionRecorder, StoredLog

from ..conftest import REPO_ROOT

STORE_MODULES = ("_store.py", "_attachment.py")


@dataclass(frozen=True)
class Note:
    text: str


class ListRecorder:
    """A store's recorder kept in a list: each change as the session hands it over."""

    def __init__(self, session: Session) -> None:
        self.records: list[tuple[int, str | None, list[dict[str, Any]]]] = []
        # What was in the session when recording started, as a store writes its base.
        self.base = session.snapshot()

    def record(
        self,
        seq: int,
        event: str | None,
        changes: list[dict[str, Any]],
        unpersisted: tuple[type[Any], ...],
    ) -> None:
        self.records.append((seq, event, changes))


def test_a_recorder_is_started_with_the_state_and_then_gets_each_change() -> None:
    session = Session()
    session.dispatch(Note("before"))

    recorder = session.attach_recorder(lambda: ListRecorder(session))
    session.dispatch(Note("after"))

    assert recorder.base.select_all(Note) == (Note("before"),)
    assert [(seq, event) for seq, event, _ in recorder.records] == [(2, None)]


def test_a_recorder_refusing_to_start_leaves_the_session_unrecorded() -> None:
    session = Session()

    def refuse() -> ListRecorder:
        raise SessionError("the stored log moved on")

    with pytest.raises(SessionError, match="moved on"):
        session.attach_recorder(refuse)
    recorder = session.attach_recorder(lambda: ListRecorder(session))
    session.dispatch(Note("kept"))

    assert len(recorder.records) == 1


def test_a_second_recorder_is_refused_before_it_is_started() -> None:
    session = Session()
    session.attach_recorder(lambda: ListRecorder(session))
    started: list[str] = []

    def start() -> ListRecorder:
        started.append("started")
        return ListRecorder(session)

    with pytest.raises(SessionError, match="already attached to a store"):
        session.attach_recorder(start)
    assert started == []


def test_a_detached_recorder_gets_no_more_changes_and_the_copy_matches_its_log() -> None:
    session = Session()
    recorder = session.attach_recorder(lambda: ListRecorder(session))
    session.dispatch(Note("one"))

    session.detach_recorder(recorder, stored_log=StoredLog("memory:1", (1, "sum-1")))
    session.dispatch(Note("two"))

    assert len(recorder.records) == 1
    assert session.stored_log == StoredLog("memory:1", (1, "sum-1"))


def test_detaching_a_recorder_that_is_not_attached_changes_nothing() -> None:
    session = Session()
    attached = session.attach_recorder(lambda: ListRecorder(session))

    session.detach_recorder(ListRecorder(session), stored_log=StoredLog("elsewhere", (0, "")))
    session.dispatch(Note("still recorded"))

    assert len(attached.records) == 1
    assert session.stored_log is None


def test_a_restored_session_holds_its_slices_at_their_seq_and_the_log_it_came_from() -> None:
    log = StoredLog("memory:7", (7, "sum-7"))

    session = Session.restore(
        session_id="restored-1",
        tags={"team": "docs"},
        seq=7,
        slices={Note: [Note("a"), Note("b")]},
        stored_log=log,
    )
    session.dispatch(Note("c"))

    assert session.select_all(Note) == (Note("a"), Note("b"), Note("c"))
    assert (session.seq, session.session_id, dict(session.tags)) == (
        8,
        "restored-1",
        {"team": "docs"},
    )
    assert session.stored_log == log


def test_a_session_never_stored_has_no_stored_log() -> None:
    assert Session().stored_log is None


def test_changes_held_lets_the_holding_thread_read_and_dispatch() -> None:
    session = Session()

    with session.changes_held():
        session.dispatch(Note("inside"))
        seen = session.snapshot()

    assert seen.select_all(Note) == (Note("inside"),)


def test_the_recorder_protocol_is_met_by_a_plain_class() -> None:
    recorder: SessionRecorder = ListRecorder(Session())

    assert callable(recorder.record)


@pytest.mark.parametrize("module", STORE_MODULES)
def test_the_session_store_uses_no_private_attribute_of_a_session(module: str) -> None:
    path = REPO_ROOT / "src" / "promptkit" / "session" / module
    reached = [
        f"{module}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and "session" in ast.unparse(node.value).lower()
        and ast.unparse(node.value) != "self"
    ]

    assert reached == []
