"""optimize takes any SessionProtocol implementation as the caller's session, as the workspace
digest specification asks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from promptkit.digest import latest_workspace_digest
from promptkit.errors import OptimizationError
from promptkit.optimize import StaticDigestWriter, optimize_workspace_digest
from promptkit.session import Session, SessionProtocol, SessionSnapshot

from .conftest import make_prompt

T = TypeVar("T")


class RecordingSession:
    """A SessionProtocol that forwards to a Session and records what was dispatched."""

    def __init__(self, inner: Session) -> None:
        self.inner = inner
        self.dispatched: list[object] = []

    @property
    def session_id(self) -> str:
        return self.inner.session_id

    def dispatch(self, event: object) -> None:
        self.dispatched.append(event)
        self.inner.dispatch(event)

    def register_reducer(
        self,
        event_type: type[Any],
        reducer: Callable[..., Any],
        slice_type: type[Any] | None = None,
    ) -> None:
        self.inner.register_reducer(event_type, reducer, slice_type)

    def select_all(self, slice_type: type[T]) -> tuple[T, ...]:
        return self.inner.select_all(slice_type)

    def select_latest(self, slice_type: type[T]) -> T | None:
        return self.inner.select_latest(slice_type)

    def select_where(self, slice_type: type[T], predicate: Callable[[T], bool]) -> tuple[T, ...]:
        return self.inner.select_where(slice_type, predicate)

    def seed_slice(self, slice_type: type[T], values: Iterable[T]) -> None:
        self.inner.seed_slice(slice_type, values)

    def clear_slice(
        self, slice_type: type[T], predicate: Callable[[T], bool] | None = None
    ) -> None:
        self.inner.clear_slice(slice_type, predicate)

    def snapshot(self) -> SessionSnapshot:
        return self.inner.snapshot()

    def rollback(self, snapshot: SessionSnapshot) -> None:
        self.inner.rollback(snapshot)


def test_session_implements_session_protocol() -> None:
    assert isinstance(Session(), SessionProtocol)


def test_optimize_stores_the_digest_through_any_session_protocol(repo: Path) -> None:
    bound = Session()
    caller = RecordingSession(bound)

    result = optimize_workspace_digest(
        StaticDigestWriter(), make_prompt(bound, repo), session=caller
    )

    stored = latest_workspace_digest(bound, "workspace-digest")
    assert stored is not None
    assert stored.body == result.digest
    assert caller.dispatched


def test_optimize_refuses_a_caller_session_that_is_not_a_session(repo: Path) -> None:
    bound = Session()

    with pytest.raises(OptimizationError, match="SessionProtocol"):
        optimize_workspace_digest(
            StaticDigestWriter(),
            make_prompt(bound, repo),
            session=object(),  # type: ignore[arg-type]
        )

    assert latest_workspace_digest(bound, "workspace-digest") is None
