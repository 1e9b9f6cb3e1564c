"""Cost: `usage.cost` from the application's price table, else from genai-prices' bundled data,
following each provider's usage fields, summed over an evaluation's requests and over a
session; a call no source prices is counted as unpriced, never as 0."""

import threading

import genai_prices
import pytest
from genai_prices import data_snapshot
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


USAGE = Usage(
    input_tokens=1_000_000, output_tokens=100_000, cached_tokens=200_000, cache_creation_tokens=0
)


def test_a_model_the_table_does_not_list_is_priced_from_genai_prices(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok", usage=USAGE))

    response = make_adapter().evaluate(PROMPT, session=Session())

    # genai-prices counts cached tokens inside input_tokens, as OpenAI reports them.
    counted = genai_prices.Usage(
        input_tokens=1_000_000 + (200_000 if wire.name == "messages" else 0),
        cache_read_tokens=200_000,
        output_tokens=100_000,
    )
    provider = "anthropic" if wire.name == "messages" else "openai"
    expected = genai_prices.calc_price(counted, wire.model, provider_id=provider).total_price
    assert response.usage.cost == pytest.approx(float(expected))
    assert response.usage.unpriced == 0


def test_the_applications_own_price_wins_over_genai_prices(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=0)
    own = PriceTable({wire.model: ModelPrice(input=7.0, output=0.0)})
    server.enqueue(Reply.text("ok", usage=usage))

    response = make_adapter(prices=own).evaluate(PROMPT, session=Session())

    assert response.usage.cost == pytest.approx(7.0)


def test_a_model_no_source_lists_is_unpriced_not_free(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok", usage=USAGE))

    response = make_adapter(model="qwen2.5-coder-local").evaluate(PROMPT, session=Session())

    assert (response.usage.cost, response.usage.unpriced) == (None, 1)
    assert response.usage.cost_text == "1 unpriced"


def test_a_table_without_maintained_prices_prices_only_what_it_lists(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok", usage=USAGE))

    response = make_adapter(prices=PriceTable(maintained=False)).evaluate(PROMPT, session=Session())

    assert (response.usage.cost, response.usage.unpriced) == (None, 1)


def test_session_totals_count_unpriced_calls_beside_the_known_cost(
    server: FakeProviderServer, make_adapter
) -> None:
    usage = Usage(input_tokens=1_000, output_tokens=0)
    prices = PriceTable({"priced-model": ModelPrice(input=1.2, output=0.0)}, maintained=False)
    server.enqueue(*(Reply.text(text, usage=usage) for text in "abc"))
    session = Session()

    make_adapter(model="priced-model", prices=prices).evaluate(PROMPT, session=session)
    for _ in range(2):
        make_adapter(model="local-model", prices=prices).evaluate(PROMPT, session=session)

    total = session_token_usage(session)
    assert total.cost == pytest.approx(0.0012)
    assert total.unpriced == 2
    assert total.cost_text == "$0.001200 + 2 unpriced"


def test_prices_come_from_the_bundled_data_with_no_updater_thread() -> None:
    threads_before = set(threading.enumerate())
    usage = TokenUsage(input_tokens=1_000, output_tokens=10)

    assert DEFAULT_PRICES.cost("openai", "gpt-4.1-mini", usage) is not None

    assert data_snapshot.get_snapshot().from_auto_update is False
    assert set(threading.enumerate()) <= threads_before


def test_the_default_table_lists_nothing_of_its_own() -> None:
    assert DEFAULT_PRICES.price("gpt-4.1-mini") is None
    assert DEFAULT_PRICES.maintained


def test_a_dated_model_name_takes_its_base_models_price() -> None:
    assert TABLE.price("gpt-4.1-mini-2025-04-14") == TABLE.price("gpt-4.1-mini")
    assert TABLE.price("gpt-4.1") is None


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
