"""Anthropic Messages, everything about speaking it: the rendered prompt as a cached system block,
tools and `output_config`; earlier turns as messages of content blocks; `ModelSettings` as
request fields; the reply's content blocks and stop reason; the message that replays a reply;
and the event stream.

The system block is marked `cache_control: ephemeral`, so the tools and the system text (the
prompt's stable prefix) are a prompt-caching breakpoint. Structured output uses the native
`output_config.format` when the output schema can be shaped into what Anthropic's constrained
decoding accepts (an object root, every object closable, unsupported bounds moved into
descriptions, at most 16 union-typed and 24 optional parameters, no recursion); otherwise, or
with `structured_output="prompt"` (for models without structured outputs), the prompt's
"Response Format" section alone asks for the JSON. Either way the reply is validated.

The `anthropic` package is imported only when a reply or a stream is read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from promptkit.adapters._conversation import Message, MessageToolCall
from promptkit.adapters._response import TokenUsage
from promptkit.adapters._schema import shape_for_strict
from promptkit.adapters._settings import ModelSettings, copied_settings
from promptkit.adapters._wire_api import (
    ModelTurn,
    ReplyShape,
    RequestedToolCall,
    StreamDecoder,
    ToolReply,
    WireApi,
    WireConversation,
    delta_text,
    normalised_finish_reason,
    timeout_option,
    without_entry,
)
from promptkit.prompt import RenderedPrompt, output_schema, schema_for_model
from promptkit.wire import MESSAGES, WireFormat, check_tool_names, declared_only

# Stop reasons of a reply that ended before the model finished it.
_CUT_OFF = frozenset({"max_tokens", "model_context_window_exceeded"})


@dataclass(frozen=True)
class MessagesApi(WireApi):
    """Anthropic Messages: a cached system block, `tool_use` and `tool_result` content blocks."""

    model: str
    max_tokens: int
    native_output: bool

    format: ClassVar[WireFormat] = MESSAGES
    unsupported_settings: ClassVar[Mapping[str, str]] = {
        name: f"the Anthropic Messages API (anthropic SDK 2) takes no {name}; leave it unset"
        for name in ("temperature", "top_p", "seed")
    }
    refused_setting_values: ClassVar[Mapping[str, tuple[Any, ...]]] = {
        "reasoning_effort": ("minimal",)
    }

    # -- the request ------------------------------------------------------------------------

    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        check_tool_names(tuple(tool.name for tool in rendered.tools), self.format.dialect)
        fixed: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens}
        if rendered.text:
            fixed["system"] = [
                {"type": "text", "text": rendered.text, "cache_control": {"type": "ephemeral"}}
            ]
        if rendered.tools:
            fixed["tools"] = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": schema_for_model(tool.parameters_schema),
                }
                for tool in rendered.tools
            ]
        config = (
            output_config(rendered.output_type)
            if self.native_output and rendered.output_type is not None
            else None
        )
        if config is not None:
            fixed["output_config"] = config
        return WireConversation(fixed, "messages", ({"role": "user", "content": user_message},))

    def history_items(self, messages: Sequence[Message]) -> list[Mapping[str, Any]]:
        items: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "tool":
                block = {
                    "type": "tool_result",
                    "tool_use_id": message.call_id,
                    "content": message.text,
                    "is_error": message.is_error,
                }
                previous = items[-1] if items else None
                # Every result of one turn goes back in a single user message, as the API
                # requires.
                if previous is not None and previous.get("tool_results"):
                    previous["content"].append(block)
                else:
                    items.append({"role": "user", "content": [block], "tool_results": True})
            elif message.role == "user":
                items.append({"role": "user", "content": message.text})
            else:
                content: list[dict[str, Any]] = []
                if message.text:
                    content.append({"type": "text", "text": message.text})
                content.extend(
                    {"type": "tool_use", "id": c.call_id, "name": c.name, "input": _object(c)}
                    for c in message.tool_calls
                )
                items.append({"role": "assistant", "content": content})
        return [
            {key: value for key, value in item.items() if key != "tool_results"} for item in items
        ]

    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        # Every result of one turn goes back in a single user message, as the API requires.
        return [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": reply.call.call_id,
                        "content": reply.message,
                        "is_error": reply.is_error,
                    }
                    for reply in replies
                ],
            }
        ]

    def settings_fields(self, settings: ModelSettings, *, has_tools: bool) -> dict[str, Any]:
        fields = copied_settings(settings, max_output_tokens="max_tokens")
        if settings.stop_sequences is not None:
            fields["stop_sequences"] = list(settings.stop_sequences)
        if settings.reasoning_effort is not None:
            fields["output_config"] = {"effort": settings.reasoning_effort}
        if settings.parallel_tool_calls is not None and has_tools:
            fields["tool_choice"] = {
                "type": "auto",
                "disable_parallel_tool_use": not settings.parallel_tool_calls,
            }
        return fields

    # -- the reply --------------------------------------------------------------------------

    def read(self, response: Any) -> ModelTurn:
        blocks = response.content
        truncated = response.stop_reason in _CUT_OFF
        calls = tuple(
            RequestedToolCall(
                block.id,
                block.name,
                block.input,
                # A reply cut off inside a tool_use block ends with it.
                truncated=truncated and block is blocks[-1],
            )
            for block in blocks
            if block.type == "tool_use"
        )
        text = "".join(block.text for block in blocks if block.type == "text")
        refused = response.stop_reason == "refusal"
        usage = response.usage
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=TokenUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cache_read_input_tokens,
                cache_write_tokens=usage.cache_creation_input_tokens,
            ),
            finish_reason=normalised_finish_reason(
                truncated_by="length" if truncated else None,
                refused=refused,
                called_tools=bool(calls),
            ),
            refusal=(text or None) if refused else None,
            model=response.model,
            replay=partial(_replayed_message, blocks),
        )

    def reply_shape(self) -> ReplyShape:
        from anthropic.types import Message as SdkMessage

        return ReplyShape(self.api, SdkMessage, ("content",))

    # -- sending and streaming --------------------------------------------------------------

    def send_method(self, client: Any) -> Any:
        return client.messages.with_raw_response.create

    def open_stream(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return client.messages.stream(**request, **timeout_option(timeout)).__enter__()

    async def aopen_stream(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> Any:
        return await client.messages.stream(**request, **timeout_option(timeout)).__aenter__()

    def stream_decoder(self) -> StreamDecoder:
        return _MessagesDecoder(self.api)

    def without_native_output(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return without_entry(request, "output_config", "format")


def output_config(output_type: Any) -> dict[str, Any] | None:
    """`output_config` asking for `output_type`'s schema shaped for Anthropic's constrained
    decoding, or None when it cannot be (the prompt's "Response Format" section asks instead)."""
    name = getattr(output_type, "__name__", None) or "output"
    shaped = shape_for_strict(output_schema(output_type), MESSAGES.dialect, name=name)
    if not shaped.strict:
        return None
    return {"format": {"type": "json_schema", "schema": shaped.schema}}


def _object(call: MessageToolCall) -> Any:
    """A call's arguments as the object a `tool_use` block's `input` must be."""
    try:
        decoded = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return decoded if isinstance(decoded, dict) else {}


def _replayed_message(blocks: Sequence[Any]) -> tuple[Mapping[str, Any], ...]:
    from anthropic.types import ContentBlockParam

    content = [declared_only(block.to_dict(mode="json"), ContentBlockParam) for block in blocks]
    return ({"role": "assistant", "content": content},)


class _MessagesDecoder(StreamDecoder):
    finish_event = "message_stop"

    def __init__(self, api: str) -> None:
        super().__init__(api)
        self._final: Any = None

    def take(self, event: Any) -> str | None:
        kind = event.type
        # The SDK's stream also yields derived `text` events; the raw delta is read alone so
        # no text is counted twice.
        if kind == "content_block_delta" and event.delta.type == "text_delta":
            return delta_text(event.delta.text, "a text delta")
        if kind == "message_stop":
            self._final = event.message
        return None

    def finished(self) -> Any:
        return self._final
