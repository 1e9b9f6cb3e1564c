"""What a type checker tells a user of promptkit: a small user file checked with mypy's API.

mypy runs with the project's configuration and cache (`make test` runs mypy on the project
first, so the check of promptkit itself is already cached and this stays a few seconds).
"""

from __future__ import annotations

import pytest
from mypy import api

from .conftest import REPO_ROOT

USER_FILE = """
from dataclasses import dataclass

import promptkit
from promptkit import MarkdownSection, Prompt, Session, Tool, ToolContext, ToolResult
from promptkit.adapters import OpenAIAdapter


@dataclass(frozen=True)
class Review:
    verdict: str


@dataclass(frozen=True)
class Repo:
    name: str


@dataclass(frozen=True)
class FilePath:
    path: str


def read_file(params: FilePath, context: ToolContext[Repo]) -> ToolResult:
    return ToolResult(message=context.deps.name)


promptkit.WorkspaceDigestSectoin
reviewing = Prompt(ns="demo", key="review", output_type=Review)
plain = Prompt(ns="demo", key="plain")
reader = Tool(name="read", description="Read.", params_type=FilePath, handler=read_file)
repo_review = Prompt(
    ns="demo",
    key="repo",
    sections=(MarkdownSection(title="T", key="t", template="Review.", tools=(reader,)),),
    output_type=Review,
    deps_type=Repo,
)
reveal_type(reviewing)
reveal_type(plain)
reveal_type(reader)
reveal_type(repo_review)
reveal_type(OpenAIAdapter(model="m").evaluate(reviewing, session=Session()).output)
adapter = OpenAIAdapter(model="m")
adapter.evaluate(plain, session=Session(), max_tool_round=3)
adapter.stream(plain, session=Session(), max_tool_rounds="3")
for event in adapter.stream(reviewing, session=Session(), deadline=5.0, output_retries=0):
    reveal_type(event)
adapter.evaluate(repo_review, session=Session(), deps=Repo("flask"))
adapter.evaluate(repo_review, session=Session(), deps="oops")
adapter.evaluate(repo_review, session=Session())
adapter.evaluate(plain, session=Session(), deps=Repo("flask"))
annotated: Prompt[Review] = repo_review
adapter.evaluate(annotated, session=Session(), deps=Repo("flask"))
bound = promptkit.App(adapter=adapter, deps=Repo("flask"))
reveal_type(bound)
bound.evaluate(repo_review)
bound.evaluate(repo_review, deps=Repo("django"))
bound.evaluate(plain)
bound.evaluate(repo_review, deps="oops")
promptkit.App(adapter=adapter).evaluate(repo_review)
promptkit.App(adapter=adapter, deps="oops").evaluate(repo_review)
promptkit.App.from_project(deps=Repo("flask")).evaluate(repo_review)
"""


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    user_file = tmp_path_factory.mktemp("user") / "user_code.py"
    user_file.write_text(USER_FILE, encoding="utf-8")
    stdout, stderr, _ = api.run(
        [
            "--config-file",
            str(REPO_ROOT / "pyproject.toml"),
            "--cache-dir",
            str(REPO_ROOT / ".mypy_cache"),
            str(user_file),
        ]
    )
    assert stderr == "", stderr
    return [line.split(": ", 1)[1] for line in stdout.splitlines() if "user_code.py:" in line]


def test_a_misspelt_top_level_name_is_a_type_error(mypy_report: list[str]) -> None:
    assert 'error: Module has no attribute "WorkspaceDigestSectoin"  [attr-defined]' in (
        mypy_report
    )


def test_a_prompt_with_an_output_type_is_inferred_as_prompt_of_that_type(
    mypy_report: list[str],
) -> None:
    assert 'note: Revealed type is "promptkit.prompt._prompt.Prompt[user_code.Review, None]"' in (
        mypy_report
    )


def test_a_prompt_without_an_output_type_is_inferred_as_prompt_of_none(
    mypy_report: list[str],
) -> None:
    assert 'note: Revealed type is "promptkit.prompt._prompt.Prompt[None, None]"' in mypy_report


def test_a_tool_takes_its_deps_type_from_its_handlers_context(mypy_report: list[str]) -> None:
    assert (
        'note: Revealed type is "promptkit.prompt._tool.Tool[user_code.FilePath, user_code.Repo]"'
        in mypy_report
    )


