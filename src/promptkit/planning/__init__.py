"""Planning: strategy guidance and the tools a model uses to keep a plan in its session."""

from promptkit.planning.plan import Plan, PlanStep, StepStatus
from promptkit.planning.section import PlanningToolsSection
from promptkit.planning.strategies import PlanningStrategy

__all__ = ["Plan", "PlanStep", "PlanningStrategy", "PlanningToolsSection", "StepStatus"]
