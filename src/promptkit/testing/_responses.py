"""OpenAI Responses as the fake server speaks it: the response body with its output items (a
reasoning item, a message, function calls), the typed event stream ending in
`response.completed`, and what the real API refuses: function tools and `text.format` that break
the strict rules, function call outputs that answer no call, and, with `store: false`, reasoning
items replayed without their `encrypted_content`.
"""

from __future__ import annotations

import copy
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
    int_or_none,
    model_of,
    number_or_none,
    openai_error_body,
    sse_event,
    text_pieces,
)
from promptkit.testing._replies import Reply, Usage
from promptkit.wire import RESPONSES, WireFormat


class FakeResponses(FakeApi):
    """`POST /v1/responses`."""

    format: ClassVar[WireFormat] = RESPONSES

    def body(self, reply: Reply, request: dict[str, Any], seq: int) -> dict[str, Any]:
        cut_off = reply.finish in CUT_OFF
        now = int(SYSTEM_CLOCK.now().timestamp())
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
            "max_output_tokens": int_or_none(request.get("max_output_tokens")),
            "model": model_of(request),
            "output": _output(reply, request, seq),
            "parallel_tool_calls": request.get("parallel_tool_calls", True) is not False,
            "previous_response_id": None,
            "temperature": number_or_none(request.get("temperature")),
            "top_p": number_or_none(request.get("top_p")),
            "text": {"format": _text_format(request)},
            "tool_choice": _tool_choice(request),
            "tools": _function_tools(request),
            "truncation": "disabled",
            "metadata": {},
            "usage": _usage(reply.usage),
        }

    def events(self, body: dict[str, Any], request: dict[str, Any]) -> Iterator[str]:
        sequence = iter(range(1_000_000))

        def event(kind: str, **fields: Any) -> str:
            return sse_event(kind, {"type": kind, "sequence_number": next(sequence), **fields})

        started = {**copy.deepcopy(body), "status": "in_progress", "output": [], "usage": None}
        started["completed_at"] = None
        yield event("response.created", response=started)
        yield event("response.in_progress", response=started)
        for index, item in enumerate(body["output"]):
            place = {"item_id": item["id"], "output_index": index}
            if item["type"] == "message":
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "content": []},
                )
                for part_index, part in enumerate(item["content"]):
                    at = {**place, "content_index": part_index}
                    empty = {**part, "text": ""}
                    yield event("response.content_part.added", **at, part=empty)
                    for piece in text_pieces(part["text"]):
                        yield event("response.output_text.delta", **at, delta=piece, logprobs=[])
                    yield event("response.output_text.done", **at, text=part["text"], logprobs=[])
                    yield event("response.content_part.done", **at, part=part)
            else:
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "arguments": ""},
                )
                for piece in text_pieces(item["arguments"]):
                    yield event("response.function_call_arguments.delta", **place, delta=piece)
                yield event(
                    "response.function_call_arguments.done",
                    **place,
                    arguments=item["arguments"],
                    name=item["name"],
                )
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=body)

    def is_text_delta(self, data: dict[str, Any]) -> bool:
        return data.get("type") == "response.output_text.delta"

    def is_finish(self, data: dict[str, Any]) -> bool:
        return data.get("type") in ("response.completed", "response.incomplete")

    def wrong_shaped(self, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "delta": {"text": [data["delta"]]}}

    def error_body(
        self, status: int, message: str, *, error_type: str | None, request_id: str
    ) -> dict[str, Any]:
        return openai_error_body(status, message, error_type=error_type)

    # One check per request field the Responses API has a rule for.
    def tool_results(self, body: dict[str, Any]) -> dict[str, str]:
        return {
            str(item.get("call_id")): content_text(item.get("output"))
            for _, item in dicts(body.get("input"))
            if item.get("type") == "function_call_output"
        }

    def rule_problems(self, body: dict[str, Any]) -> list[str]:  # noqa: C901
        dialect = self.format.dialect
        problems: list[str] = []
        for index, tool in dicts(body.get("tools")):
            if tool.get("type") == "function":
                problems += function_problems(f"tools[{index}]", tool, dialect)
        text = body.get("text")
        fmt = text.get("format") if isinstance(text, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            problems += format_problems("text.format", fmt, dialect)
        items = list(dicts(body.get("input")))
        if body.get("previous_response_id") is None:
            called = set()
            for index, item in items:
                if item.get("type") == "function_call":
                    called.add(item.get("call_id"))
                elif (
                    item.get("type") == "function_call_output" and item.get("call_id") not in called
                ):
                    problems.append(
                        f"input[{index}]: no tool call found for function call output with"
                        f" call_id {item.get('call_id')!r}"
                    )
        if body.get("store") is False:
            for index, item in items:
                if item.get("type") == "reasoning" and not item.get("encrypted_content"):
                    problems.append(
                        f"input[{index}]: item with id {item.get('id')!r} not found; items are"
                        " not persisted when store is false: replay the reasoning item with its"
                        " encrypted_content (include reasoning.encrypted_content)"
                    )
        return problems


def _output(reply: Reply, request: dict[str, Any], seq: int) -> list[dict[str, Any]]:
    cut_off = reply.finish in CUT_OFF
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
                "call_id": call_id(call, seq, index, "call"),
                "name": call.name,
                "arguments": call.arguments_json,
                "status": "incomplete" if cut_off and last else "completed",
            }
        )
    return output


def _text_format(request: dict[str, Any]) -> dict[str, Any]:
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


def _tool_choice(request: dict[str, Any]) -> Any:
    choice = request.get("tool_choice")
    if choice in ("none", "auto", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and "name" in choice:
        return {"type": "function", "name": choice["name"]}
    return "auto"


def _function_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
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


def _usage(usage: Usage) -> dict[str, Any]:
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
