"""`AnthropicAdapter`: prompts on Anthropic's Messages API.

This module names the `anthropic` SDK; how Messages is spoken is in `_messages`, and everything
else is `WireAdapter`'s. The `anthropic` package is imported only when a client is built or an
error is translated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from promptkit.adapters._cost import PriceTable
from promptkit.adapters._messages import MessagesApi
from promptkit.adapters._settings import ModelSettings
from promptkit.adapters._wire_adapter import ProviderSdk, StructuredOutputMode, WireAdapter
from promptkit.adapters._wire_api import WireApi
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import ArgumentValueError

if TYPE_CHECKING:
    import anthropic


def _load_anthropic() -> Any:
    import anthropic

    return anthropic


class AnthropicAdapter(WireAdapter):
    """Runs prompts on Anthropic's Messages API.

    `client` is a ready `anthropic.Anthropic` for `evaluate`, `async_client` an
    `anthropic.AsyncAnthropic` for `aevaluate`. When neither is given, clients are built on first
    use as `anthropic.Anthropic(**client_kwargs)`, so `ANTHROPIC_API_KEY` applies; when one is
    given the adapter builds none. `max_tokens` caps each reply.
    """

    sdk: ClassVar[ProviderSdk] = ProviderSdk(
        title="Anthropic",
        load=_load_anthropic,
        client_class="Anthropic",
        async_client_class="AsyncAnthropic",
        base_error="AnthropicError",
        key_variable="ANTHROPIC_API_KEY",
        url_variable="ANTHROPIC_BASE_URL",
    )

    def __init__(
        self,
        *,
        model: str,
        client: anthropic.Anthropic | None = None,
        async_client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = 4096,
        client_kwargs: Mapping[str, Any] | None = None,
        structured_output: StructuredOutputMode = "native",
        settings: ModelSettings | None = None,
        prices: PriceTable | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        super().__init__(
            model=model,
            client=client,
            async_client=async_client,
            client_kwargs=client_kwargs,
            structured_output=structured_output,
            settings=settings,
            prices=prices,
            clock=clock,
        )
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ArgumentValueError(
                f"AnthropicAdapter: max_tokens must be an int >= 1, got {max_tokens!r}"
            )
        self._max_tokens = max_tokens

    @property
    def provider(self) -> str:
        return "anthropic"

    def __repr__(self) -> str:
        return f"AnthropicAdapter(model={self.model!r}, max_tokens={self._max_tokens})"

    def wire_api(self) -> WireApi:
        return MessagesApi(self.model, self._max_tokens, native_output=self.asks_for_schema)
