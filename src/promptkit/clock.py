"""Time as a dependency: the clock that deadlines, freshness checks and retry pauses read.

Library code that asks "how long has it been" or "wait this long" takes a `Clock` (default
`SYSTEM_CLOCK`) instead of calling `time` directly, so a test hands it a `FakeClock` and moves
time with `advance()`: no test sleeps to show that time passed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from promptkit.errors import ArgumentValueError


@runtime_checkable
class Clock(Protocol):
    """Monotonic seconds for intervals, UTC wall time for records, and a way to wait."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary start; only differences mean anything."""
        ...

    def now(self) -> datetime:
        """The current time, timezone-aware in UTC."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` (a fake clock moves its time instead)."""
        ...


class SystemClock:
    """The real clock: `time.monotonic`, `datetime.now(UTC)` and `time.sleep`."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def __repr__(self) -> str:
        return "SYSTEM_CLOCK"


SYSTEM_CLOCK: Clock = SystemClock()
"""The clock every promptkit object uses unless given another."""


@dataclass(eq=False)
class FakeClock:
    """A clock that moves only when told: `advance(seconds)`, or `sleep(seconds)` which advances.

    `slept` records every `sleep` call, so a test can see which pauses a retry loop took
    without waiting for them. Safe to advance from another thread.
    """

    start: datetime = field(default_factory=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    slept: list[float] = field(default_factory=list)
    _elapsed: float = field(default=0.0, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.start.tzinfo is None:
            raise ArgumentValueError(
                f"FakeClock(start={self.start!r}): pass a timezone-aware datetime, for example"
                " datetime(2026, 1, 1, tzinfo=UTC)"
            )

    def monotonic(self) -> float:
        with self._lock:
            return self._elapsed

    def now(self) -> datetime:
        with self._lock:
            return (self.start + timedelta(seconds=self._elapsed)).astimezone(UTC)

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float | timedelta) -> None:
        """Move time forward by `seconds` (a number or a timedelta); never backwards."""
        amount = seconds.total_seconds() if isinstance(seconds, timedelta) else float(seconds)
        if not amount >= 0.0:
            raise ArgumentValueError(
                f"FakeClock.advance({seconds!r}): time only moves forward; pass seconds >= 0"
            )
        with self._lock:
            self._elapsed += amount
