"""Planning: strategy guidance and the tools a model uses to keep a plan in its session."""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.planning._plan import (
        Plan as Plan,
        PlanStep as PlanStep,
        StepStatus as StepStatus,
    )
    from promptkit.planning._section import PlanningToolsSection as PlanningToolsSection
    from promptkit.planning._strategies import PlanningStrategy as PlanningStrategy
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.planning._plan": ("Plan", "PlanStep", "StepStatus"),
            "promptkit.planning._section": ("PlanningToolsSection",),
            "promptkit.planning._strategies": ("PlanningStrategy",),
        },
    )
