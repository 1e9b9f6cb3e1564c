"""The built-in reducers: pure functions from (current slice, event) to the next slice.

A reducer never mutates: it returns a new tuple, which the session stores in place of the old
one. `append` is also the session's default for event types that have no reducer registered.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")
S = TypeVar("S")
E = TypeVar("E")

Reducer = Callable[[tuple[S, ...], E], tuple[S, ...]]
"""`(current, event) -> next`: how an event of type E changes a slice of S values."""


def append(current: tuple[T, ...], event: T) -> tuple[T, ...]:
    """Add the event at the end of the slice: a log of everything that happened."""
    return (*current, event)


def replace_latest(current: tuple[T, ...], event: T) -> tuple[T, ...]:
    """Keep only the newest value: the slice holds at most one item, the latest event."""
    return (event,)


def upsert_by(key_fn: Callable[[T], Hashable]) -> Reducer[T, T]:
    """A reducer that replaces the value whose `key_fn` equals the event's, in place.

    When no value has that key the event is appended, so the slice holds one value per key in
    the order keys first appeared.
    """

    def upsert(current: tuple[T, ...], event: T) -> tuple[T, ...]:
        key = key_fn(event)
        for index, value in enumerate(current):
            if key_fn(value) == key:
                return (*current[:index], event, *current[index + 1 :])
        return (*current, event)

    upsert.__qualname__ = f"upsert_by({getattr(key_fn, '__qualname__', repr(key_fn))})"
    return upsert
