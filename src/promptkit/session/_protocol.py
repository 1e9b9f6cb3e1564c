"""`SessionProtocol`: the session surface that code reading and changing slices relies on.

`Session` implements it. The optimize workflow and the workspace-digest helpers accept any
implementation (a proxy that records or forwards, a session kept elsewhere), as the workspace
digest specification's `optimize(..., session: SessionProtocol, ...)` says. Sections still bind
to a concrete `Session`, because they register reducers and tools on it.

`SessionStoreProtocol` is what a session store offers, in files (`SessionStore`) or in a
database (`PostgresSessionStore`); an application binds either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self, TypeVar, runtime_checkable

from promptkit.session._snapshot import SessionSnapshot

if TYPE_CHECKING:
    from promptkit.session._records import StoredSession
    from promptkit.session._session import Session

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


@runtime_checkable
class SessionAttachmentProtocol(Protocol):
    """A session being recorded by a store, until closed (`SessionAttachment`,
    `PostgresSessionAttachment`)."""

    @property
    def session(self) -> Session:
        """The session recorded."""
        ...

    @property
    def trace_id(self) -> str:
        """The id every record written through this attachment carries."""
        ...

    @property
    def closed(self) -> bool:
        """Whether recording stopped."""
        ...

    def compact(self) -> None:
        """Write the session's state as the stored base, dropping the events after it."""
        ...

    def close(self) -> None:
        """Stop recording; the copy in memory then matches the stored log."""
        ...

    def __enter__(self) -> Self:
        """The attachment itself, closed when the block ends."""
        ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the attachment."""
        ...


@runtime_checkable
class SessionStoreProtocol(Protocol):
    """What every session store offers (`SessionStore` in files, `PostgresSessionStore` in a
    database): sequence, checksums, refusal of a stale copy, each event stored whole."""

    @property
    def state_folders(self) -> tuple[Path, ...]:
        """The folders the store writes in (none for a database): a workspace listing that
        contains one leaves it out."""
        ...

    def location(self, workspace_root: Path | str, session_id: str) -> str:
        """How the store names session `session_id` of `workspace_root`: a folder, or a key
        in a database."""
        ...

    def attach(
        self, session: Session, workspace_root: Path | str, *, trace_id: str | None = None
    ) -> SessionAttachmentProtocol:
        """Record every later change of `session` under `workspace_root` until closed."""
        ...

    def compact(self, session: Session) -> None:
        """Rewrite the stored base of an attached `session` with its current state."""
        ...

    def load(self, workspace_root: Path | str, session_id: str) -> Session:
        """Rebuild a stored session, every record checked."""
        ...

    def sessions(self, workspace_root: Path | str) -> tuple[StoredSession, ...]:
        """The stored sessions of `workspace_root`, most recently active first."""
        ...

    def latest(self, workspace_root: Path | str) -> Session | None:
        """The most recently active stored session of `workspace_root`, loaded; None if none."""
        ...

    def close(self) -> None:
        """Close every attachment made through this store."""
        ...
