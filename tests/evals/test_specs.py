"""Evaluators named on the command line, and the progress bar that only a terminal sees."""

import io

import pytest

from promptkit.cli._eval_table import ProgressBar
from promptkit.evals import (
    CaseResult,
    Contains,
    ExactMatch,
    JsonFieldEquals,
    Regex,
    evaluator_from_spec,
)


def test_built_in_evaluator_specs():
    assert evaluator_from_spec("exact") == ExactMatch()
    assert evaluator_from_spec("contains:Paris") == Contains("Paris", name="contains:Paris")
    assert evaluator_from_spec("icontains") == Contains(
        None, case_sensitive=False, name="icontains"
    )
    assert evaluator_from_spec("regex:^P") == Regex("^P", name="regex:^P")
    assert evaluator_from_spec("json:capital") == JsonFieldEquals("capital")


def test_module_attribute_spec_imports_a_callable():
    evaluator = evaluator_from_spec("os.path:isabs")
    assert evaluator.name == "isabs"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("exactly", "unknown evaluator 'exactly'"),
        ("regex:", "unknown evaluator 'regex:'"),
        ("judge:be brief", "needs a model to judge with"),
        ("no_such_module_here:x", "cannot import no_such_module_here"),
    ],
)
def test_bad_evaluator_spec_says_what_is_accepted(spec, message):
    with pytest.raises(ValueError, match=message):
        evaluator_from_spec(spec)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_only_on_a_terminal():
    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        bar = ProgressBar(2, stream)
        bar.advance(CaseResult("a", "latest"))
        bar.advance(CaseResult("b", "latest", error="ProviderServerError: 503"))
        bar.close()

    assert terminal.getvalue().endswith(f"\r[{'#' * 30}] 2/2, 1 failed\n")
    assert pipe.getvalue() == ""
