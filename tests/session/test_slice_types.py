"""Registering slice types and storing their values as JSON: what is accepted and refused."""

from __future__ import annotations

import enum
import re
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from promptkit.errors import SessionError
from promptkit.session import (
    PromptExecuted,
    PromptRendered,
    Session,
    SessionSnapshot,
    ToolInvoked,
    register_in_memory_slice_type,
    register_slice_type,
)


class Phase(enum.Enum):
    PLAN = "plan"
    BUILD = "build"


@dataclass(frozen=True)
class Owner:
    name: str
    since: date


@dataclass(frozen=True)
class Task:
    title: str
    phase: Phase
    owners: tuple[Owner, ...]
    labels: Mapping[str, str]
    due: datetime | None
    weight: float
    extra: Any
    kind: Literal["bug", "feature"] = "feature"
    pair: tuple[int, str] = (0, "")


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    score: int
    reasons: tuple[str, ...]
    decided_at: datetime


class Mutable(BaseModel):
    score: int


@dataclass
class Unfrozen:
    text: str


@dataclass(frozen=True)
class HoldsAnEvent:
    signal: threading.Event


@dataclass(frozen=True)
class Ticket:
    id: uuid.UUID
    where: Path


@dataclass(frozen=True)
class Renamed:
    text: str


@dataclass(frozen=True)
class Other:
    text: str


register_slice_type("test-types.task", Task)
register_slice_type("test-types.verdict", Verdict)
register_slice_type("test-types.ticket", Ticket)
register_slice_type("test-types.renamed", Renamed)

WHEN = datetime(2025, 6, 1, 12, 30, tzinfo=UTC)


def _round_trip(session: Session) -> SessionSnapshot:
    return SessionSnapshot.from_json(session.snapshot().to_json())


def test_dataclass_with_dates_enums_tuples_mappings_and_nesting_round_trips() -> None:
    task = Task(
        title="ship",
        phase=Phase.BUILD,
        owners=(Owner("ada", date(2024, 1, 1)), Owner("lin", date(2024, 2, 2))),
        labels={"area": "store"},
        due=WHEN,
        weight=2,
        extra={"notes": ["a", "b"], "count": 3, "none": None},
        kind="bug",
        pair=(7, "seven"),
    )
    session = Session()
    session.dispatch(task)
    assert _round_trip(session).select_all(Task) == (task,)


def test_frozen_pydantic_model_round_trips() -> None:
    verdict = Verdict(score=4, reasons=("clear", "short"), decided_at=WHEN)
    session = Session()
    session.dispatch(verdict)
    assert _round_trip(session).select_all(Verdict) == (verdict,)


def test_uuid_and_path_fields_round_trip() -> None:
    ticket = Ticket(id=uuid.UUID("12345678-1234-5678-1234-567812345678"), where=Path("a/b.txt"))
    session = Session()
    session.dispatch(ticket)
    assert session.snapshot().to_json().count("12345678-1234-5678-1234-567812345678") == 1
    assert _round_trip(session).select_all(Ticket) == (ticket,)


def test_promptkit_events_round_trip() -> None:
    session = Session()
    events = [
        PromptRendered("ns", "key", None, "# Prompt", ("lookup",), WHEN),
        ToolInvoked("ns", "key", "lookup", {"q": "x"}, "found", [1, 2], True, 0.5, "c1", WHEN),
        PromptExecuted(
            "ns", "key", "name", "openai", "gpt", "text", {"a": 1}, 10, 5, None, 1.5, WHEN
        ),
    ]
    for event in events:
        session.dispatch(event)
    restored = _round_trip(session)
    assert restored.select_all(PromptRendered) == (events[0],)
    assert restored.select_all(ToolInvoked) == (events[1],)
    assert restored.select_all(PromptExecuted) == (events[2],)


def test_tuples_inside_any_fields_come_back_as_lists() -> None:
    session = Session()
    session.dispatch(ToolInvoked("ns", "k", "t", {"pair": (1, 2)}, "ok", None, True, 0, "c", WHEN))
    (restored,) = _round_trip(session).select_all(ToolInvoked)
    assert restored.params == {"pair": [1, 2]}


def test_field_holding_the_wrong_type_is_refused_naming_the_field() -> None:
    task = Task("t", Phase.PLAN, (), {}, None, 1.0, None)
    wrong = Task("t", "plan", (), {}, None, 1.0, None)  # type: ignore[arg-type]
    session = Session()
    session.dispatch(task)
    with pytest.raises(SessionError, match=r"Task\.phase: expected Phase, got str"):
        session.dispatch(wrong)


def test_non_finite_float_is_refused() -> None:
    with pytest.raises(SessionError, match=r"Task\.weight: inf is not a JSON number"):
        Session().dispatch(Task("t", Phase.PLAN, (), {}, None, float("inf"), None))


def test_non_string_mapping_key_in_any_field_is_refused() -> None:
    params: dict[Any, str] = {1: "x"}
    with pytest.raises(SessionError, match=r"ToolInvoked\.params.*mapping key 1"):
        Session().dispatch(ToolInvoked("ns", "k", "t", params, "", None, True, 0, "c", WHEN))


def test_unfrozen_dataclass_cannot_be_registered() -> None:
    with pytest.raises(SessionError, match="not a frozen dataclass or a frozen pydantic model"):
        register_slice_type("test-types.unfrozen", Unfrozen)


def test_unfrozen_pydantic_model_cannot_be_registered() -> None:
    with pytest.raises(SessionError, match="not a frozen dataclass"):
        register_slice_type("test-types.mutable", Mutable)


def test_type_with_an_unstorable_field_cannot_be_registered() -> None:
    with pytest.raises(
        SessionError, match=r"HoldsAnEvent\.signal: Event is not a supported field type"
    ):
        register_slice_type("test-types.holds-an-event", HoldsAnEvent)


def test_registering_the_same_pair_twice_is_allowed() -> None:
    register_slice_type("test-types.renamed", Renamed)


def test_a_name_cannot_be_reused_for_another_type() -> None:
    with pytest.raises(SessionError, match="already registered"):
        register_slice_type("test-types.renamed", Other)


def test_a_type_has_only_one_name() -> None:
    with pytest.raises(SessionError, match=re.escape("already registered as 'test-types.renamed'")):
        register_slice_type("test-types.renamed-again", Renamed)


def test_slice_type_names_follow_the_key_rule() -> None:
    with pytest.raises(SessionError, match="invalid slice type name"):
        register_slice_type("Bad/Name", Other)


@dataclass(frozen=True)
class Scribble:
    text: str


def test_declaring_a_type_in_memory_twice_is_allowed() -> None:
    register_in_memory_slice_type(Scribble)
    register_in_memory_slice_type(Scribble)


def test_a_type_declared_in_memory_cannot_be_registered_for_persistence() -> None:
    register_in_memory_slice_type(Scribble)
    with pytest.raises(SessionError, match="either persisted or in-memory"):
        register_slice_type("test-types.scribble", Scribble)


def test_a_registered_type_cannot_be_declared_in_memory() -> None:
    with pytest.raises(SessionError, match=re.escape("registered as 'test-types.task'")):
        register_in_memory_slice_type(Task)


def test_only_a_class_can_be_declared_in_memory() -> None:
    with pytest.raises(SessionError, match="needs a class"):
        register_in_memory_slice_type(Scribble("not a class"))  # type: ignore[arg-type]
