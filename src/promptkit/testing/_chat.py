"""OpenAI Chat Completions as the fake server speaks it: the completion body (one choice, tool
calls, refusal, finish reason, usage), the `data:` chunk stream (usage last when
`stream_options.include_usage`, then `data: [DONE]`), and what the real API refuses: function
tools and `response_format` that break the strict rules, `tool` messages that answer no call and
calls left without one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from promptkit.clock import SYSTEM_CLOCK
from promptkit.testing._fake_api import (
    CUT_OFF,
    FakeApi,
    call_id,
    content_text,
    dicts,
    format_problems,
    function_problems,
    model_of,
    openai_error_body,
    sse_event,
    text_pieces,
)
from promptkit.testing._replies import Reply
from promptkit.wire import CHAT_COMPLETIONS, WireFormat


class FakeChatCompletions(FakeApi):
    """`POST /v1/chat/completions`."""

    format: ClassVar[WireFormat] = CHAT_COMPLETIONS

    def body(self, reply: Reply, request: dict[str, Any], seq: int) -> dict[str, Any]:
        refused = reply.finish == "refusal"
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if refused else reply.content,
            "refusal": reply.content if refused else None,
            "annotations": [],
        }
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": call_id(call, seq, index, "call"),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json},
                }
                for index, call in enumerate(reply.calls)
            ]
        usage = reply.usage
        return {
            "id": f"chatcmpl-fake{seq:06d}",
            "object": "chat.completion",
            "created": int(SYSTEM_CLOCK.now().timestamp()),
            "model": model_of(request),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": _finish_reason(reply),
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
                "prompt_tokens_details": {
                    "cached_tokens": usage.cached_tokens,
                    "cache_write_tokens": usage.cache_creation_tokens,
                    "audio_tokens": 0,
                },
                "completion_tokens_details": {
                    "reasoning_tokens": usage.reasoning_tokens,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
            "service_tier": "default",
            "system_fingerprint": None,
        }

    def events(self, body: dict[str, Any], request: dict[str, Any]) -> Iterator[str]:
        head = {key: body[key] for key in ("id", "created", "model", "service_tier")}
        head["object"] = "chat.completion.chunk"
        head["system_fingerprint"] = None
        choice = body["choices"][0]
        message = choice["message"]

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
            entry = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            return sse_event(None, {**head, "choices": [entry]})

        yield chunk({"role": "assistant", "content": ""})
        if message.get("content"):
            for piece in text_pieces(message["content"]):
                yield chunk({"content": piece})
        for index, call in enumerate(message.get("tool_calls") or ()):
            function = call["function"]
            opening = {"name": function["name"], "arguments": ""}
            started = {"index": index, "id": call["id"], "type": "function", "function": opening}
            yield chunk({"tool_calls": [started]})
            for piece in text_pieces(function["arguments"]):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, choice["finish_reason"])
        options = request.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage") is True:
            yield sse_event(None, {**head, "choices": [], "usage": body["usage"]})
        yield "data: [DONE]\n\n"

    def is_text_delta(self, data: dict[str, Any]) -> bool:
        choices = data.get("choices") or [{}]
        return bool(choices[0].get("delta", {}).get("content"))

    def is_finish(self, data: dict[str, Any]) -> bool:
        choices = data.get("choices") or [{}]
        return choices[0].get("finish_reason") is not None

    def wrong_shaped(self, data: dict[str, Any]) -> dict[str, Any]:
        [choice] = data["choices"]
        delta = {"content": {"text": [choice["delta"]["content"]]}}
        return {**data, "choices": [{**choice, "delta": delta}]}

    def error_body(
        self, status: int, message: str, *, error_type: str | None, request_id: str
    ) -> dict[str, Any]:
        return openai_error_body(status, message, error_type=error_type)

    def tool_results(self, body: dict[str, Any]) -> dict[str, str]:
        return {
            str(message.get("tool_call_id")): content_text(message.get("content"))
            for _, message in dicts(body.get("messages"))
            if message.get("role") == "tool"
        }

    def rule_problems(self, body: dict[str, Any]) -> list[str]:
        dialect = self.format.dialect
        problems: list[str] = []
        for index, tool in dicts(body.get("tools")):
            function = tool.get("function")
            if tool.get("type") == "function" and isinstance(function, dict):
                problems += function_problems(f"tools[{index}].function", function, dialect)
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            inner = fmt.get("json_schema")
            if isinstance(inner, dict):
                problems += format_problems("response_format.json_schema", inner, dialect)
        return problems + _tool_message_problems(body)


def _finish_reason(reply: Reply) -> str:
    if reply.finish == "content_filter":
        return "content_filter"
    if reply.finish in CUT_OFF:
        return "length"
    return "tool_calls" if reply.calls else "stop"


def _tool_message_problems(body: dict[str, Any]) -> list[str]:
    """Every `tool` message answers a call of the assistant message just before it, and every
    such call is answered."""
    problems: list[str] = []
    open_calls: set[Any] = set()
    for index, message in dicts(body.get("messages")):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                problems.append(
                    f"messages[{index}]: messages with role 'tool' must be a response to a"
                    " preceding message with 'tool_calls'"
                )
            open_calls.discard(message.get("tool_call_id"))
            continue
        if open_calls:
            problems.append(
                f"messages[{index}]: an assistant message with 'tool_calls' must be followed by"
                f" tool messages responding to each 'tool_call_id' ({sorted(map(str, open_calls))}"
                " not answered)"
            )
        open_calls = {
            call.get("id") for _, call in dicts(message.get("tool_calls")) if role == "assistant"
        }
    if open_calls:
        problems.append(
            "messages: the last assistant message's 'tool_calls' were never answered with tool"
            " messages"
        )
    return problems
