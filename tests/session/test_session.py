"""Session behaviour in memory: selection, seeding, clearing, snapshots, clones, observers."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from promptkit.errors import SessionError
from promptkit.session import (
    Session,
    SessionRolledBack,
    SessionSnapshot,
    SliceCleared,
    SliceSeeded,
    ToolInvoked,
    register_slice_type,
)


@dataclass(frozen=True)
class Memo:
    text: str
    priority: int = 0


@dataclass(frozen=True)
class Scratch:
    """Never registered: lives in memory only."""

    payload: object


register_slice_type("test-session.memo", Memo)

WHEN = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def _tool_call(value: Any) -> ToolInvoked:
    return ToolInvoked(
        prompt_ns="ns",
        prompt_key="key",
        name="lookup",
        params={"query": "x"},
        result_message="ok",
        value=value,
        success=True,
        duration_s=0.25,
        call_id="call-1",
        invoked_at=WHEN,
    )


def test_select_latest_is_none_for_an_empty_slice() -> None:
    assert Session().select_latest(Memo) is None


def test_select_latest_returns_the_newest_value() -> None:
    session = Session()
    session.dispatch(Memo("a"))
    session.dispatch(Memo("b"))
    assert session.select_latest(Memo) == Memo("b")


def test_select_where_filters_in_order() -> None:
    session = Session()
    for text, priority in [("a", 1), ("b", 0), ("c", 2)]:
        session.dispatch(Memo(text, priority))
    assert session.select_where(Memo, lambda m: m.priority > 0) == (Memo("a", 1), Memo("c", 2))


def test_seed_slice_sets_the_slice_to_exactly_the_values() -> None:
    session = Session()
    session.dispatch(Memo("old"))
    session.seed_slice(Memo, [Memo("x"), Memo("y")])
    assert session.select_all(Memo) == (Memo("x"), Memo("y"))


def test_seed_slice_refuses_values_of_another_type() -> None:
    session = Session()
    with pytest.raises(SessionError, match="value 1 is a str"):
        session.seed_slice(Memo, [Memo("x"), "y"])
    assert session.select_all(Memo) == ()


def test_clear_slice_without_predicate_empties_it() -> None:
    session = Session()
    session.seed_slice(Memo, [Memo("x"), Memo("y")])
    session.clear_slice(Memo)
    assert session.select_all(Memo) == ()


def test_clear_slice_with_predicate_removes_only_matches() -> None:
    session = Session()
    session.seed_slice(Memo, [Memo("x", 1), Memo("y", 2), Memo("z", 1)])
    session.clear_slice(Memo, lambda m: m.priority == 1)
    assert session.select_all(Memo) == (Memo("y", 2),)


def test_seed_and_clear_reach_subscribers_as_events() -> None:
    session = Session()
    seen: list[object] = []
    session.subscribe(seen.append)
    session.seed_slice(Memo, [Memo("x")])
    session.clear_slice(Memo)
    assert seen == [SliceSeeded(Memo, (Memo("x"),)), SliceCleared(Memo, None)]


def test_subscriber_sees_the_event_after_it_was_applied() -> None:
    session = Session()
    observed: list[tuple[Memo, ...]] = []
    session.subscribe(lambda event: observed.append(session.select_all(Memo)))
    session.dispatch(Memo("a"))
    assert observed == [(Memo("a"),)]


def test_unsubscribed_callback_is_not_called() -> None:
    session = Session()
    seen: list[object] = []
    unsubscribe = session.subscribe(seen.append)
    session.dispatch(Memo("a"))
    unsubscribe()
    session.dispatch(Memo("b"))
    assert seen == [Memo("a")]


def test_subscriber_exception_reaches_the_dispatcher_and_the_event_stays_applied() -> None:
    session = Session()

    def fail(event: object) -> None:
        raise RuntimeError("observer broke")

    session.subscribe(fail)
    with pytest.raises(RuntimeError, match="observer broke"):
        session.dispatch(Memo("a"))
    assert session.select_all(Memo) == (Memo("a"),)


def test_subscriber_may_dispatch_from_its_callback() -> None:
    session = Session()

    def echo(event: object) -> None:
        if isinstance(event, Memo) and event.priority == 0:
            session.dispatch(Memo(event.text, 1))

    session.subscribe(echo)
    session.dispatch(Memo("a"))
    assert session.select_all(Memo) == (Memo("a"), Memo("a", 1))


def test_rollback_restores_the_slices_of_a_snapshot() -> None:
    session = Session()
    session.dispatch(Memo("kept"))
    session.dispatch(Scratch("kept too"))
    snapshot = session.snapshot()
    session.dispatch(Memo("dropped"))
    session.dispatch(Scratch("dropped"))
    session.rollback(snapshot)
    assert session.select_all(Memo) == (Memo("kept"),)
    assert session.select_all(Scratch) == (Scratch("kept too"),)


def test_rollback_empties_slices_absent_from_the_snapshot() -> None:
    session = Session()
    snapshot = session.snapshot()
    session.dispatch(Memo("later"))
    session.rollback(snapshot)
    assert session.select_all(Memo) == ()


def test_rollback_is_dispatched_as_an_event_and_seq_keeps_counting() -> None:
    session = Session()
    session.dispatch(Memo("a"))
    snapshot = session.snapshot()
    seen: list[object] = []
    session.subscribe(seen.append)
    session.rollback(snapshot)
    assert seen == [SessionRolledBack(snapshot)]
    assert session.seq == 2


def test_snapshot_is_not_changed_by_later_events() -> None:
    session = Session()
    session.dispatch(Memo("a"))
    snapshot = session.snapshot()
    session.dispatch(Memo("b"))
    assert snapshot.select_all(Memo) == (Memo("a"),)


def test_snapshot_json_round_trip_is_equal() -> None:
    session = Session(session_id="round-trip")
    session.dispatch(Memo("a", 3))
    session.dispatch(_tool_call({"rows": [1, 2], "ok": True}))
    snapshot = session.snapshot()
    assert SessionSnapshot.from_json(snapshot.to_json()) == snapshot


def test_snapshot_json_leaves_out_unregistered_slices() -> None:
    session = Session()
    session.dispatch(Memo("a"))
    session.dispatch(Scratch("in memory only"))
    restored = SessionSnapshot.from_json(session.snapshot().to_json())
    assert restored.select_all(Memo) == (Memo("a"),)
    assert restored.select_all(Scratch) == ()


def test_snapshot_from_json_refuses_unknown_slice_names() -> None:
    text = '{"format": 1, "session_id": "s", "seq": 1, "taken_at": "2025-01-01T00:00:00+00:00",'
    text += ' "slices": {"nobody.registered-this": []}}'
    with pytest.raises(
        SessionError, match=re.escape("unknown slice type name 'nobody.registered-this'")
    ):
        SessionSnapshot.from_json(text)


def test_snapshot_from_json_refuses_malformed_text() -> None:
    with pytest.raises(SessionError, match="malformed"):
        SessionSnapshot.from_json("{not json")


def test_clone_is_independent_of_the_original() -> None:
    session = Session(tags={"team": "search"})
    session.dispatch(Memo("shared"))
    twin = session.clone()
    twin.dispatch(Memo("twin only"))
    session.dispatch(Memo("original only"))
    assert twin.select_all(Memo) == (Memo("shared"), Memo("twin only"))
    assert session.select_all(Memo) == (Memo("shared"), Memo("original only"))
    assert twin.session_id != session.session_id
    assert twin.tags == {"team": "search"}


def test_clone_takes_the_given_id_and_keeps_reducers() -> None:
    session = Session()
    session.register_reducer(Memo, lambda current, event: (event,))
    twin = session.clone(session_id="twin")
    twin.dispatch(Memo("a"))
    twin.dispatch(Memo("b"))
    assert twin.session_id == "twin"
    assert twin.select_all(Memo) == (Memo("b"),)


def test_unserialisable_value_of_a_persisted_type_is_refused_and_nothing_applied() -> None:
    session = Session()
    seen: list[object] = []
    session.subscribe(seen.append)
    with pytest.raises(SessionError, match=r"ToolInvoked.*ToolInvoked\.value: .*set"):
        session.dispatch(_tool_call({1, 2}))
    assert session.select_all(ToolInvoked) == ()
    assert session.seq == 0
    assert seen == []


def test_value_of_an_unregistered_type_is_kept_in_memory_as_is() -> None:
    session = Session()
    payload = {1, 2}
    session.dispatch(Scratch(payload))
    assert session.select_all(Scratch) == (Scratch(payload),)


def test_default_session_ids_are_unique_and_sort_by_creation() -> None:
    ids = [Session().session_id for _ in range(50)]
    assert len(set(ids)) == 50
    assert [i.split("-")[0] for i in ids] == sorted(i.split("-")[0] for i in ids)


def test_eight_threads_dispatching_ten_thousand_events_lose_none() -> None:
    session = Session()
    per_thread = 1250
    start = threading.Barrier(8)

    def worker(thread: int) -> None:
        start.wait()
        for index in range(per_thread):
            session.dispatch(Memo(f"{thread}:{index}", thread))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    memos = session.select_all(Memo)
    assert len(memos) == 10_000
    assert session.seq == 10_000
    for number in range(8):
        mine = [m.text for m in memos if m.priority == number]
        assert mine == [f"{number}:{index}" for index in range(per_thread)]
