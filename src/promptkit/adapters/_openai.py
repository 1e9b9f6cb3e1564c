"""`OpenAIAdapter`: prompts on OpenAI through the Responses API, or through Chat Completions for
OpenAI-compatible servers (vLLM, Ollama, llama.cpp server).

This module names the `openai` SDK and chooses the wire API; how each API is spoken is in its
own module (`_responses`, `_chat`), and everything else is `WireAdapter`'s. The `openai` package
is imported only when a client is built or an error is translated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from promptkit.adapters._chat import ChatCompletionsApi
from promptkit.adapters._cost import PriceTable
from promptkit.adapters._responses import ResponsesApi
from promptkit.adapters._settings import ModelSettings
from promptkit.adapters._wire_adapter import ProviderSdk, StructuredOutputMode, WireAdapter
from promptkit.adapters._wire_api import WireApi
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import ArgumentValueError

if TYPE_CHECKING:
    import openai

OpenAIApi = Literal["responses", "chat"]


def _load_openai() -> Any:
    import openai

    return openai


class OpenAIAdapter(WireAdapter):
    """Runs prompts on OpenAI (`api="responses"`) or an OpenAI-compatible server (`api="chat"`).

    `client` is a ready `openai.OpenAI` for `evaluate` and `async_client` an `openai.AsyncOpenAI`
    for `aevaluate`. When neither is given, clients are built on first use as
    `openai.OpenAI(**client_kwargs)` (and `AsyncOpenAI`), so `OPENAI_API_KEY` and
    `OPENAI_BASE_URL` apply. When one is given, the adapter builds none: pass both to use both
    `evaluate` and `aevaluate`. Retries and timeouts are the client's (`max_retries`, `timeout`).
    `store=False` (Responses, for organisations with zero data retention) asks the provider to
    keep nothing, and for the encrypted reasoning content that is then replayed instead of ids.
    """

    sdk: ClassVar[ProviderSdk] = ProviderSdk(
        title="OpenAI",
        load=_load_openai,
        client_class="OpenAI",
        async_client_class="AsyncOpenAI",
        base_error="OpenAIError",
        key_variable="OPENAI_API_KEY",
        url_variable="OPENAI_BASE_URL",
    )

    def __init__(
        self,
        *,
        model: str,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
        api: OpenAIApi = "responses",
        client_kwargs: Mapping[str, Any] | None = None,
        structured_output: StructuredOutputMode = "native",
        store: bool | None = None,
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
        if store is not None and not isinstance(store, bool):
            raise ArgumentValueError(
                f"OpenAIAdapter: store must be True, False or None, got {store!r}"
            )
        if api not in ("responses", "chat"):
            raise ArgumentValueError(
                f"OpenAIAdapter: api must be 'responses' or 'chat', got {api!r}"
            )
        self._api: OpenAIApi = api
        self._store = store

    @property
    def provider(self) -> str:
        return "openai"

    @property
    def api(self) -> OpenAIApi:
        """The wire API in use: `responses` or `chat`."""
        return self._api

    def __repr__(self) -> str:
        return f"OpenAIAdapter(model={self.model!r}, api={self._api!r})"

    def wire_api(self) -> WireApi:
        if self._api == "chat":
            return ChatCompletionsApi(
                self.model, self.asks_for_schema, compatible_server=self.at_custom_server
            )
        return ResponsesApi(self.model, self.asks_for_schema, store=self._store)
