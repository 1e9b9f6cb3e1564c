"""Streamed replies of the fake provider: a rendered reply body re-told as the server-sent events
each API streams (`stream: true`).

The events are derived from the same body a non-streamed request gets, so a streamed and a plain
request for one `Reply` decode to the same answer. Text is sent in several deltas (word by word)
so a client sees it arrive in order. Formats: OpenAI Responses (`event:` + typed JSON, a
`sequence_number` each, ending in `response.completed`), Chat Completions (`data:` chunks,
usage last when `stream_options.include_usage`, then `data: [DONE]`), Anthropic Messages
(`message_start`, content block start/delta/stop, `message_delta`, `message_stop`).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

from promptkit.testing.wire import Endpoint

_WORDS = re.compile(r"\S+\s*|\s+")


def stream_body(endpoint: Endpoint, body: dict[str, Any], request: dict[str, Any]) -> bytes:
    """The SSE stream that tells `body` (the non-streamed answer to `request`) on `endpoint`."""
    if endpoint == "responses":
        events = _responses_events(body)
    elif endpoint == "chat_completions":
        events = _chat_events(body, request)
    else:
        events = _messages_events(body)
    return "".join(events).encode("utf-8")


def text_pieces(text: str) -> list[str]:
    """`text` cut into the deltas a stream sends: one word (with its trailing space) each."""
    return _WORDS.findall(text) or [""]


def _event(name: str | None, data: dict[str, Any]) -> str:
    prefix = f"event: {name}\n" if name else ""
    return f"{prefix}data: {json.dumps(data)}\n\n"


# -- OpenAI Responses ---------------------------------------------------------------------------


def _responses_events(body: dict[str, Any]) -> Iterator[str]:
    sequence = iter(range(1_000_000))

    def event(kind: str, **fields: Any) -> str:
        return _event(kind, {"type": kind, "sequence_number": next(sequence), **fields})

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


# -- OpenAI Chat Completions --------------------------------------------------------------------


def _chat_events(body: dict[str, Any], request: dict[str, Any]) -> Iterator[str]:
    head = {key: body[key] for key in ("id", "created", "model", "service_tier")}
    head["object"] = "chat.completion.chunk"
    head["system_fingerprint"] = None
    choice = body["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        entry = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return _event(None, {**head, "choices": [entry]})

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
        yield _event(None, {**head, "choices": [], "usage": body["usage"]})
    yield "data: [DONE]\n\n"


# -- Anthropic Messages -------------------------------------------------------------------------


def _messages_events(body: dict[str, Any]) -> Iterator[str]:
    def event(kind: str, **fields: Any) -> str:
        return _event(kind, {"type": kind, **fields})

    usage = body["usage"]
    opening = {**body, "content": [], "stop_reason": None, "stop_sequence": None}
    yield event("message_start", message=opening)
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            yield event("content_block_start", index=index, content_block={**block, "text": ""})
            for piece in text_pieces(block["text"]):
                yield event(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
                )
        else:
            yield event("content_block_start", index=index, content_block={**block, "input": {}})
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
