"""Planning strategies: the working method a `PlanningToolsSection` asks the model to follow."""

from __future__ import annotations

from enum import StrEnum


class PlanningStrategy(StrEnum):
    """How the model should plan and work through a task."""

    REACT = "react"
    PLAN_ACT_REFLECT = "plan_act_reflect"
    GOAL_DECOMPOSE_ROUTE_SYNTHESISE = "goal_decompose_route_synthesise"


GUIDANCE: dict[PlanningStrategy, str] = {
    PlanningStrategy.REACT: (
        "Work in short cycles of reasoning and acting. Before each tool call, decide what you\n"
        "need to learn next and why; after it, note what you learned. Use `planning_setup_plan`\n"
        "when the task has more than two steps, and keep step statuses current with\n"
        "`planning_update_step` so the plan always shows what is done and what is left."
    ),
    PlanningStrategy.PLAN_ACT_REFLECT: (
        "1. Plan: call `planning_setup_plan` with the objective and concrete, checkable steps.\n"
        "2. Act: work through the steps in order, marking each `in_progress` then `done` with\n"
        "   `planning_update_step`, adding steps with `planning_add_step` when you discover work.\n"
        "3. Reflect: before answering, call `planning_read_plan`, check every step is `done` or\n"
        "   deliberately `skipped` with a note, and say what remains uncertain."
    ),
    PlanningStrategy.GOAL_DECOMPOSE_ROUTE_SYNTHESISE: (
        "1. Goal: restate the objective in one sentence with `planning_setup_plan`.\n"
        "2. Decompose: split it into independent questions, one step each.\n"
        "3. Route: answer each question with the cheapest tool that settles it (list before\n"
        "   reading, search before opening many files), updating the step with what you found.\n"
        "4. Synthesise: combine the findings into the final answer; drop anything you could\n"
        "   not confirm rather than guessing."
    ),
}
