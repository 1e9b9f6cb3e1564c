"""Session: typed slices of immutable values, changed only by dispatching events through reducers.

A slice is the tuple of values stored for one type. Every change, including `seed_slice`,
`clear_slice` and `rollback`, is an event: it is checked, then recorded by an attached
SessionStore, then applied, then shown to subscribers, all under one re-entrant lock, so
concurrent dispatches are applied and recorded in a single order and none is lost.

A store works through the public seam at the end of `Session`: `restore` rebuilds a stored
session, `attach_recorder` and `detach_recorder` start and stop recording its changes,
`changes_held` keeps other threads' changes out while the store writes its state, and
`stored_log` says which stored log the copy in hand matches.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeVar

from promptkit._names import require_key
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import SessionError
from promptkit.session._codec import codec_for
from promptkit.session._events import (
    SESSION_ROLLED_BACK,
    SLICE_CLEARED,
    SLICE_SEEDED,
    SessionRolledBack,
    SliceCleared,
    SliceSeeded,
)
from promptkit.session._reducers import append
from promptkit.session._slices import is_in_memory_by_intent, slice_name
from promptkit.session._snapshot import SessionSnapshot

T = TypeVar("T")
S = TypeVar("S")
E = TypeVar("E")
R = TypeVar("R", bound="SessionRecorder")

Subscriber = Callable[[object], None]
"""Called with each event after it was applied (and recorded, when a store is attached)."""

_BUILT_IN_EVENTS = (SliceSeeded, SliceCleared, SessionRolledBack)


class SessionRecorder(Protocol):
    """What a store attaches to a session to receive its changes before they are applied."""

    def record(
        self,
        seq: int,
        event: str | None,
        changes: list[dict[str, Any]],
        unpersisted: tuple[type[Any], ...],
    ) -> None:
        """Durably record `changes` (JSON-ready) of event number `seq`, or raise to refuse it.

        `unpersisted` are the changed slice types that are neither registered nor declared
        in-memory: their changes are not in `changes`.
        """


@dataclass(frozen=True)
class StoredLog:
    """The stored log a session's copy in memory matches: where the store keeps it (a folder, a
    database key) and its last record the copy holds, as (seq, checksum). A store refuses to
    write a copy over a log that moved past it, which would drop the newer events."""

    location: str
    head: tuple[int, str]


def new_session_id() -> str:
    """A fresh session id that follows the key rule and sorts by creation time (UTC)."""
    stamp = SYSTEM_CLOCK.now().strftime("%Y%m%dt%H%M%S%f")
    return f"{stamp}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class _Change:
    slice_type: type[Any]
    op: Literal["append", "set"]
    # For "append" the values added at the end; for "set" the whole new slice.
    values: tuple[Any, ...]


class _Slice:
    """One slice's values: a list to append to, with the tuple view built only when read."""

    __slots__ = ("_items", "_view")

    def __init__(self, values: Iterable[Any]) -> None:
        self._items = list(values)
        self._view: tuple[Any, ...] | None = values if isinstance(values, tuple) else None

    def values(self) -> tuple[Any, ...]:
        if self._view is None:
            self._view = tuple(self._items)
        return self._view

    def extend(self, values: tuple[Any, ...]) -> None:
        # Appending to a list keeps long event logs linear; a tuple would be copied every time.
        self._items.extend(values)
        self._view = None

    def latest(self) -> Any:
        return self._items[-1] if self._items else None

    def items(self) -> list[Any]:
        return self._items


