"""The three wire APIs as values: what an adapter that speaks one and the fake server that imitates
it must agree on.

Each `WireFormat` names its API twice (`api`, as the adapters and execution records call it, and
`endpoint`, as `FakeProviderServer` and its users do), says where requests go, whose strict
structured-output rules apply, which header carries the request id, and which of the SDK's
TypedDicts a non-streamed request must fit. The SDK types are imported only when asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from promptkit.wire._strict import ANTHROPIC_STRICT, OPENAI_STRICT, StrictDialect

Endpoint = Literal["responses", "chat_completions", "messages"]
"""A wire API as `FakeProviderServer` names it (`enqueue(..., endpoint=...)`)."""


@dataclass(frozen=True)
class WireFormat:
    """One provider wire API."""

    api: str
    """The short name adapters record (`responses`, `chat`, `messages`)."""
    endpoint: Endpoint
    title: str
    """The API's own name, for messages (`Responses`, `Chat Completions`, `Messages`)."""
    path: str
    """The request path under the provider's base URL (`/v1/responses`)."""
    provider: str
    dialect: StrictDialect
    """The provider's strict structured-output rules, which tools and formats are shaped by."""
    request_id_header: str
    """The response header the SDK reads the request id from."""
    request_type: Callable[[], Any]
    """The installed SDK's TypedDict for a non-streamed request (importing the SDK's types)."""


def _responses_request() -> Any:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    return ResponseCreateParamsNonStreaming


def _chat_request() -> Any:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return CompletionCreateParamsNonStreaming


def _messages_request() -> Any:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return MessageCreateParamsNonStreaming


RESPONSES = WireFormat(
    api="responses",
    endpoint="responses",
    title="Responses",
    path="/v1/responses",
    provider="openai",
    dialect=OPENAI_STRICT,
    request_id_header="x-request-id",
    request_type=_responses_request,
)

CHAT_COMPLETIONS = WireFormat(
    api="chat",
    endpoint="chat_completions",
    title="Chat Completions",
    path="/v1/chat/completions",
    provider="openai",
    dialect=OPENAI_STRICT,
    request_id_header="x-request-id",
    request_type=_chat_request,
)

MESSAGES = WireFormat(
    api="messages",
    endpoint="messages",
    title="Messages",
    path="/v1/messages",
    provider="anthropic",
    dialect=ANTHROPIC_STRICT,
    request_id_header="request-id",
    request_type=_messages_request,
)

WIRE_FORMATS: tuple[WireFormat, ...] = (RESPONSES, CHAT_COMPLETIONS, MESSAGES)
"""Every wire API promptkit speaks, in the order the docs list them."""
