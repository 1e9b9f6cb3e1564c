"""Evaluators: each scores one reply in [0, 1] with a reason, or says it does not apply."""

import asyncio
from typing import Any

import pytest

from promptkit.adapters import PromptResponse, TokenUsage
from promptkit.errors import OutputParseError
from promptkit.evals import (
    Case,
    Contains,
    ExactMatch,
    FunctionEvaluator,
    JsonFieldEquals,
    JudgeVerdict,
    LLMJudge,
    Regex,
    Score,
)
from promptkit.testing import FakeProviderServer, Reply

from .conftest import CapitalAnswer, Country, openai_adapter


def reply(text: str, output: Any = None) -> PromptResponse[Any]:
    return PromptResponse(
        prompt_name="capital",
        text=text,
        output=output,
        tool_calls=(),
        usage=TokenUsage(10, 5),
        model="gpt-4.1-mini",
        provider="openai",
    )


FRANCE = Case("fr", (Country("France"),), expected="Paris")


def test_exact_match_compares_text_ignoring_surrounding_whitespace():
    assert ExactMatch().evaluate(FRANCE, reply(" Paris\n")) == Score(1.0, "text equals expected")
    missed = ExactMatch().evaluate(FRANCE, reply("Paris, France"))
    assert missed is not None
    assert (missed.value, missed.reason) == (0.0, "text is Paris, France")


def test_exact_match_compares_structured_output_with_expected_json():
    case = Case("fr", expected={"capital": "Paris", "confidence": 1.0})
    output = CapitalAnswer(capital="Paris", confidence=1.0)

    score = ExactMatch().evaluate(case, reply('{"capital": "Paris"}', output))

    assert score is not None and score.value == 1.0


def test_expected_output_evaluators_do_not_apply_without_expected_output():
    case = Case("open", (Country("France"),))
    assert ExactMatch().evaluate(case, reply("Paris")) is None
    assert Contains().evaluate(case, reply("Paris")) is None
    assert JsonFieldEquals("capital").evaluate(case, reply("{}")) is None


def test_contains_finds_the_expected_text_or_a_given_needle():
    assert Contains().evaluate(FRANCE, reply("It is Paris.")) == Score(1.0, "found: Paris")
    assert Contains("paris").evaluate(FRANCE, reply("It is Paris.")) == Score(0.0, "missing: paris")
    score = Contains("paris", case_sensitive=False).evaluate(FRANCE, reply("It is Paris."))
    assert score is not None and score.value == 1.0


def test_regex_searches_the_reply_text():
    evaluator = Regex(r"^[A-Z][a-z]+$")
    assert evaluator.evaluate(FRANCE, reply("Paris")).value == 1.0
    assert evaluator.evaluate(FRANCE, reply("paris is nice")).value == 0.0


def test_regex_with_an_invalid_pattern_is_refused_when_built():
    with pytest.raises(ValueError, match="invalid pattern"):
        Regex("(")


def test_json_field_equality_reads_a_dotted_path_of_the_structured_output():
    case = Case("fr", expected={"capital": "Paris"})
    good = JsonFieldEquals("capital").evaluate(
        case, reply("", CapitalAnswer(capital="Paris", confidence=0.2))
    )
    bad = JsonFieldEquals("capital").evaluate(
        case, reply("", CapitalAnswer(capital="Lyon", confidence=0.9))
    )
    nested = JsonFieldEquals("items.1.name", value="b").evaluate(
        case, reply('{"items": [{"name": "a"}, {"name": "b"}]}')
    )

    assert good == Score(1.0, 'capital = "Paris"')
    assert bad == Score(0.0, "capital = \"Lyon\", expected 'Paris'")
    assert nested is not None and nested.value == 1.0


def test_json_field_missing_from_the_output_scores_zero():
    score = JsonFieldEquals("capital").evaluate(
        Case("fr", expected={"capital": "Paris"}), reply("not json")
    )
    assert score == Score(0.0, "capital is missing from the output")


def test_function_evaluator_accepts_bools_numbers_and_scores():
    def short(case: Case, response: PromptResponse[Any]) -> bool:
        return len(response.text) < 10

    def half(case: Case, response: PromptResponse[Any]) -> float:
        return 0.5

    assert FunctionEvaluator(short).evaluate(FRANCE, reply("Paris")) == Score(1.0, "returned True")
    assert FunctionEvaluator(short).name == "short"
    assert FunctionEvaluator(half).evaluate(FRANCE, reply("x")) == Score(0.5, "returned 0.5")


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan")])
def test_score_outside_zero_to_one_is_refused(value):
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        Score(value)


def test_llm_judge_returns_the_models_typed_verdict_as_a_score(server: FakeProviderServer):
    server.enqueue(Reply.json({"verdict": "partial", "score": 0.5, "reason": "right city, chatty"}))
    judge = LLMJudge(openai_adapter(server), "Names the capital and nothing else.")

    score = asyncio.run(judge.evaluate(FRANCE, reply("Paris, a lovely city")))

    assert score == Score(0.5, "partial: right city, chatty")
    instructions = server.requests[0].body["instructions"]
    assert "Names the capital and nothing else." in instructions
    assert "Paris, a lovely city" in instructions
    assert JudgeVerdict.model_json_schema()["required"] == ["verdict", "score", "reason"]


def test_llm_judge_verdict_outside_the_schema_raises(server: FakeProviderServer):
    # The judge's reply goes back once with the validation error (output_retries), then fails.
    outside = Reply.json({"verdict": "great", "score": 3, "reason": ""})
    server.enqueue(outside, outside)
    judge = LLMJudge(openai_adapter(server), "Names the capital.")

    with pytest.raises(OutputParseError, match="JudgeVerdict"):
        asyncio.run(judge.evaluate(FRANCE, reply("Paris")))
