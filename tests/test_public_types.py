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
from promptkit import Prompt, Session
from promptkit.adapters import OpenAIAdapter


@dataclass(frozen=True)
class Review:
    verdict: str


promptkit.WorkspaceDigestSectoin
reviewing = Prompt(ns="demo", key="review", output_type=Review)
plain = Prompt(ns="demo", key="plain")
reveal_type(reviewing)
reveal_type(plain)
reveal_type(OpenAIAdapter(model="m").evaluate(reviewing, session=Session()).output)
adapter = OpenAIAdapter(model="m")
adapter.evaluate(plain, session=Session(), max_tool_round=3)
adapter.stream(plain, session=Session(), max_tool_rounds="3")
for event in adapter.stream(reviewing, session=Session(), deadline=5.0, output_retries=0):
    reveal_type(event)
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
    assert 'note: Revealed type is "promptkit.prompt.prompt.Prompt[user_code.Review]"' in (
        mypy_report
    )


def test_a_prompt_without_an_output_type_is_inferred_as_prompt_of_none(
    mypy_report: list[str],
) -> None:
    assert 'note: Revealed type is "promptkit.prompt.prompt.Prompt[None]"' in mypy_report


def test_evaluate_output_is_typed_from_the_prompt(mypy_report: list[str]) -> None:
    assert 'note: Revealed type is "user_code.Review"' in mypy_report


MISSPELT_OPTION = (
    'error: Unexpected keyword argument "max_tool_round" for "evaluate" of "WireAdapter"; did you'
    ' mean "max_tool_rounds"?  [call-arg]'
)
MISTYPED_OPTION = (
    'error: Argument "max_tool_rounds" to "stream" of "WireAdapter" has incompatible type "str";'
    ' expected "int"  [arg-type]'
)


def test_a_misspelt_call_option_is_a_type_error(mypy_report: list[str]) -> None:
    assert MISSPELT_OPTION in mypy_report


def test_a_call_option_of_the_wrong_type_is_a_type_error(mypy_report: list[str]) -> None:
    assert MISTYPED_OPTION in mypy_report


def test_stream_events_carry_the_prompts_output_type(mypy_report: list[str]) -> None:
    assert any(
        line.startswith("note: Revealed type is")
        and line.endswith('ResponseCompleted[user_code.Review]"')
        for line in mypy_report
    )


def test_the_user_file_has_no_other_type_error(mypy_report: list[str]) -> None:
    assert [line for line in mypy_report if line.startswith("error")] == [
        'error: Module has no attribute "WorkspaceDigestSectoin"  [attr-defined]',
        MISSPELT_OPTION,
        MISTYPED_OPTION,
    ]
