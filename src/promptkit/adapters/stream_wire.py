"""How each wire API streams a reply: opening the SDK stream and decoding its events into text
deltas and, at the end, the same `ModelTurn` a non-streamed reply decodes to.

The final turn is built by the codec's own `read` from the SDK's accumulated object (the
Responses `response.completed` response, the Chat Completions chunks accumulated by the SDK's
`ChatCompletionStreamState`, Anthropic's `message_stop` snapshot), so a streamed reply and a
plain one cannot disagree about text, tool calls or usage.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from promptkit.adapters.wire import ModelTurn, WireCodec, timeout_option
from promptkit.errors import ProviderError, ProviderServerError


class StreamDecoder(ABC):
    """Reads the events of one streamed reply."""

    @abstractmethod
    def feed(self, event: Any) -> str | None:
        """Take one SDK event; return the text it adds to the reply, if any."""

    @abstractmethod
    def finished(self) -> Any:
        """The accumulated reply object the codec reads, or None when the stream ended early."""

    def turn(self, codec: WireCodec) -> ModelTurn:
        """The decoded reply, once the stream has ended."""
        final = self.finished()
        if final is None:
            raise ProviderError(
                f"the {codec.api} stream ended before the reply was complete; the connection"
                " may have been cut, retry the request"
            )
        return codec.read(final)


class StreamWire(ABC):
    """Opening a stream of one wire API, sync and async."""

    @abstractmethod
    def open(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        """The SDK stream for `request` (iterable, with `close()`); raises as `create` does."""

    @abstractmethod
    async def aopen(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        """The async SDK stream (async iterable, with awaitable `close()`)."""

    @abstractmethod
    def decoder(self) -> StreamDecoder:
        """A decoder for one streamed reply."""


def stream_wire_for(codec: WireCodec) -> StreamWire:
    """The stream wire of `codec`'s API."""
    wires: dict[str, StreamWire] = {
        "responses": _ResponsesStream(),
        "chat": _ChatStream(),
        "messages": _MessagesStream(),
    }
    return wires[codec.api]


# -- OpenAI Responses ---------------------------------------------------------------------------


class _ResponsesDecoder(StreamDecoder):
    def __init__(self) -> None:
        self._final: Any = None

    def feed(self, event: Any) -> str | None:
        kind = event.type
        if kind == "response.output_text.delta":
            return str(event.delta)
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self._final = event.response
        elif kind == "error":
            raise ProviderServerError(f"the response stream failed: {event.code}: {event.message}")
        return None

    def finished(self) -> Any:
        return self._final


class _ResponsesStream(StreamWire):
    def open(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return client.responses.create(**request, stream=True, **timeout_option(timeout))

    async def aopen(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return await client.responses.create(**request, stream=True, **timeout_option(timeout))

    def decoder(self) -> StreamDecoder:
        return _ResponsesDecoder()


# -- OpenAI Chat Completions --------------------------------------------------------------------

# Usage arrives in a last chunk only when asked for.
_CHAT_STREAM_OPTIONS = {"stream_options": {"include_usage": True}}


class _ChatDecoder(StreamDecoder):
    def __init__(self) -> None:
        from openai.lib.streaming.chat import ChatCompletionStreamState

        self._state: Any = ChatCompletionStreamState()
        self._chunks = 0

    def feed(self, event: Any) -> str | None:
        self._state.handle_chunk(event)
        self._chunks += 1
        if not event.choices:
            return None
        content = event.choices[0].delta.content
        return str(content) if content else None

    def finished(self) -> Any:
        return self._state.get_final_completion() if self._chunks else None


class _ChatStream(StreamWire):
    def open(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return client.chat.completions.create(
            **request, stream=True, **_CHAT_STREAM_OPTIONS, **timeout_option(timeout)
        )

    async def aopen(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return await client.chat.completions.create(
            **request, stream=True, **_CHAT_STREAM_OPTIONS, **timeout_option(timeout)
        )

    def decoder(self) -> StreamDecoder:
        return _ChatDecoder()


# -- Anthropic Messages -------------------------------------------------------------------------


class _MessagesDecoder(StreamDecoder):
    def __init__(self) -> None:
        self._final: Any = None

    def feed(self, event: Any) -> str | None:
        kind = event.type
        # The SDK's stream also yields derived `text` events; the raw delta is read alone so
        # no text is counted twice.
        if kind == "content_block_delta" and event.delta.type == "text_delta":
            return str(event.delta.text)
        if kind == "message_stop":
            self._final = event.message
        return None

    def finished(self) -> Any:
        return self._final


class _MessagesStream(StreamWire):
    def open(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return client.messages.stream(**request, **timeout_option(timeout)).__enter__()

    async def aopen(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return await client.messages.stream(**request, **timeout_option(timeout)).__aenter__()

    def decoder(self) -> StreamDecoder:
        return _MessagesDecoder()