class Session:
    """An in-process, thread-safe store of typed slices, changed only through `dispatch`.

    An event type without a registered reducer is appended to a slice of its own type, so
    `session.dispatch(note)` followed by `session.select_all(Note)` just works.
    """

    def __init__(
        self,
        *,
        session_id: str | None = None,
        parent: Session | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        self._session_id = (
            new_session_id()
            if session_id is None
            else require_key(session_id, what="session id", error=SessionError)
        )
        self._parent = parent
        self._tags: Mapping[str, str] = MappingProxyType(_checked_tags(tags or {}))
        self._lock = threading.RLock()
        self._slices: dict[type[Any], _Slice] = {}
        self._reducers: dict[type[Any], dict[type[Any], Callable[[Any, Any], Any]]] = {}
        self._subscribers: dict[int, Subscriber] = {}
        self._next_subscriber = 0
        self._seq = 0
        self._recorder: SessionRecorder | None = None
        self._stored_log: StoredLog | None = None

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def parent(self) -> Session | None:
        return self._parent

    @property
    def tags(self) -> Mapping[str, str]:
        return self._tags

    @property
    def seq(self) -> int:
        """How many events this session has applied (continued across store loads)."""
        with self._lock:
            return self._seq

    def __repr__(self) -> str:
        return f"Session(session_id={self._session_id!r}, seq={self._seq})"

    def register_reducer(
        self,
        event_type: type[E],
        reducer: Callable[[tuple[S, ...], E], tuple[S, ...]],
        slice_type: type[S] | None = None,
    ) -> None:
        """Route events of exactly `event_type` through `reducer` into the slice of `slice_type`.

        `slice_type` defaults to `event_type`. One event type may feed several slice types;
        registering the same pair again replaces its reducer.
        """
        if event_type in _BUILT_IN_EVENTS:
            raise SessionError(
                f"{event_type.__qualname__} is handled by the session itself and takes no "
                "reducer; register a reducer for your own event type instead"
            )
        target: type[Any] = event_type if slice_type is None else slice_type
        with self._lock:
            self._reducers.setdefault(event_type, {})[target] = reducer

    def dispatch(self, event: object) -> None:
        """Apply `event` to every slice its reducers target.

        SessionError when a reducer misbehaves or a value of a registered slice type cannot be
        serialised; in both cases nothing is applied or recorded.
        """
        with self._lock:
            changes = self._plan(event)
            self._commit(event, changes)

    def select_all(self, slice_type: type[T]) -> tuple[T, ...]:
        """Every value of `slice_type`, oldest first."""
        with self._lock:
            stored = self._slices.get(slice_type)
            return stored.values() if stored is not None else ()

    def select_latest(self, slice_type: type[T]) -> T | None:
        """The newest value of `slice_type`, or None when the slice is empty."""
        with self._lock:
            stored = self._slices.get(slice_type)
            latest: T | None = stored.latest() if stored is not None else None
            return latest

    def select_where(self, slice_type: type[T], predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The values of `slice_type` for which `predicate` is true, oldest first."""
        with self._lock:
            stored = self._slices.get(slice_type)
            return tuple(v for v in stored.items() if predicate(v)) if stored is not None else ()

    def seed_slice(self, slice_type: type[T], values: Iterable[T]) -> None:
        """Set the slice of `slice_type` to exactly `values` (dispatched as `SliceSeeded`)."""
        self.dispatch(SliceSeeded(slice_type, tuple(values)))

    def clear_slice(
        self, slice_type: type[T], predicate: Callable[[T], bool] | None = None
    ) -> None:
        """Remove the values of `slice_type` matching `predicate`, or all of them."""
        self.dispatch(SliceCleared(slice_type, predicate))

    def snapshot(self) -> SessionSnapshot:
        """An immutable copy of every slice as of now."""
        with self._lock:
            return SessionSnapshot(
                session_id=self._session_id,
                seq=self._seq,
                taken_at=SYSTEM_CLOCK.now(),
                slices={t: s.values() for t, s in self._slices.items()},
            )

    def rollback(self, snapshot: SessionSnapshot) -> None:
        """Make every slice equal to `snapshot`'s (dispatched as `SessionRolledBack`).

        Slice types absent from the snapshot end up empty; `seq` keeps counting forward.
        """
        self.dispatch(SessionRolledBack(snapshot))

    def clone(self, *, session_id: str | None = None) -> Session:
        """An independent session with the same slices, reducers, parent and tags.

        It gets a new id unless `session_id` is given; subscribers and any store attachment
        stay with the original.
        """
        with self._lock:
            twin = Session(session_id=session_id, parent=self._parent, tags=self._tags)
            twin._slices = {t: _Slice(s.items()) for t, s in self._slices.items()}
            twin._reducers = {e: dict(routes) for e, routes in self._reducers.items()}
            return twin

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback(event)` after each event is applied; returns the unsubscribe function.

        Callbacks run on the dispatching thread while the session lock is held, so they see
        events in the order they were applied and may dispatch further events; keep them short.
        An exception from a callback propagates to the dispatcher (the event stays applied).
        """
        with self._lock:
            token = self._next_subscriber
            self._next_subscriber += 1
            self._subscribers[token] = callback

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.pop(token, None)

        return unsubscribe

    def _plan(self, event: object) -> list[_Change]:
        if isinstance(event, SliceSeeded):
            _check_instances(event.slice_type, event.values)
            return self._set_if_changed(event.slice_type, event.values)
        if isinstance(event, SliceCleared):
            current = self._current(event.slice_type)
            predicate = event.predicate
            kept = () if predicate is None else tuple(v for v in current if not predicate(v))
            return self._set_if_changed(event.slice_type, kept)
        if isinstance(event, SessionRolledBack):
            target = event.snapshot.slices
            affected = [*self._slices, *(t for t in target if t not in self._slices)]
            return [c for t in affected for c in self._set_if_changed(t, target.get(t, ()))]
        routes = self._reducers.get(type(event))
        if routes is None:
            return [_Change(type(event), "append", (event,))]
        changes: list[_Change] = []
        for slice_type, reducer in routes.items():
            if reducer is append:
                changes.append(_Change(slice_type, "append", (event,)))
                continue
            current = self._current(slice_type)
            result = reducer(current, event)
            if not isinstance(result, tuple):
                raise SessionError(
                    f"reducer {getattr(reducer, '__qualname__', reducer)!r} for "
                    f"{type(event).__qualname__} returned a {type(result).__qualname__}; a "
                    "reducer must return a tuple (nothing was applied)"
                )
            changes.extend(_diff(slice_type, current, result))
        return changes

    def _current(self, slice_type: type[Any]) -> tuple[Any, ...]:
        stored = self._slices.get(slice_type)
        return stored.values() if stored is not None else ()

    def _set_if_changed(self, slice_type: type[Any], values: tuple[Any, ...]) -> list[_Change]:
        current = self._current(slice_type)
        if values is current or values == current:
            return []
        return [_Change(slice_type, "set", values)]

    def _commit(self, event: object, changes: list[_Change]) -> None:
        seq = self._seq + 1
        recorder = self._recorder
        persisted, unpersisted = self._encode(event, changes, full=recorder is not None)
        if recorder is not None and (persisted or unpersisted):
            recorder.record(seq, _event_name(event), persisted, unpersisted)
        for change in changes:
            if change.op == "append":
                stored = self._slices.get(change.slice_type)
                if stored is None:
                    stored = self._slices[change.slice_type] = _Slice(())
                stored.extend(change.values)
            elif change.values:
                self._slices[change.slice_type] = _Slice(change.values)
            else:
                self._slices.pop(change.slice_type, None)
        self._seq = seq
        for callback in list(self._subscribers.values()):
            callback(event)

    def _encode(
        self, event: object, changes: list[_Change], *, full: bool
    ) -> tuple[list[dict[str, Any]], tuple[type[Any], ...]]:
        persisted: list[dict[str, Any]] = []
        unpersisted: list[type[Any]] = []
        for change in changes:
            name = slice_name(change.slice_type)
            if name is None:
                if not is_in_memory_by_intent(change.slice_type):
                    unpersisted.append(change.slice_type)
                continue
            codec = codec_for(change.slice_type)
            values = change.values
            if change.op == "set" and not full:
                # Without a store only values new to the slice need proving serialisable.
                present = {id(v) for v in self._current(change.slice_type)}
                values = tuple(v for v in values if id(v) not in present)
            try:
                encoded = [codec.encode(value) for value in values]
            except SessionError as exc:
                raise SessionError(
                    f"{type(event).__qualname__} refused, nothing was applied: {exc}; "
                    f"slice {name!r} is persisted, so its values must be JSON-ready"
                ) from None
            persisted.append({"slice": name, "op": change.op, "values": encoded})
        return persisted, tuple(unpersisted)

    # -- the seam a session store works through --------------------------------------------------

    @classmethod
    def restore(
        cls,
        *,
        session_id: str,
        tags: Mapping[str, str],
        seq: int,
        slices: Mapping[type[Any], Sequence[Any]],
        stored_log: StoredLog | None = None,
    ) -> Session:
        """A session holding `slices` after event number `seq`, as a store rebuilds one it
        loaded; `stored_log` is the log it was loaded from. Reducers are code, not data: the
        caller registers them again."""
        session = cls(session_id=session_id, tags=tags)
        session._slices = {t: _Slice(values) for t, values in slices.items() if values}
        session._seq = seq
        session._stored_log = stored_log
        return session

    @property
    def stored_log(self) -> StoredLog | None:
        """The stored log this copy matches (set when it is loaded, and when a store stops
        recording it); None for a session never stored."""
        with self._lock:
            return self._stored_log

    @contextmanager
    def changes_held(self) -> Iterator[None]:
        """Keep every other thread's change out until the block ends, so what the block reads
        (`snapshot()`, `stored_log`) stays true while it writes it: a store writes a session's
        state as its base, or stops recording it, in such a block. The block's own thread may
        still dispatch."""
        with self._lock:
            yield

    def attach_recorder(self, start: Callable[[], R]) -> R:
        """Record every later change with the recorder `start()` returns, before it is applied.

        With changes held: SessionError when a recorder is attached already (nothing is
        started); else `start()` (which typically writes the current state as the store's base
        and may raise to refuse), then every change goes to its recorder until
        `detach_recorder`.
        """
        with self._lock:
            if self._recorder is not None:
                raise SessionError(
                    f"session {self._session_id!r} is already attached to a store; "
                    "close that attachment before attaching it again"
                )
            recorder = start()
            self._recorder = recorder
            return recorder

    def detach_recorder(self, recorder: SessionRecorder, *, stored_log: StoredLog) -> None:
        """Stop recording changes with `recorder` (when it is the one attached); the copy in
        memory now matches `stored_log`, the log the recorder leaves behind."""
        with self._lock:
            if self._recorder is recorder:
                self._recorder = None
                self._stored_log = stored_log


def _diff(
    slice_type: type[Any], current: tuple[Any, ...], result: tuple[Any, ...]
) -> list[_Change]:
    if result is current or result == current:
        return []
    size = len(current)
    # A result that only grew is logged as the values added, keeping logs linear in size.
    if len(result) > size and result[:size] == current:
        return [_Change(slice_type, "append", result[size:])]
    return [_Change(slice_type, "set", result)]


def _event_name(event: object) -> str | None:
    if isinstance(event, SliceSeeded):
        return SLICE_SEEDED
    if isinstance(event, SliceCleared):
        return SLICE_CLEARED
    if isinstance(event, SessionRolledBack):
        return SESSION_ROLLED_BACK
    return slice_name(type(event))


def _check_instances(slice_type: type[Any], values: tuple[Any, ...]) -> None:
    for index, value in enumerate(values):
        if not isinstance(value, slice_type):
            raise SessionError(
                f"cannot seed the {slice_type.__qualname__} slice: value {index} is a "
                f"{type(value).__qualname__}, not a {slice_type.__qualname__}"
            )


def _checked_tags(tags: Mapping[str, str]) -> dict[str, str]:
    checked: dict[str, str] = {}
    for key, value in tags.items():
        require_key(key, what="session tag name", error=SessionError)
        checked[key] = require_key(value, what=f"value of session tag {key!r}", error=SessionError)
    return checked