def test_a_prompt_with_a_deps_type_is_inferred_as_prompt_of_those_deps(
    mypy_report: list[str],
) -> None:
    assert (
        'note: Revealed type is "promptkit.prompt._prompt.Prompt[user_code.Review, user_code.Repo]"'
        in mypy_report
    )


def test_evaluate_output_is_typed_from_the_prompt(mypy_report: list[str]) -> None:
    assert 'note: Revealed type is "user_code.Review"' in mypy_report


MISSPELT_OPTION = (
    'error: Unexpected keyword argument "max_tool_round" for overloaded function "evaluate" of'
    ' "WireAdapter"; did you mean "max_tool_rounds"?  [call-overload]'
)
MISSPELT_OPTION_OVERLOADS = (
    'error: No overload variant of "evaluate" of "WireAdapter" matches argument types'
    ' "Prompt[None, None]", "Session", "int"  [call-overload]'
)
MISTYPED_OPTION = (
    'error: No overload variant of "stream" of "WireAdapter" matches argument types'
    ' "Prompt[None, None]", "Session", "str"  [call-overload]'
)
WRONG_DEPS = (
    'error: Cannot infer value of type parameter "DepsT" of "evaluate" of "WireAdapter"  [misc]'
)
FORGOTTEN_DEPS = (
    'error: Argument 1 to "evaluate" of "WireAdapter" has incompatible type "Prompt[Review,'
    ' Repo]"; expected "Prompt[Review, None]"  [arg-type]'
)


def test_a_misspelt_call_option_is_a_type_error(mypy_report: list[str]) -> None:
    assert MISSPELT_OPTION in mypy_report


def test_a_call_option_of_the_wrong_type_is_a_type_error_listing_the_options(
    mypy_report: list[str],
) -> None:
    index = mypy_report.index(MISTYPED_OPTION)
    assert "max_tool_rounds: int = ..." in mypy_report[index + 2]


def test_stream_events_carry_the_prompts_output_type(mypy_report: list[str]) -> None:
    assert any(
        line.startswith("note: Revealed type is")
        and line.endswith('ResponseCompleted[user_code.Review]"')
        for line in mypy_report
    )


def test_deps_of_another_type_than_the_prompts_are_a_type_error(mypy_report: list[str]) -> None:
    assert WRONG_DEPS in mypy_report


def test_forgotten_deps_of_a_prompt_that_needs_them_are_a_type_error(
    mypy_report: list[str],
) -> None:
    assert FORGOTTEN_DEPS in mypy_report


APP_WRONG_DEPS = (
    'error: Cannot infer value of type parameter "DepsT" of "evaluate" of "App"  [misc]'
)
APP_WITHOUT_THE_PROMPTS_DEPS = (
    'error: Argument 1 to "evaluate" of "App" has incompatible type "Prompt[Review, Repo]";'
    ' expected "Prompt[Review, None]"  [arg-type]'
)


def test_an_app_is_typed_by_the_deps_it_binds(mypy_report: list[str]) -> None:
    assert 'note: Revealed type is "promptkit.app._app.App[user_code.Repo]"' in mypy_report


def test_deps_of_the_wrong_type_through_an_app_are_a_type_error(mypy_report: list[str]) -> None:
    assert APP_WRONG_DEPS in mypy_report


def test_an_app_without_deps_of_the_prompts_type_is_a_type_error_unless_the_call_passes_them(
    mypy_report: list[str],
) -> None:
    # Once for an app binding none, once for an app binding deps of another type.
    assert mypy_report.count(APP_WITHOUT_THE_PROMPTS_DEPS) == 2


def test_the_user_file_has_no_other_type_error(mypy_report: list[str]) -> None:
    """The right deps pass (given to the call, or bound in the app), and so does anything for a
    prompt annotated without a deps type (`Prompt[Review]` keeps meaning what it meant before
    deps were typed)."""
    assert [line for line in mypy_report if line.startswith("error")] == [
        'error: Module has no attribute "WorkspaceDigestSectoin"  [attr-defined]',
        MISSPELT_OPTION,
        MISSPELT_OPTION_OVERLOADS,
        MISTYPED_OPTION,
        WRONG_DEPS,
        FORGOTTEN_DEPS,
        WRONG_DEPS,
        APP_WRONG_DEPS,
        APP_WITHOUT_THE_PROMPTS_DEPS,
        APP_WITHOUT_THE_PROMPTS_DEPS,
    ]
