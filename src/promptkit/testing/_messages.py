"""Anthropic Messages as the fake server speaks it: the message body (text and `tool_use` blocks,
stop reason, usage with cache counts), the event stream (`message_start`, content block
start/delta/stop, `message_delta`, `message_stop`), the error body with Anthropic's error types,
and what the real API refuses: tool names outside the pattern, strict schemas that break the
rules, tool results that answer no `tool_use` of the message before, calls left without a
result, and error results without content.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, ClassVar

from promptkit.testing._fake_api import (
    FakeApi,
    WireRenderError,
    call_id,
    content_text,
    dicts,
    model_of,
    schema_problems,
    sse_event,
    text_pieces,
)
from promptkit.testing._replies import Reply
from promptkit.wire import MESSAGES, WireFormat

# How a scripted finish ends a message. Anthropic has no content filter: a filtered answer ends
# as a refusal.
_STOP_REASONS = {
    "max_tokens": "max_tokens",
    "context_window": "model_context_window_exceeded",
    "content_filter": "refusal",
    "refusal": "refusal",
}

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}


class FakeMessages(FakeApi):
    """`POST /v1/messages`."""

    format: ClassVar[WireFormat] = MESSAGES

    def body(self, reply: Reply, request: dict[str, Any], seq: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.content is not None:
            content.append({"type": "text", "text": reply.content, "citations": None})
        for index, call in enumerate(reply.calls):
            arguments = call.arguments_object()
            if arguments is None:
                # Anthropic sends tool input as a JSON object, never as text, so malformed JSON
                # arguments cannot happen on this wire; a test asking for them is mistaken.
                raise WireRenderError(
                    f"ToolCall {call.name!r} has raw-string arguments that are not a JSON object; "
                    "the Anthropic Messages API always sends tool input as an object: pass a dict "
                    "(for example one with wrong types to test invalid arguments)"
                )
            content.append(
                {
                    "type": "tool_use",
                    "id": call_id(call, seq, index, "toolu"),
                    "name": call.name,
                    "input": arguments,
                }
            )
        usage = reply.usage
        stop_reason = _STOP_REASONS.get(reply.finish) or ("tool_use" if reply.calls else "end_turn")
        return {
            "id": f"msg_fake{seq:06d}",
            "type": "message",
            "role": "assistant",
            "model": model_of(request),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": usage.cached_tokens,
                "cache_creation_input_tokens": usage.cache_creation_tokens,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": usage.cache_creation_tokens,
                    "ephemeral_1h_input_tokens": 0,
                },
                "service_tier": "standard",
            },
        }

    def events(self, body: dict[str, Any], request: dict[str, Any]) -> Iterator[str]:
        def event(kind: str, **fields: Any) -> str:
            return sse_event(kind, {"type": kind, **fields})

        usage = body["usage"]
        opening = {**body, "content": [], "stop_reason": None, "stop_sequence": None}
        yield event("message_start", message=opening)
        for index, block in enumerate(body["content"]):
            if block["type"] == "text":
                yield event("content_block_start", index=index, content_block={**block, "text": ""})
                for piece in text_pieces(block["text"]):
                    yield event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "text_delta", "text": piece},
                    )
            else:
                yield event(
                    "content_block_start", index=index, content_block={**block, "input": {}}
                )
                for piece in text_pieces(json.dumps(block["input"])):
                    yield event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "input_json_delta", "partial_json": piece},
                    )
            yield event("content_block_stop", index=index)
        yield event(
            "message_delta",
            delta={"stop_reason": body["stop_reason"], "stop_sequence": body["stop_sequence"]},
            usage={"output_tokens": usage["output_tokens"]},
        )
        yield event("message_stop")

    def is_text_delta(self, data: dict[str, Any]) -> bool:
        delta = data.get("delta")
        return isinstance(delta, dict) and delta.get("type") == "text_delta"

    def is_finish(self, data: dict[str, Any]) -> bool:
        return data.get("type") == "message_delta"

    def wrong_shaped(self, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "delta": {"type": "text_delta", "text": {"text": [data["delta"]["text"]]}}}

    def error_body(
        self, status: int, message: str, *, error_type: str | None, request_id: str
    ) -> dict[str, Any]:
        default_type = _ERROR_TYPES.get(status) or (
            "api_error" if status >= 500 else "invalid_request_error"
        )
        return {
            "type": "error",
            "error": {"type": error_type or default_type, "message": message},
            "request_id": request_id,
        }

    def tool_results(self, body: dict[str, Any]) -> dict[str, str]:
        return {
            str(block.get("tool_use_id")): content_text(block.get("content"))
            for _, message in dicts(body.get("messages"))
            for _, block in dicts(message.get("content"))
            if block.get("type") == "tool_result"
        }

    def rule_problems(self, body: dict[str, Any]) -> list[str]:
        # A missing `max_tokens` is a missing required key of the request type, found before.
        dialect = self.format.dialect
        problems: list[str] = []
        for index, tool in dicts(body.get("tools")):
            name = tool.get("name")
            if isinstance(name, str) and dialect.tool_name_pattern.fullmatch(name) is None:
                problems.append(
                    f"tools.{index}.custom.name: String should match pattern"
                    f" '^{dialect.tool_name_pattern.pattern}$'"
                )
            if tool.get("strict") is True:
                problems += schema_problems(
                    f"tools.{index}.input_schema", tool.get("input_schema"), dialect
                )
        config = body.get("output_config")
        fmt = config.get("format") if isinstance(config, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            problems += schema_problems("output_config.format.schema", fmt.get("schema"), dialect)
        return problems + _tool_result_problems(body)


def _tool_result_problems(body: dict[str, Any]) -> list[str]:
    """Every `tool_result` answers a `tool_use` of the message just before it, every such call
    is answered, and an error result has content."""
    problems: list[str] = []
    pending: set[Any] = set()
    for index, message in dicts(body.get("messages")):
        blocks = [block for _, block in dicts(message.get("content"))]
        results = {
            block.get("tool_use_id") for block in blocks if block.get("type") == "tool_result"
        }
        if message.get("role") == "user":
            for stray in results - pending:
                problems.append(
                    f"messages.{index}.content: unexpected tool_use_id found in tool_result"
                    f" blocks: {stray}. Each tool_result block must have a corresponding"
                    " tool_use block in the previous message."
                )
        if pending - results:
            problems.append(
                f"messages.{index}: tool_use ids were found without tool_result blocks"
                f" immediately after: {', '.join(sorted(map(str, pending - results)))}"
            )
        pending = {block.get("id") for block in blocks if block.get("type") == "tool_use"}
        for block_index, block in enumerate(blocks):
            is_error_result = block.get("type") == "tool_result" and block.get("is_error") is True
            if is_error_result and not block.get("content"):
                problems.append(
                    f"messages.{index}.content.{block_index}: content cannot be empty if"
                    " `is_error` is true"
                )
    return problems
