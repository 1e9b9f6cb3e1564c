"""`Deadline`: when an evaluation must be over, read from one clock by every step of it.

The tool loop checks it before each request and tool call, the transport gives each request the
time left as its timeout and stops waiting when it is spent, retry pauses sleep on its clock,
and tool handlers see it in their `ToolContext`. A test passes a `FakeClock` and advances it
instead of sleeping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import ArgumentTypeError, ArgumentValueError, ProviderTimeoutError


@dataclass(frozen=True)
class Deadline:
    """When an evaluation must be over: `at` is a `clock.monotonic()` value, None for never.

    The deadline carries its clock, so the tool loop, retry pauses and tool handlers all read
    the same time (a test passes a `FakeClock` and advances it instead of sleeping).
    """

    at: float | None = None
    budget_s: float | None = None
    clock: Clock = SYSTEM_CLOCK
    uses_tools: bool = True
    """Whether the prompt has tools, which decides the advice of `exceeded`."""

    @classmethod
    def within(cls, budget: float | timedelta | None, clock: Clock = SYSTEM_CLOCK) -> Deadline:
        """A deadline `budget` from now (seconds or a timedelta); None means no deadline."""
        if budget is None:
            return cls(clock=clock)
        seconds = budget.total_seconds() if isinstance(budget, timedelta) else budget
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ArgumentTypeError(
                f"deadline must be seconds (a number) or a timedelta, got {type(budget).__name__}"
            )
        if not (math.isfinite(seconds) and seconds > 0):
            raise ArgumentValueError(f"deadline must be a positive, finite time, got {budget!r}")
        return cls(at=clock.monotonic() + seconds, budget_s=float(seconds), clock=clock)

    def remaining(self) -> float | None:
        """Seconds left (0.0 once passed), or None without a deadline."""
        if self.at is None:
            return None
        return max(0.0, self.at - self.clock.monotonic())

    def exceeded(self, while_doing: str) -> ProviderTimeoutError:
        """The error for running past this deadline `while_doing` something."""
        advice = (
            "raise the deadline or make the prompt need fewer tool rounds"
            if self.uses_tools
            else "raise the deadline, or cap each reply with"
            " ModelSettings(max_output_tokens=...) (a small model on a CPU can take minutes to"
            " answer)"
        )
        return ProviderTimeoutError(
            f"the evaluation's deadline of {self.budget_s:g}s passed {while_doing}; {advice}"
        )

    def check(self, before_doing: str) -> None:
        """Raise `ProviderTimeoutError` when the deadline has passed."""
        if self.at is not None and self.clock.monotonic() >= self.at:
            raise self.exceeded(f"before {before_doing}")
