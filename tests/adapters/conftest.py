"""Fixtures for the adapter tests: adapters built on the real SDK clients pointed at the shared
FakeProviderServer (`server`, from tests/conftest.py), with strict response validation, for each
wire API (`wire` is parametrised over OpenAI Responses, OpenAI Chat Completions and Anthropic
Messages).

Keys are recognisable fakes so tests can assert they never appear in an error or a log. Retries
use the `retry_after` of scripted errors (milliseconds), and timeouts are short, so every test
stays fast.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest

from promptkit.adapters import AnthropicAdapter, OpenAIAdapter, WireAdapter
from promptkit.testing import Endpoint, FakeProviderServer

OPENAI_KEY = "sk-test-adapters-0123456789abcdefghijklmnop"
ANTHROPIC_KEY = "sk-ant-test-adapters-0123456789abcdefghijklmnop"
ANTHROPIC_MODEL = "claude-haiku-4-5"
OPENAI_MODEL = "gpt-4.1-mini"
CLIENT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Wire:
    """One wire API: how to build its client and adapter, and where its request keeps things."""

    name: str

    @property
    def endpoint(self) -> Endpoint:
        endpoints: dict[str, Endpoint] = {
            "responses": "responses",
            "chat": "chat_completions",
            "messages": "messages",
        }
        return endpoints[self.name]

    @property
    def api_key(self) -> str:
        return ANTHROPIC_KEY if self.name == "messages" else OPENAI_KEY

    @property
    def model(self) -> str:
        return ANTHROPIC_MODEL if self.name == "messages" else OPENAI_MODEL

    def client(
        self,
        server: FakeProviderServer,
        *,
        max_retries: int,
        timeout: float,
        base_url: str | None = None,
        strict_validation: bool = True,
    ) -> Any:
        """A sync client for the server (or for `base_url`, the server's root); without
        `strict_validation` it accepts replies as leniently as a production client does."""
        if self.name == "messages":
            return anthropic.Anthropic(
                api_key=ANTHROPIC_KEY,
                base_url=base_url or server.anthropic_base_url,
                max_retries=max_retries,
                timeout=timeout,
                _strict_response_validation=strict_validation,
            )
        return openai.OpenAI(
            api_key=OPENAI_KEY,
            base_url=f"{base_url}/v1" if base_url else server.openai_base_url,
            max_retries=max_retries,
            timeout=timeout,
            _strict_response_validation=strict_validation,
        )

    def async_client(
        self,
        server: FakeProviderServer,
        *,
        max_retries: int = 0,
        timeout: float = CLIENT_TIMEOUT,
        strict_validation: bool = True,
    ) -> Any:
        """An async client; create it inside the running event loop, close it with `async with`."""
        if self.name == "messages":
            return anthropic.AsyncAnthropic(
                api_key=ANTHROPIC_KEY,
                base_url=server.anthropic_base_url,
                max_retries=max_retries,
                timeout=timeout,
                _strict_response_validation=strict_validation,
            )
        return openai.AsyncOpenAI(
            api_key=OPENAI_KEY,
            base_url=server.openai_base_url,
            max_retries=max_retries,
            timeout=timeout,
            _strict_response_validation=strict_validation,
        )

    def adapter(
        self, *, client: Any = None, async_client: Any = None, **options: Any
    ) -> WireAdapter:
        """The adapter for this wire API around the given clients (of `model=` when given, else
        the wire's default model)."""
        model = options.pop("model", self.model)
        if self.name == "messages":
            return AnthropicAdapter(
                model=model, client=client, async_client=async_client, **options
            )
        return OpenAIAdapter(
            model=model,
            client=client,
            async_client=async_client,
            api="responses" if self.name == "responses" else "chat",
            **options,
        )

    def user_text(self, body: dict[str, Any]) -> str:
        """The user turn the request opened with."""
        if self.name == "chat":
            return str(body["messages"][1]["content"])
        items = body["input"] if self.name == "responses" else body["messages"]
        # Responses takes a conversation that is only the user's text as that text.
        return items if isinstance(items, str) else str(items[0]["content"])

    def system_text(self, body: dict[str, Any]) -> str:
        """The rendered prompt as the request carried it."""
        if self.name == "responses":
            return str(body["instructions"])
        if self.name == "chat":
            return str(body["messages"][0]["content"])
        return str(body["system"][0]["text"])

    def asks_for_schema(self, body: dict[str, Any]) -> bool:
        """Whether the request asked the API for schema-constrained output."""
        if self.name == "responses":
            return "format" in body.get("text", {})
        if self.name == "chat":
            return "response_format" in body
        return "format" in body.get("output_config", {})

    def tool_results(self, body: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
        """(call id, content, is_error) of every tool result the request sent back."""
        if self.name == "responses":
            if isinstance(body["input"], str):  # only the user's text: no results yet
                return []
            return [
                (item["call_id"], item["output"], None)
                for item in body["input"]
                if item.get("type") == "function_call_output"
            ]
        if self.name == "chat":
            return [
                (item["tool_call_id"], item["content"], None)
                for item in body["messages"]
                if item.get("role") == "tool"
            ]
        return [
            (block["tool_use_id"], block["content"], block["is_error"])
            for message in body["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]


WIRES = (Wire("responses"), Wire("chat"), Wire("messages"))


@pytest.fixture(params=WIRES, ids=lambda wire: wire.name)
def wire(request: pytest.FixtureRequest) -> Wire:
    """Each wire API in turn; narrow it with `parametrize("wire", [names], indirect=True)`."""
    chosen = request.param
    return chosen if isinstance(chosen, Wire) else Wire(chosen)


MakeAdapter = Callable[..., WireAdapter]


@pytest.fixture
def make_adapter(wire: Wire, server: FakeProviderServer) -> Iterator[MakeAdapter]:
    """`make_adapter(max_retries=0, timeout=10.0, base_url=None, strict_validation=True,
    **adapter_options)`."""
    clients: list[Any] = []

    def make(
        *,
        max_retries: int = 0,
        timeout: float = CLIENT_TIMEOUT,
        base_url: str | None = None,
        strict_validation: bool = True,
        **options: Any,
    ) -> WireAdapter:
        client = wire.client(
            server,
            max_retries=max_retries,
            timeout=timeout,
            base_url=base_url,
            strict_validation=strict_validation,
        )
        clients.append(client)
        return wire.adapter(client=client, **options)

    yield make
    for client in clients:
        client.close()
