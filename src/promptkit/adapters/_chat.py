"""OpenAI Chat Completions, everything about speaking it, as OpenAI-compatible servers (vLLM,
Ollama, llama.cpp server) do: the rendered prompt as a `system` message, function tools and
`response_format`; earlier turns as messages; `ModelSettings` as request fields; the reply's
message, tool calls, refusal and finish reason; and the chunk stream, accumulated by the SDK.

Tools go with `tool_choice: "auto"`, OpenAI's default, which llama-cpp-python's server needs
to offer them to the model at all. At a server other than OpenAI's (`compatible_server`) the
output cap goes as `max_tokens` too: llama-cpp-python ignores `max_completion_tokens`, and
OpenAI refuses `max_tokens` for its reasoning models, so it is sent there only.

The `openai` package is imported only when a reply or a stream is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from promptkit.adapters._conversation import Message
from promptkit.adapters._openai_common import (
    function_definition,
    native_output_format,
    openai_usage,
)
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
)
from promptkit.errors import ProviderError
from promptkit.prompt import RenderedPrompt
from promptkit.wire import CHAT_COMPLETIONS, WireFormat, check_tool_names

# Usage arrives in a last chunk only when asked for.
_STREAM_OPTIONS = {"stream_options": {"include_usage": True}}


@dataclass(frozen=True)
class ChatCompletionsApi(WireApi):
    """OpenAI Chat Completions: system and user messages, `tool_calls`, `tool` messages."""

    model: str
    native_output: bool
    compatible_server: bool = False

    format: ClassVar[WireFormat] = CHAT_COMPLETIONS

    # -- the request ------------------------------------------------------------------------

    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        check_tool_names(tuple(tool.name for tool in rendered.tools), self.format.dialect)
        fixed: dict[str, Any] = {"model": self.model}
        if rendered.tools:
            fixed["tools"] = [
                {"type": "function", "function": function_definition(tool)}
                for tool in rendered.tools
            ]
            fixed["tool_choice"] = "auto"
        schema_format = native_output_format(rendered, self.native_output)
        if schema_format is not None:
            fixed["response_format"] = {
                "type": "json_schema",
                "json_schema": schema_format.to_json(),
            }
        messages: list[Mapping[str, Any]] = []
        if rendered.text:
            messages.append({"role": "system", "content": rendered.text})
        messages.append({"role": "user", "content": user_message})
        return WireConversation(fixed, "messages", tuple(messages))

    def history_items(self, messages: Sequence[Message]) -> list[Mapping[str, Any]]:
        return [_message_item(message) for message in messages]

    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": reply.call.call_id, "content": reply.message}
            for reply in replies
        ]

    def settings_fields(self, settings: ModelSettings, *, has_tools: bool) -> dict[str, Any]:
        fields = copied_settings(
            settings,
            temperature="temperature",
            top_p="top_p",
            seed="seed",
            reasoning_effort="reasoning_effort",
            max_output_tokens="max_completion_tokens",
        )
        if self.compatible_server and settings.max_output_tokens is not None:
            fields["max_tokens"] = settings.max_output_tokens
        if settings.stop_sequences is not None:
            fields["stop"] = list(settings.stop_sequences)
        # OpenAI refuses parallel_tool_calls on a request without tools.
        if settings.parallel_tool_calls is not None and has_tools:
            fields["parallel_tool_calls"] = settings.parallel_tool_calls
        return fields

    # -- the reply --------------------------------------------------------------------------

    def read(self, response: Any) -> ModelTurn:
        if not response.choices:
            raise ProviderError(
                f"the chat completion {response.id!r} has no choices; the server answered"
                " without a message"
            )
        choice = response.choices[0]
        message = choice.message
        function_calls = [call for call in message.tool_calls or () if call.type == "function"]
        truncated = choice.finish_reason in ("length", "content_filter")
        calls = tuple(
            RequestedToolCall(
                call.id,
                call.function.name,
                call.function.arguments,
                truncated=truncated and call is function_calls[-1],
            )
            for call in function_calls
        )
        replayed: dict[str, Any] = {"role": "assistant", "content": message.content}
        if function_calls:
            replayed["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
                for call in function_calls
            ]
        return ModelTurn(
            text=message.content or "",
            tool_calls=calls,
            usage=openai_usage(response.usage, sent="prompt", received="completion"),
            model=response.model,
            replay=lambda: (replayed,),
            finish_reason=normalised_finish_reason(
                truncated_by=choice.finish_reason if truncated else None,
                refused=bool(message.refusal),
                called_tools=bool(calls),
            ),
            refusal=message.refusal or None,
        )

    def reply_shape(self) -> ReplyShape:
        from openai.types.chat import ChatCompletion

        return ReplyShape(self.api, ChatCompletion, ("choices",))

    # -- sending and streaming --------------------------------------------------------------

    def send_method(self, client: Any) -> Any:
        return client.chat.completions.with_raw_response.create

    def open_stream(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return client.chat.completions.create(
            **request, stream=True, **_STREAM_OPTIONS, **timeout_option(timeout)
        )

    async def aopen_stream(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> Any:
        return await client.chat.completions.create(
            **request, stream=True, **_STREAM_OPTIONS, **timeout_option(timeout)
        )

    def stream_decoder(self) -> StreamDecoder:
        return _ChatDecoder(self.api)

    def without_native_output(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        # `request` itself when it asks for no format: the transport tells a request the server
        # may refuse by the copy this makes.
        if "response_format" not in request:
            return request
        return {name: value for name, value in request.items() if name != "response_format"}


def _message_item(message: Message) -> Mapping[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.text}
    if not message.tool_calls:
        return {"role": message.role, "content": message.text}
    return {
        "role": "assistant",
        "content": message.text or None,
        "tool_calls": [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ],
    }


class _ChatDecoder(StreamDecoder):
    """Chunks accumulated by the SDK's own `ChatCompletionStreamState` into a completion. The
    chunk that carries the choice's `finish_reason` completes it: a stream that closes before
    it (a cut connection, a server that stopped) is cut, whatever text came. The `[DONE]` line
    after it carries nothing and the SDK reads it without showing it."""

    finish_event = "a chunk with finish_reason"

    def __init__(self, api: str) -> None:
        super().__init__(api)
        from openai.lib.streaming.chat import ChatCompletionStreamState

        self._state: Any = ChatCompletionStreamState()
        self._finished = False

    def take(self, event: Any) -> str | None:
        choices = event.choices
        content = delta_text(choices[0].delta.content, "a chunk's content") if choices else None
        self._state.handle_chunk(event)
        if choices and choices[0].finish_reason is not None:
            self._finished = True
        return content or None

    def finished(self) -> Any:
        return self._state.get_final_completion() if self._finished else None
