"""The `Plan` a model keeps while it works: an objective and numbered steps with a status.

A plan is one immutable value in its session's `Plan` slice; every planning tool call replaces
it with an updated copy, so the session's history shows how the plan evolved.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from promptkit.clock import SYSTEM_CLOCK
from promptkit.session import register_slice_type


class StepStatus(StrEnum):
    """Where a plan step stands."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    BLOCKED = "blocked"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan; `step_id` is its 1-based number, stable once assigned."""

    step_id: int
    title: str
    status: StepStatus = StepStatus.PENDING
    notes: str = ""


@dataclass(frozen=True)
class Plan:
    """An objective and its steps, as last written by the planning tools."""

    objective: str
    steps: tuple[PlanStep, ...]
    updated_at: datetime

    @classmethod
    def create(cls, objective: str, step_titles: tuple[str, ...]) -> Plan:
        """A new plan whose steps are numbered from 1 and all pending."""
        steps = tuple(PlanStep(number, title) for number, title in enumerate(step_titles, 1))
        return cls(objective=objective, steps=steps, updated_at=SYSTEM_CLOCK.now())

    def step(self, step_id: int) -> PlanStep | None:
        """The step numbered `step_id`, if any."""
        return next((step for step in self.steps if step.step_id == step_id), None)

    def with_step_added(self, title: str) -> Plan:
        """A copy with a pending step appended, numbered after the highest existing one."""
        next_id = max((step.step_id for step in self.steps), default=0) + 1
        return replace(
            self, steps=(*self.steps, PlanStep(next_id, title)), updated_at=SYSTEM_CLOCK.now()
        )

    def with_step_updated(self, step_id: int, status: StepStatus, notes: str | None) -> Plan:
        """A copy with step `step_id` given `status` (and `notes`, when not None)."""
        steps = tuple(
            replace(step, status=status, notes=step.notes if notes is None else notes)
            if step.step_id == step_id
            else step
            for step in self.steps
        )
        return replace(self, steps=steps, updated_at=SYSTEM_CLOCK.now())

    def to_markdown(self) -> str:
        """The plan as a short checklist, for tool results and the section body."""
        marks = {
            StepStatus.PENDING: " ",
            StepStatus.IN_PROGRESS: "~",
            StepStatus.DONE: "x",
            StepStatus.BLOCKED: "!",
            StepStatus.SKIPPED: "-",
        }
        lines = [f"Objective: {self.objective}"]
        for step in self.steps:
            note = f" ({step.notes})" if step.notes else ""
            lines.append(f"- [{marks[step.status]}] {step.step_id}. {step.title}{note}")
        return "\n".join(lines)


register_slice_type("promptkit.plan", Plan)
