"""PlanningToolsSection: strategy guidance, plan tools kept in the session, clone rules."""

from __future__ import annotations

import pytest

from promptkit.planning import Plan, PlanningStrategy, PlanningToolsSection, StepStatus
from promptkit.prompt import Prompt, Tool, ToolContext, ToolResult
from promptkit.session import Session, SessionSnapshot

CONTEXT = ToolContext(prompt_ns="tests", prompt_key="planning", call_id="call-1")


def _call(section: PlanningToolsSection, name: str, arguments: str) -> ToolResult:
    tool: Tool[object] = next(tool for tool in section.tools if tool.name == name)
    return tool.run(tool.parse_arguments(arguments), CONTEXT)


def test_section_offers_the_four_planning_tools() -> None:
    section = PlanningToolsSection(session=Session())

    assert [tool.name for tool in section.tools] == [
        "planning_setup_plan",
        "planning_add_step",
        "planning_update_step",
        "planning_read_plan",
    ]


@pytest.mark.parametrize("strategy", list(PlanningStrategy))
def test_each_strategy_renders_its_own_guidance(strategy: PlanningStrategy) -> None:
    others = [s for s in PlanningStrategy if s is not strategy]
    section = PlanningToolsSection(session=Session(), strategy=strategy)
    text = Prompt(ns="tests", key="planning", sections=(section,)).render().text

    assert section.original_body_template() in text
    for other in others:
        assert (
            PlanningToolsSection(session=Session(), strategy=other).original_body_template()
            not in text
        )


def test_setup_plan_stores_a_plan_in_the_session() -> None:
    session = Session()
    section = PlanningToolsSection(session=session)

    result = _call(section, "planning_setup_plan", '{"objective": "ship", "steps": ["a", "b"]}')

    plan = session.select_latest(Plan)
    assert result.success
    assert plan is not None
    assert plan.objective == "ship"
    assert [(s.step_id, s.title, s.status) for s in plan.steps] == [
        (1, "a", StepStatus.PENDING),
        (2, "b", StepStatus.PENDING),
    ]


def test_update_step_changes_status_and_notes_and_keeps_one_plan_in_the_slice() -> None:
    session = Session()
    section = PlanningToolsSection(session=session)
    _call(section, "planning_setup_plan", '{"objective": "ship", "steps": ["a", "b"]}')

    _call(section, "planning_update_step", '{"step_id": 2, "status": "done", "notes": "ok"}')

    plan = session.select_latest(Plan)
    assert plan is not None
    assert plan.steps[1].status is StepStatus.DONE
    assert plan.steps[1].notes == "ok"
    assert len(session.select_all(Plan)) == 1


def test_add_step_numbers_after_the_highest_step() -> None:
    session = Session()
    section = PlanningToolsSection(session=session)
    _call(section, "planning_setup_plan", '{"objective": "ship", "steps": ["a"]}')

    result = _call(section, "planning_add_step", '{"title": "c"}')

    assert result.value == {"step_id": 2}


def test_tools_without_a_plan_answer_with_an_error_result() -> None:
    section = PlanningToolsSection(session=Session())

    result = _call(section, "planning_read_plan", "{}")

    assert not result.success
    assert "planning_setup_plan" in result.message


def test_updating_an_unknown_step_is_an_error_result_naming_the_known_steps() -> None:
    section = PlanningToolsSection(session=Session())
    _call(section, "planning_setup_plan", '{"objective": "o", "steps": ["a", "b"]}')

    result = _call(section, "planning_update_step", '{"step_id": 7, "status": "done"}')

    assert not result.success
    assert "1, 2" in result.message


def test_render_shows_the_current_plan() -> None:
    section = PlanningToolsSection(session=Session())
    prompt: Prompt[None] = Prompt(ns="tests", key="planning", sections=(section,))
    _call(section, "planning_setup_plan", '{"objective": "ship it", "steps": ["write"]}')

    assert "Objective: ship it" in prompt.render().text


def test_plan_survives_a_snapshot_json_round_trip() -> None:
    session = Session()
    section = PlanningToolsSection(session=session)
    _call(section, "planning_setup_plan", '{"objective": "o", "steps": ["a"]}')

    restored = SessionSnapshot.from_json(session.snapshot().to_json())

    assert restored.slices[Plan] == session.select_all(Plan)


def test_clone_binds_the_tools_to_the_new_session() -> None:
    original_session, other_session = Session(), Session()
    section = PlanningToolsSection(session=original_session, strategy=PlanningStrategy.REACT)

    twin = section.clone(session=other_session)
    _call(twin, "planning_setup_plan", '{"objective": "o", "steps": ["a"]}')

    assert twin.strategy is PlanningStrategy.REACT
    assert other_session.select_latest(Plan) is not None
    assert original_session.select_latest(Plan) is None


def test_clone_without_a_session_raises_type_error() -> None:
    section = PlanningToolsSection(session=Session())

    with pytest.raises(TypeError, match="session"):
        section.clone()


def test_constructing_without_a_session_raises_type_error() -> None:
    with pytest.raises(TypeError, match="Session"):
        PlanningToolsSection(session="not a session")  # type: ignore[arg-type]
