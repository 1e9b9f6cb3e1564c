"""The injectable clock: a FakeClock moves only when told; no test sleeps to show time pass."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import ArgumentValueError
from promptkit.testing import FakeClock


def test_advance_moves_monotonic_and_wall_time_together() -> None:
    clock = FakeClock(start=datetime(2026, 3, 1, 12, 0, tzinfo=UTC))

    clock.advance(90)
    clock.advance(timedelta(minutes=1))

    assert clock.monotonic() == 150.0
    assert clock.now() == datetime(2026, 3, 1, 12, 2, 30, tzinfo=UTC)


def test_sleep_advances_without_waiting_and_is_recorded() -> None:
    clock = FakeClock()

    clock.sleep(3600)

    assert clock.monotonic() == 3600.0
    assert clock.slept == [3600]


def test_time_never_moves_backwards() -> None:
    with pytest.raises(ArgumentValueError, match="only moves forward"):
        FakeClock().advance(-1)


def test_a_naive_start_time_is_refused() -> None:
    with pytest.raises(ArgumentValueError, match="timezone-aware"):
        FakeClock(start=datetime(2026, 1, 1))


def test_both_clocks_satisfy_the_clock_protocol() -> None:
    assert isinstance(SYSTEM_CLOCK, Clock)
    assert isinstance(FakeClock(), Clock)


def test_the_system_clock_tells_utc_time() -> None:
    assert SYSTEM_CLOCK.now().tzinfo is UTC
