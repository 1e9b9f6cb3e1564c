"""`PlanningToolsSection`: strategy guidance plus tools that keep a `Plan` in the session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from promptkit.errors import ArgumentTypeError
from promptkit.planning._plan import Plan, StepStatus
from promptkit.planning._strategies import GUIDANCE, PlanningStrategy
from promptkit.prompt import RenderContext, Section, Tool, ToolContext, ToolResult, param_field
from promptkit.session import Session, replace_latest


@dataclass(frozen=True)
class _SetupPlanParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    objective: str = param_field("What the work must achieve.", min_length=1)
    steps: list[str] = param_field("Concrete steps, in order.", min_length=1)


@dataclass(frozen=True)
class _AddStepParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    title: str = param_field("The new step, appended at the end.", min_length=1)


@dataclass(frozen=True)
class _UpdateStepParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    step_id: int = param_field("The number of the step to update.", ge=1)
    status: StepStatus = param_field("The step's new status.")
    notes: str | None = param_field("What was found or why it changed.", default=None)


@dataclass(frozen=True)
class _ReadPlanParams:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}


@dataclass(frozen=True, kw_only=True, eq=False)
class PlanningToolsSection(Section):
    """Guidance for `strategy` and the `planning_*` tools, bound to `session`.

    The current plan is shown under the guidance at each render. `clone(session=...)` binds a
    copy to another session (a Session is required).
    """

    session: Session
    strategy: PlanningStrategy = PlanningStrategy.REACT
    title: str = "Planning"
    key: str = "planning"
    tools: tuple[Tool[Any], ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        if not isinstance(self.session, Session):
            raise ArgumentTypeError(
                f"PlanningToolsSection needs a Session, got {type(self.session).__name__}"
            )
        object.__setattr__(self, "strategy", PlanningStrategy(self.strategy))
        object.__setattr__(self, "tools", self._build_tools())
        super().__post_init__()
        self.session.register_reducer(Plan, replace_latest)

    def original_body_template(self) -> str:
        return GUIDANCE[self.strategy]

    def render_body(self, params: Any, context: RenderContext) -> str:
        plan = self.session.select_latest(Plan)
        if plan is None:
            return f"{GUIDANCE[self.strategy]}\n\nNo plan has been set up yet."
        return f"{GUIDANCE[self.strategy]}\n\nCurrent plan:\n\n{plan.to_markdown()}"

    def clone(self, **changes: Any) -> Self:
        session = changes.get("session")
        if not isinstance(session, Session):
            raise ArgumentTypeError("PlanningToolsSection.clone requires session=<a Session>")
        return super().clone(**changes)

    def _build_tools(self) -> tuple[Tool[Any], ...]:
        return (
            Tool(
                name="planning_setup_plan",
                description="Start a new plan (replacing any current one) with an objective"
                " and its steps.",
                params_type=_SetupPlanParams,
                handler=self._setup_plan,
            ),
            Tool(
                name="planning_add_step",
                description="Append a step to the current plan.",
                params_type=_AddStepParams,
                handler=self._add_step,
            ),
            Tool(
                name="planning_update_step",
                description="Set a step's status (pending, in_progress, done, blocked,"
                " skipped) and notes.",
                params_type=_UpdateStepParams,
                handler=self._update_step,
            ),
            Tool(
                name="planning_read_plan",
                description="Show the current plan with every step's status.",
                params_type=_ReadPlanParams,
                handler=self._read_plan,
            ),
        )

    def _setup_plan(self, params: _SetupPlanParams, context: ToolContext) -> ToolResult:
        plan = Plan.create(params.objective, tuple(params.steps))
        self.session.dispatch(plan)
        return ToolResult(message=plan.to_markdown(), value={"steps": len(plan.steps)})

    def _add_step(self, params: _AddStepParams, context: ToolContext) -> ToolResult:
        plan = self.session.select_latest(Plan)
        if plan is None:
            return _no_plan()
        updated = plan.with_step_added(params.title)
        self.session.dispatch(updated)
        return ToolResult(
            message=updated.to_markdown(), value={"step_id": updated.steps[-1].step_id}
        )

    def _update_step(self, params: _UpdateStepParams, context: ToolContext) -> ToolResult:
        plan = self.session.select_latest(Plan)
        if plan is None:
            return _no_plan()
        if plan.step(params.step_id) is None:
            known = ", ".join(str(step.step_id) for step in plan.steps)
            return ToolResult(
                message=f"No step {params.step_id}; the plan has steps {known}.", success=False
            )
        updated = plan.with_step_updated(params.step_id, params.status, params.notes)
        self.session.dispatch(updated)
        return ToolResult(message=updated.to_markdown())

    def _read_plan(self, params: _ReadPlanParams, context: ToolContext) -> ToolResult:
        plan = self.session.select_latest(Plan)
        return _no_plan() if plan is None else ToolResult(message=plan.to_markdown())


def _no_plan() -> ToolResult:
    return ToolResult(
        message="There is no plan yet: call planning_setup_plan first.", success=False
    )
