"""What an evaluation cost: per-model prices (US dollars per million tokens) and the arithmetic
that turns a `TokenUsage` into dollars.

Prices change, so the built-in table is small, dated (`DEFAULT_PRICES.as_of`) and covers only the
default models; an application passes its own `PriceTable` to an adapter (`prices=`). A model
not in the table costs None, never a guess. The arithmetic follows each provider's usage
fields: OpenAI's input tokens include the cached ones, Anthropic's exclude both the cached and
the cache-written ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
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
    """Prices by model name, as of a date. A dated model name (`gpt-4.1-mini-2025-04-14`) takes
    the price of the longest listed name it starts with."""

    prices: Mapping[str, ModelPrice]
    as_of: str
    _frozen: Mapping[str, ModelPrice] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_frozen", MappingProxyType(dict(self.prices)))

    def price(self, model: str) -> ModelPrice | None:
        """The price of `model`, or None when the table does not list it."""
        exact = self._frozen.get(model)
        if exact is not None:
            return exact
        prefixes = [name for name in self._frozen if model.startswith(f"{name}-")]
        return self._frozen[max(prefixes, key=len)] if prefixes else None

    def cost(self, provider: str, model: str, usage: TokenUsage) -> float | None:
        """Dollars `usage` cost on `model` of `provider`; None for an unlisted model or when the
        provider reported no token counts."""
        price = self.price(model)
        if price is None or (usage.input_tokens is None and usage.output_tokens is None):
            return None
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

    def priced(self, provider: str, model: str, usage: TokenUsage) -> TokenUsage:
        """`usage` with its `cost` filled in."""
        return replace(usage, cost=self.cost(provider, model, usage))


DEFAULT_PRICES = PriceTable(
    as_of="2025-10-15",
    prices={
        # Published list prices of the default models, per million tokens.
        "gpt-4.1-mini": ModelPrice(input=0.40, cached_input=0.10, output=1.60),
        "claude-haiku-4-5": ModelPrice(
            input=1.00, cached_input=0.10, cache_write=1.25, output=5.00
        ),
    },
)
"""The built-in table: the default models' list prices on `as_of`. Pass your own for others."""
