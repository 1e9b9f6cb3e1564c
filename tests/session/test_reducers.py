"""The built-in reducers, alone and routed through a session."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from promptkit.errors import SessionError
from promptkit.session import Session, SliceSeeded, append, replace_latest, upsert_by


@dataclass(frozen=True)
class Step:
    key: str
    state: str


@dataclass(frozen=True)
class StepStarted:
    key: str


@dataclass(frozen=True)
class Heading:
    text: str


def _step_key(step: Step) -> str:
    return step.key


def test_append_adds_the_event_at_the_end() -> None:
    first, second = Step("a", "todo"), Step("b", "todo")
    assert append((first,), second) == (first, second)


def test_replace_latest_keeps_only_the_newest_value() -> None:
    assert replace_latest((Heading("old"), Heading("older")), Heading("new")) == (Heading("new"),)


def test_upsert_by_replaces_the_value_with_the_same_key_in_place() -> None:
    reducer = upsert_by(_step_key)
    current = (Step("a", "todo"), Step("b", "todo"), Step("c", "todo"))
    assert reducer(current, Step("b", "done")) == (
        Step("a", "todo"),
        Step("b", "done"),
        Step("c", "todo"),
    )


def test_upsert_by_appends_a_value_with_a_new_key() -> None:
    reducer = upsert_by(_step_key)
    assert reducer((Step("a", "todo"),), Step("z", "todo")) == (
        Step("a", "todo"),
        Step("z", "todo"),
    )


def test_event_without_reducer_is_appended_to_its_own_slice() -> None:
    session = Session()
    session.dispatch(Heading("one"))
    session.dispatch(Heading("two"))
    assert session.select_all(Heading) == (Heading("one"), Heading("two"))


def test_registered_replace_latest_reducer_is_used_by_dispatch() -> None:
    session = Session()
    session.register_reducer(Heading, replace_latest)
    session.dispatch(Heading("one"))
    session.dispatch(Heading("two"))
    assert session.select_all(Heading) == (Heading("two"),)


def test_registered_upsert_reducer_is_used_by_dispatch() -> None:
    session = Session()
    session.register_reducer(Step, upsert_by(_step_key))
    session.dispatch(Step("a", "todo"))
    session.dispatch(Step("b", "todo"))
    session.dispatch(Step("a", "done"))
    assert session.select_all(Step) == (Step("a", "done"), Step("b", "todo"))


def test_reducer_can_feed_a_slice_of_another_type() -> None:
    def start(current: tuple[Step, ...], event: StepStarted) -> tuple[Step, ...]:
        return (*current, Step(event.key, "started"))

    session = Session()
    session.register_reducer(StepStarted, start, slice_type=Step)
    session.dispatch(StepStarted("a"))
    assert session.select_all(Step) == (Step("a", "started"),)
    assert session.select_all(StepStarted) == ()


def test_one_event_type_can_feed_several_slices() -> None:
    def start(current: tuple[Step, ...], event: StepStarted) -> tuple[Step, ...]:
        return (*current, Step(event.key, "started"))

    session = Session()
    session.register_reducer(StepStarted, start, slice_type=Step)
    session.register_reducer(StepStarted, append)
    session.dispatch(StepStarted("a"))
    assert session.select_all(Step) == (Step("a", "started"),)
    assert session.select_all(StepStarted) == (StepStarted("a"),)


def test_reducer_returning_a_list_is_refused_and_nothing_applied() -> None:
    def broken(current: tuple[Step, ...], event: Step) -> tuple[Step, ...]:
        return [*current, event]  # type: ignore[return-value]

    session = Session()
    session.register_reducer(Step, broken)
    with pytest.raises(SessionError, match="must return a tuple"):
        session.dispatch(Step("a", "todo"))
    assert session.select_all(Step) == ()
    assert session.seq == 0


def test_built_in_events_take_no_reducer() -> None:
    with pytest.raises(SessionError, match="handled by the session itself"):
        Session().register_reducer(SliceSeeded, append)
