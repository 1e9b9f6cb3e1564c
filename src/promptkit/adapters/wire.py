"""The seam between the shared tool loop and one provider wire API (`WireCodec`).

A codec knows how one API spells a conversation: the request for a rendered prompt, how a reply
carries text, tool calls and usage, how tool results go back, and the one SDK call that sends a
request. It holds no state of its own; the conversation is a `WireConversation` value that grows
by one model turn and its tool results per round.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptkit.adapters.response import FinishReason, TokenUsage
from promptkit.prompt import RenderedPrompt


@dataclass(frozen=True)
class RequestedToolCall:
    """A tool call as the model asked for it; `arguments` is JSON text or an object.

    `truncated` says the reply was cut off while the model was still writing this call, so its
    arguments are incomplete: such a call is answered with an error and never run.
    """

    call_id: str
    name: str
    arguments: str | Mapping[str, Any]
    truncated: bool = False


@dataclass(frozen=True)
class ModelTurn:
    """One reply, decoded: its text, its tool calls, its usage, the wire items that repeat it
    in the next request (`replay`), why it ended, and the model's refusal text if it declined."""

    text: str
    tool_calls: tuple[RequestedToolCall, ...]
    usage: TokenUsage
    model: str | None
    replay: tuple[Mapping[str, Any], ...]
    finish_reason: FinishReason = "stop"
    refusal: str | None = None


@dataclass(frozen=True)
class ToolReply:
    """The result of one tool call as it goes back to the model."""

    call: RequestedToolCall
    message: str
    is_error: bool


@dataclass(frozen=True)
class WireConversation:
    """Everything a request carries: fixed parts (model, system text, tools, output format) and
    the growing list of conversation items under `items_key`."""

    fixed: Mapping[str, Any]
    items_key: str
    items: tuple[Mapping[str, Any], ...]

    def request(self) -> dict[str, Any]:
        """The keyword arguments of the SDK call."""
        return {**self.fixed, self.items_key: list(self.items)}

    def extended(self, items: Sequence[Mapping[str, Any]]) -> WireConversation:
        """This conversation with `items` appended."""
        return WireConversation(self.fixed, self.items_key, (*self.items, *items))


class WireCodec(ABC):
    """How one wire API (OpenAI Responses, Chat Completions, Anthropic Messages) is spoken."""

    api: str
    """Short name of the API, for messages and the execution record."""

    @abstractmethod
    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        """The first request: the rendered prompt as system text and `user_message` as the turn."""

    @abstractmethod
    def read(self, response: Any) -> ModelTurn:
        """Decode an SDK response object."""

    @abstractmethod
    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        """The conversation items that carry `replies` back to the model."""

    @abstractmethod
    def create(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        """Send `request` with a sync SDK client; `timeout` None keeps the client's own."""

    @abstractmethod
    async def acreate(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        """Send `request` with an async SDK client; `timeout` None keeps the client's own."""


def timeout_option(timeout: float | None) -> dict[str, float]:
    """`{"timeout": t}` for an SDK call, or nothing so the client's default applies."""
    return {} if timeout is None else {"timeout": timeout}


def normalised_finish_reason(
    *, truncated_by: str | None, refused: bool, called_tools: bool
) -> FinishReason:
    """The `FinishReason` of a reply: cut off (`length` or `content_filter`, as `truncated_by`
    says), declined, calling tools, or complete. A cut-off reply stays cut off even when it
    called tools, so its last call is known to be incomplete."""
    if truncated_by is not None:
        return "content_filter" if truncated_by == "content_filter" else "length"
    if refused:
        return "refusal"
    return "tool_calls" if called_tools else "stop"
