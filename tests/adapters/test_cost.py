"""Cost: `usage.cost` from the adapter's price table, following each provider's usage fields,
summed over an evaluation's requests and over a session."""

import pytest
from hypothesis import given, strategies as st

from promptkit import MarkdownSection, Prompt
from promptkit.adapters import (
    DEFAULT_PRICES,
    ModelPrice,
    PriceTable,
    TokenUsage,
    session_token_usage,
)
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, Usage

PROMPT: Prompt[None] = Prompt(
    ns="tests/cost",
    key="ask",
    sections=(MarkdownSection(title="Task", key="task", template="Answer."),),
)
TABLE = PriceTable(
    as_of="2026-01-01",
    prices={
        "gpt-4.1-mini": ModelPrice(input=2.0, cached_input=0.5, output=8.0),
        "claude-haiku-4-5": ModelPrice(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0),
    },
)


def test_cost_follows_each_providers_usage_fields(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.text(
            "ok",
            usage=Usage(
                input_tokens=1_000_000,
                output_tokens=100_000,
                cached_tokens=200_000,
                cache_creation_tokens=100_000,
            ),
        )
    )

    response = make_adapter(prices=TABLE).evaluate(PROMPT, session=Session())

    expected = {
        # OpenAI: input includes the cached tokens; cache writes cost nothing extra.
        "responses": 0.8 * 2.0 + 0.2 * 0.5 + 0.1 * 8.0,
        "chat": 0.8 * 2.0 + 0.2 * 0.5 + 0.1 * 8.0,
        # Anthropic: input excludes cache reads and writes, each priced on its own.
        "messages": 1.0 * 2.0 + 0.2 * 0.5 + 0.1 * 2.5 + 0.1 * 8.0,
    }[wire.name]
    assert response.usage.cost == pytest.approx(expected)


def test_session_totals_add_up_the_cost_of_every_evaluation(
    server: FakeProviderServer, make_adapter
) -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=0)
    server.enqueue(Reply.text("a", usage=usage), Reply.text("b", usage=usage))
    adapter = make_adapter(prices=TABLE)
    session = Session()

    adapter.evaluate(PROMPT, session=session)
    adapter.evaluate(PROMPT, session=session)

    assert session_token_usage(session).cost == pytest.approx(4.0)


def test_a_model_missing_from_the_table_costs_none(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok"))

    response = make_adapter(prices=PriceTable(as_of="2026-01-01", prices={})).evaluate(
        PROMPT, session=Session()
    )

    assert response.usage.cost is None


def test_a_dated_model_name_takes_its_base_models_price() -> None:
    assert DEFAULT_PRICES.price("gpt-4.1-mini-2025-04-14") == DEFAULT_PRICES.price("gpt-4.1-mini")
    assert DEFAULT_PRICES.price("gpt-4.1") is None


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9))
def test_cost_is_never_negative(inputs: int, cached: int, written: int, outputs: int) -> None:
    usage = TokenUsage(
        input_tokens=inputs,
        cached_tokens=cached,
        cache_write_tokens=written,
        output_tokens=outputs,
    )

    for provider in ("openai", "anthropic"):
        cost = TABLE.cost(provider, "gpt-4.1-mini", usage)
        assert cost is not None and cost >= 0


@pytest.mark.parametrize("price", [-1.0, float("nan"), True, "1"])
def test_a_malformed_price_is_refused(price: object) -> None:
    with pytest.raises(ValueError, match=r"ModelPrice\.input"):
        ModelPrice(input=price, output=1.0)  # type: ignore[arg-type]
