"""OpenAI Responses, everything about speaking it: the rendered prompt as `instructions` with
`input` items, function tools and `text.format`; earlier turns as input items; `ModelSettings` as
request fields; the reply's output items, refusals and incomplete responses; the items that
replay a reply; and the event stream.

A reply is replayed as the output items cut down to what the request's input item type declares
(the documented way to continue without server-side state). With `store=False` nothing is kept
server-side, so reasoning items carry their encrypted content and are replayed whole.

The `openai` package is imported only when a reply or a stream is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
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
    without_entry,
)
from promptkit.errors import ProviderServerError
from promptkit.prompt import RenderedPrompt
from promptkit.wire import RESPONSES, WireFormat, check_tool_names, declared_only


@dataclass(frozen=True)
class ResponsesApi(WireApi):
    """OpenAI Responses: `instructions`, `input` items, function calls and their outputs."""

    model: str
    native_output: bool
    store: bool | None = None

    format: ClassVar[WireFormat] = RESPONSES
    unsupported_settings: ClassVar[Mapping[str, str]] = {
        "stop_sequences": "the Responses API has no stop sequences; use api='chat'",
        "seed": "the Responses API has no seed; use api='chat'",
    }

    # -- the request ------------------------------------------------------------------------

    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        check_tool_names(tuple(tool.name for tool in rendered.tools), self.format.dialect)
        fixed: dict[str, Any] = {"model": self.model}
        if self.store is not None:
            fixed["store"] = self.store
        if self.store is False:
            # Nothing is kept server-side, so reasoning items can only be replayed whole.
            fixed["include"] = ["reasoning.encrypted_content"]
        if rendered.text:
            fixed["instructions"] = rendered.text
        if rendered.tools:
            fixed["tools"] = [
                {"type": "function", **function_definition(tool)} for tool in rendered.tools
            ]
        schema_format = native_output_format(rendered, self.native_output)
        if schema_format is not None:
            fixed["text"] = {"format": {"type": "json_schema", **schema_format.to_json()}}
        return WireConversation(
            fixed, "input", ({"role": "user", "content": user_message},), takes_lone_text=True
        )

    def history_items(self, messages: Sequence[Message]) -> list[Mapping[str, Any]]:
        return [item for message in messages for item in _message_items(message)]

    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        return [
            {"type": "function_call_output", "call_id": reply.call.call_id, "output": reply.message}
            for reply in replies
        ]

    def settings_fields(self, settings: ModelSettings, *, has_tools: bool) -> dict[str, Any]:
        fields = copied_settings(settings, temperature="temperature", top_p="top_p")
        if settings.max_output_tokens is not None:
            fields["max_output_tokens"] = settings.max_output_tokens
        if settings.reasoning_effort is not None:
            fields["reasoning"] = {"effort": settings.reasoning_effort}
        if settings.parallel_tool_calls is not None and has_tools:
            fields["parallel_tool_calls"] = settings.parallel_tool_calls
        return fields

    # -- the reply --------------------------------------------------------------------------

    def read(self, response: Any) -> ModelTurn:
        failure = response.error
        if response.status == "failed" and failure is not None:
            raise ProviderServerError(
                f"the response {response.id!r} failed: {failure.code}: {failure.message}",
                request_id=getattr(response, "_request_id", None),
            )
        incomplete = response.status == "incomplete"
        function_calls = [item for item in response.output if item.type == "function_call"]
        calls = tuple(
            RequestedToolCall(
                item.call_id,
                item.name,
                item.arguments,
                # An incomplete response ends inside its last item.
                truncated=incomplete
                and (item.status == "incomplete" or item is function_calls[-1]),
            )
            for item in function_calls
        )
        refusal = "".join(
            part.refusal
            for item in response.output
            if item.type == "message"
            for part in item.content
            if part.type == "refusal"
        )
        reason = response.incomplete_details.reason if response.incomplete_details else None
        return ModelTurn(
            text=response.output_text,
            tool_calls=calls,
            usage=openai_usage(response.usage, sent="input", received="output"),
            finish_reason=normalised_finish_reason(
                truncated_by=("content_filter" if reason == "content_filter" else "length")
                if incomplete
                else None,
                refused=bool(refusal),
                called_tools=bool(calls),
            ),
            refusal=refusal or None,
            model=response.model,
            replay=partial(_replayed_items, response.output),
        )

    def reply_shape(self) -> ReplyShape:
        from openai.types.responses import Response

        return ReplyShape(self.api, Response, ("output",))

    # -- sending and streaming --------------------------------------------------------------

    def send_method(self, client: Any) -> Any:
        return client.responses.with_raw_response.create

    def open_stream(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        return client.responses.create(**request, stream=True, **timeout_option(timeout))

    async def aopen_stream(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> Any:
        return await client.responses.create(**request, stream=True, **timeout_option(timeout))

    def stream_decoder(self) -> StreamDecoder:
        return _ResponsesDecoder(self.api)

    def without_native_output(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return without_entry(request, "text", "format")


def _message_items(message: Message) -> list[Mapping[str, Any]]:
    if message.role == "tool":
        return [
            {"type": "function_call_output", "call_id": message.call_id, "output": message.text}
        ]
    items: list[Mapping[str, Any]] = []
    if message.text or not message.tool_calls:
        items.append({"role": message.role, "content": message.text})
    items.extend(
        {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments}
        for c in message.tool_calls
    )
    return items


def _replayed_items(output: Sequence[Any]) -> tuple[Mapping[str, Any], ...]:
    # The documented way to continue without server-side state: send the output back, as the
    # request declares input items (a response item may carry more).
    from openai.types.responses import ResponseInputItemParam

    return tuple(
        declared_only(item.to_dict(mode="json"), ResponseInputItemParam) for item in output
    )


class _ResponsesDecoder(StreamDecoder):
    finish_event = "response.completed"

    def __init__(self, api: str) -> None:
        super().__init__(api)
        self._final: Any = None

    def take(self, event: Any) -> str | None:
        kind = event.type
        if kind == "response.output_text.delta":
            return delta_text(event.delta, "a text delta")
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self._final = event.response
        elif kind == "error":
            raise ProviderServerError(
                f"the response stream failed: {event.code}: {event.message}",
                status=self.status,
                request_id=self.request_id,
            )
        return None

    def finished(self) -> Any:
        return self._final
