"""The REPL's history ends with the session's token totals, cache writes and reasoning included."""

from datetime import UTC, datetime

from promptkit.repl import history_lines
from promptkit.session import PromptExecuted


def executed(input_tokens: int, cache_writes: int | None, reasoning: int | None) -> PromptExecuted:
    return PromptExecuted(
        prompt_ns="demo",
        prompt_key="review",
        prompt_name=None,
        provider="openai",
        model="gpt-4.1-mini",
        text="ok",
        output=None,
        input_tokens=input_tokens,
        output_tokens=10,
        cached_tokens=5,
        duration_s=0.5,
        executed_at=datetime(2026, 1, 1, tzinfo=UTC),
        cache_write_tokens=cache_writes,
        reasoning_tokens=reasoning,
    )


def test_history_totals_every_answer_including_cache_writes_and_reasoning() -> None:
    lines = history_lines([executed(100, 40, 3), executed(50, None, 2)], [])

    assert lines[-1] == (
        "total: 150 input / 20 output tokens (10 cached, 40 written to the cache, 5 reasoning),"
        " 2 unpriced"
    )


def test_history_without_answers_has_no_total() -> None:
    assert history_lines([], []) == []
