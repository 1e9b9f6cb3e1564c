"""What an evaluation cost: prices per model, and the arithmetic that turns a `TokenUsage`
into US dollars.

Prices come from two places. An application's own `PriceTable` (dollars per million tokens, per
model name) is looked up first; a model it does not list is priced from genai-prices, the price
database pydantic maintains (and pydantic-ai uses), from the data bundled with the installed
package: no request is made and its background updater is never started, so a price never
changes during a run and nothing reaches the network. A model neither knows (a local server's)
costs None, never a guess, and is counted as unpriced (`TokenUsage.unpriced`) so totals say how
much they leave out. The arithmetic follows each provider's usage fields: OpenAI's input tokens
include the cached ones, Anthropic's exclude both the cached and the cache-written ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING

from promptkit.errors import ArgumentValueError

if TYPE_CHECKING:
    from promptkit.adapters._response import TokenUsage

_PER_TOKEN = 1 / 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    """Dollars per million tokens: input, cached input (read from the prompt cache), cache
    write (Anthropic's cache creation; None means the input price), and output."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "cache_write"):
            value = getattr(self, name)
            if value is None and name in ("cached_input", "cache_write"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ArgumentValueError(f"ModelPrice.{name} must be a number, got {value!r}")
            if not (math.isfinite(value) and value >= 0):
                raise ArgumentValueError(f"ModelPrice.{name} must be 0 or more, got {value!r}")


@dataclass(frozen=True)
class PriceTable:
    """An application's prices by model name, on top of the maintained ones.

    A dated model name (`gpt-4.1-mini-2025-04-14`) takes the price of the longest listed name it
    starts with. A model the table does not list is priced from genai-prices' bundled data
    unless `maintained` is false; `as_of` says when the table's own prices were read.
    """

    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    as_of: str = ""
    maintained: bool = True
    _frozen: Mapping[str, ModelPrice] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.prices, Mapping) or not all(
            isinstance(name, str) and isinstance(price, ModelPrice)
            for name, price in self.prices.items()
        ):
            raise ArgumentValueError(
                "PriceTable.prices must map model names to ModelPrice values, got"
                f" {type(self.prices).__name__}"
            )
        object.__setattr__(self, "_frozen", MappingProxyType(dict(self.prices)))

    def price(self, model: str) -> ModelPrice | None:
        """The table's own price of `model`, or None when the table does not list it."""
        exact = self._frozen.get(model)
        if exact is not None:
            return exact
        prefixes = [name for name in self._frozen if model.startswith(f"{name}-")]
        return self._frozen[max(prefixes, key=len)] if prefixes else None

    def cost(
        self, provider: str, model: str, usage: TokenUsage, *, at: datetime | None = None
    ) -> float | None:
        """Dollars `usage` cost on `model` of `provider` at the time `at` (default: now): the
        table's price, else the maintained one; None when neither lists the model or the
        provider reported no token counts."""
        if usage.input_tokens is None and usage.output_tokens is None:
            return None
        price = self.price(model)
        if price is not None:
            return _listed_cost(price, provider, usage)
        if self.maintained:
            return maintained_cost(provider, model, usage, at=at)
        return None

    def priced(
        self, provider: str, model: str, usage: TokenUsage, *, at: datetime | None = None
    ) -> TokenUsage:
        """`usage` of one call with its `cost` filled in, or counted as unpriced."""
        cost = self.cost(provider, model, usage, at=at)
        return replace(usage, cost=cost, unpriced=1 if cost is None else 0)


def _listed_cost(price: ModelPrice, provider: str, usage: TokenUsage) -> float:
    inputs = usage.input_tokens or 0
    cached = usage.cached_tokens or 0
    written = usage.cache_write_tokens or 0
    if provider == "openai":
        # Cached tokens are part of input_tokens there; writing the cache costs nothing extra.
        inputs, written = max(0, inputs - cached), 0
    cached_price = price.input if price.cached_input is None else price.cached_input
    write_price = price.input if price.cache_write is None else price.cache_write
    dollars = (
        inputs * price.input
        + cached * cached_price
        + written * write_price
        + (usage.output_tokens or 0) * price.output
    ) * _PER_TOKEN
    return round(dollars, 10)


def maintained_cost(
    provider: str, model: str, usage: TokenUsage, *, at: datetime | None = None
) -> float | None:
    """Dollars `usage` cost on `model` of `provider` by genai-prices' bundled data, None when
    it does not know the model."""
    # Imported on the first price: its data is a large module, and most commands price nothing.
    from genai_prices import Usage, calc_price

    inputs = usage.input_tokens or 0
    if provider == "anthropic":
        # genai-prices counts every input token in input_tokens, cache reads and writes among
        # them, as OpenAI reports them; Anthropic reports those two apart.
        inputs += (usage.cached_tokens or 0) + (usage.cache_write_tokens or 0)
    counted = Usage(
        input_tokens=inputs,
        cache_read_tokens=usage.cached_tokens or 0,
        cache_write_tokens=usage.cache_write_tokens or 0,
        output_tokens=usage.output_tokens or 0,
    )
    try:
        calculation = calc_price(counted, model, provider_id=provider, genai_request_timestamp=at)
    except LookupError:  # a model (or provider) the database does not list
        return None
    return round(float(calculation.total_price), 10)


DEFAULT_PRICES = PriceTable()
"""No prices of its own: every model is priced from genai-prices' bundled data."""
