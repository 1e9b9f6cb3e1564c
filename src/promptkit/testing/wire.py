"""Wire formats of the fake provider: a `Reply` rendered as an OpenAI Responses, OpenAI Chat
Completions or Anthropic Messages body, and each API's error body.

The bodies carry every field the SDKs' response models require, so clients built with
`_strict_response_validation=True` accept them; fields a real response echoes from the request
(model, tools, tool choice, text format) are echoed where the response model can hold them.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from promptkit.errors import UsageError
from promptkit.testing.replies import Reply, ToolCall, Usage

Endpoint = Literal["responses", "chat_completions", "messages"]

_PATHS: dict[str, Endpoint] = {
    "/v1/responses": "responses",
    "/v1/chat/completions": "chat_completions",
    "/v1/messages": "messages",
}

FALLBACK_MODEL = "fake-model"

# Finishes of a reply cut off before the model completed it.
_CUT_OFF = frozenset({"max_tokens", "context_window", "content_filter"})


class WireRenderError(UsageError, ValueError):
    """A reply cannot be expressed in the receiving API's wire format: the test scripted one
    that API never sends (a caller's mistake).

    Internal to the fake server: it becomes a loud HTTP 500 for the client, never escapes.
    """


def endpoint_for_path(path: str) -> Endpoint | None:
    """The API a request path belongs to, or None for a path the fake does not serve."""
    return _PATHS.get(path.rstrip("/"))


def request_id_header(endpoint: Endpoint | None) -> str:
    """The response header each SDK reads the request id from (`exc.request_id`)."""
    return "request-id" if endpoint == "messages" else "x-request-id"


def render_message(
    endpoint: Endpoint, reply: Reply, request: dict[str, Any], seq: int
) -> dict[str, Any]:
    """The 200 body answering `request` on `endpoint` with a message reply."""
    if endpoint == "responses":
        return _responses_body(reply, request, seq)
    if endpoint == "chat_completions":
        return _chat_body(reply, request, seq)
    return _messages_body(reply, request, seq)


def render_error(
    endpoint: Endpoint | None,
    status: int,
    message: str,
    *,
    error_type: str | None,
    request_id: str,
) -> dict[str, Any]:
    """An error body in the format of `endpoint`'s API; OpenAI's for unknown paths."""
    if endpoint == "messages":
        return {
            "type": "error",
            "error": {"type": error_type or _anthropic_error_type(status), "message": message},
            "request_id": request_id,
        }
    default_type, code = _openai_error_type_and_code(status)
    return {
        "error": {
            "message": message,
            "type": error_type or default_type,
            "param": None,
            "code": code,
        }
    }


def _call_id(call: ToolCall, seq: int, index: int, prefix: str) -> str:
    return call.call_id or f"{prefix}_fake{seq:06d}_{index}"


def _model(request: dict[str, Any]) -> str:
    model = request.get("model")
    return model if isinstance(model, str) and model else FALLBACK_MODEL


def _responses_body(reply: Reply, request: dict[str, Any], seq: int) -> dict[str, Any]:
    cut_off = reply.finish in _CUT_OFF
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        include = request.get("include")
        encrypted = isinstance(include, list) and "reasoning.encrypted_content" in include
        output.append(
            {
                "id": f"rs_fake{seq:06d}",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
                "encrypted_content": f"enc_fake{seq:06d}" if encrypted else None,
            }
        )
    if reply.content is not None:
        part: dict[str, Any] = (
            {"type": "refusal", "refusal": reply.content}
            if reply.finish == "refusal"
            else {"type": "output_text", "text": reply.content, "annotations": [], "logprobs": []}
        )
        output.append(
            {
                "id": f"msg_fake{seq:06d}",
                "type": "message",
                "role": "assistant",
                "status": "incomplete" if cut_off and not reply.calls else "completed",
                "content": [part],
            }
        )
    for index, call in enumerate(reply.calls):
        last = index == len(reply.calls) - 1
        output.append(
            {
                "id": f"fc_fake{seq:06d}_{index}",
                "type": "function_call",
                "call_id": _call_id(call, seq, index, "call"),
                "name": call.name,
                "arguments": call.arguments_json,
                "status": "incomplete" if cut_off and last else "completed",
            }
        )
    now = int(time.time())
    instructions = request.get("instructions")
    reason = "content_filter" if reply.finish == "content_filter" else "max_output_tokens"
    return {
        "id": f"resp_fake{seq:06d}",
        "object": "response",
        "created_at": now,
        "completed_at": None if cut_off else now,
        "status": "incomplete" if cut_off else "completed",
        "error": None,
        "incomplete_details": {"reason": reason} if cut_off else None,
        "instructions": instructions if isinstance(instructions, str) else None,
        "max_output_tokens": _int_or_none(request.get("max_output_tokens")),
        "model": _model(request),
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls", True) is not False,
        "previous_response_id": None,
        "temperature": _number_or_none(request.get("temperature")),
        "top_p": _number_or_none(request.get("top_p")),
        "text": {"format": _responses_text_format(request)},
        "tool_choice": _responses_tool_choice(request),
        "tools": _responses_function_tools(request),
        "truncation": "disabled",
        "metadata": {},
        "usage": _responses_usage(reply.usage),
    }


def _responses_text_format(request: dict[str, Any]) -> dict[str, Any]:
    # The real API echoes the requested format; a json_schema format must carry its name and
    # schema to validate as `ResponseFormatTextJSONSchemaConfig`.
    text = request.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict):
        kind = fmt.get("type")
        if kind in ("text", "json_object"):
            return {"type": kind}
        if kind == "json_schema" and isinstance(fmt.get("name"), str):
            schema = fmt.get("schema")
            echoed: dict[str, Any] = {
                "type": "json_schema",
                "name": fmt["name"],
                "schema": schema if isinstance(schema, dict) else {},
            }
            if isinstance(fmt.get("strict"), bool):
                echoed["strict"] = fmt["strict"]
            if isinstance(fmt.get("description"), str):
                echoed["description"] = fmt["description"]
            return echoed
    return {"type": "text"}


def _responses_tool_choice(request: dict[str, Any]) -> Any:
    choice = request.get("tool_choice")
    if choice in ("none", "auto", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and "name" in choice:
        return {"type": "function", "name": choice["name"]}
    return "auto"


def _responses_function_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    # Only function tools are echoed: built-in tools have response models of their own and the
    # fake never uses them.
    tools = request.get("tools")
    if not isinstance(tools, list):
        return []
    echoed: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, dict) and tool.get("type") == "function" and "name" in tool:
            echoed.append(
                {
                    "type": "function",
                    "name": tool["name"],
                    "description": tool.get("description"),
                    "parameters": tool.get("parameters"),
                    "strict": tool.get("strict"),
                }
            )
    return echoed


def _responses_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cached_tokens,
            "cache_write_tokens": usage.cache_creation_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _chat_body(reply: Reply, request: dict[str, Any], seq: int) -> dict[str, Any]:
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
                "id": _call_id(call, seq, index, "call"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json},
            }
            for index, call in enumerate(reply.calls)
        ]
    usage = reply.usage
    return {
        "id": f"chatcmpl-fake{seq:06d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": _model(request),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _chat_finish_reason(reply),
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


def _messages_body(reply: Reply, request: dict[str, Any], seq: int) -> dict[str, Any]:
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
                "id": _call_id(call, seq, index, "toolu"),
                "name": call.name,
                "input": arguments,
            }
        )
    usage = reply.usage
    return {
        "id": f"msg_fake{seq:06d}",
        "type": "message",
        "role": "assistant",
        "model": _model(request),
        "content": content,
        "stop_reason": _messages_stop_reason(reply),
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


def _chat_finish_reason(reply: Reply) -> str:
    if reply.finish == "content_filter":
        return "content_filter"
    if reply.finish in _CUT_OFF:
        return "length"
    return "tool_calls" if reply.calls else "stop"


def _messages_stop_reason(reply: Reply) -> str:
    # Anthropic has no content filter: a filtered answer ends as a refusal.
    stop_reasons = {
        "max_tokens": "max_tokens",
        "context_window": "model_context_window_exceeded",
        "content_filter": "refusal",
        "refusal": "refusal",
    }
    if reply.finish in stop_reasons:
        return stop_reasons[reply.finish]
    return "tool_use" if reply.calls else "end_turn"


def _anthropic_error_type(status: int) -> str:
    known = {
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
    if status in known:
        return known[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def _openai_error_type_and_code(status: int) -> tuple[str, str | None]:
    if status == 401:
        return "invalid_request_error", "invalid_api_key"
    if status == 429:
        return "requests", "rate_limit_exceeded"
    if status >= 500:
        return "server_error", None
    return "invalid_request_error", None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
