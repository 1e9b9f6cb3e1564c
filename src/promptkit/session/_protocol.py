"""`SessionProtocol`: the session surface that code reading and changing slices relies on.

`Session` implements it. The optimize workflow and the workspace-digest helpers accept any
implementation (a proxy that records or forwards, a session kept elsewhere), as the workspace
digest specification's `optimize(..., session: SessionProtocol, ...)` says. Sections still bind
to a concrete `Session`, because they register reducers and tools on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar, runtime_checkable

from promptkit.session._snapshot import SessionSnapshot

T = TypeVar("T")
S = TypeVar("S")
E = TypeVar("E")


@runtime_checkable
class SessionProtocol(Protocol):
    """Typed slices changed only by dispatching events through reducers (see `Session`)."""

    @property
    def session_id(self) -> str:
        """The session's id (it follows the key rule)."""
        ...

    def dispatch(self, event: object) -> None:
        """Apply `event` through the reducers registered for its type."""
        ...

    def register_reducer(
        self,
        event_type: type[E],
        reducer: Callable[[tuple[S, ...], E], tuple[S, ...]],
        slice_type: type[S] | None = None,
    ) -> None:
        """Route events of `event_type` through `reducer` into the slice of `slice_type`."""
        ...

    def select_all(self, slice_type: type[T]) -> tuple[T, ...]:
        """Every value of `slice_type`, oldest first."""
        ...

    def select_latest(self, slice_type: type[T]) -> T | None:
        """The newest value of `slice_type`, or None."""
        ...

    def select_where(self, slice_type: type[T], predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The values of `slice_type` for which `predicate` holds, oldest first."""
        ...

    def seed_slice(self, slice_type: type[T], values: Iterable[T]) -> None:
        """Set the slice of `slice_type` to exactly `values`."""
        ...

    def clear_slice(
        self, slice_type: type[T], predicate: Callable[[T], bool] | None = None
    ) -> None:
        """Remove the values of `slice_type` matching `predicate`, or all of them."""
        ...

    def snapshot(self) -> SessionSnapshot:
        """An immutable copy of every slice."""
        ...

    def rollback(self, snapshot: SessionSnapshot) -> None:
        """Make every slice equal to `snapshot`'s."""
        ...
