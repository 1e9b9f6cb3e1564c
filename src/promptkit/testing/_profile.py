"""`ServerProfile`: how an OpenAI-compatible server's Chat Completions differ from OpenAI's own,
so `FakeProviderServer(profile=...)` answers as that server does.

The two profiles besides OpenAI's are read from what real servers sent, serving a small model
on a CPU: llama-cpp-python's `python -m llama_cpp.server` (0.3.x) and llama.cpp's own
`llama-server --jinja`. What they do differently:

- llama-cpp-python answers a `response_format` of type `json_schema` with HTTP 500, a
  request-validation error that names the field and quotes its own stack trace;
- it offers the model no tools unless the request sends `tool_choice`: the model then writes
  its call as text;
- it ignores `max_completion_tokens` and honours `max_tokens`;
- its streams start with a role-only delta and end without a usage chunk, even when asked;
- llama-server reports errors with an integer `code`, adds a `timings` object to replies and to
  its last stream chunk, and reports `cached_tokens`;
- both name their own model alias in replies, whatever the request asked for, and serve one
  request at a time (one slot: the next waits).

A profile changes only the Chat Completions endpoint; the others answer as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from promptkit.testing._fake_api import text_pieces
from promptkit.testing._replies import Reply

FirstDelta = Literal["openai", "role-only", "null-content"]
"""The first stream delta: OpenAI's `{"role": "assistant", "content": ""}`, a role alone
(llama-cpp-python) or a role with `"content": null` (llama-server)."""

_SERVER_MODEL = "qwen2.5-coder-0.5b-instruct"
# The shape of llama-cpp-python's refusal, its stack trace included (that is what it sends).
_SCHEMA_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format',"
    " 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema',"
    " 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File"
    ' "/home/user/.cache/pk-llm/venv/lib/python3.11/site-packages/llama_cpp/server/app.py",'
    " line 376, in create_chat_completion\n    POST /v1/chat/completions"
)


@dataclass(frozen=True)
class ServerProfile:
    """What a server does differently from OpenAI's Chat Completions (see the module doc).

    `output_caps` are the request fields the server honours as a cap on the reply, counted in
    words of the scripted text (a capped reply ends `length`); with none, replies are sent as
    scripted, as the default profile does. `model_alias` is the model every reply names (None:
    the one asked for).
    """

    name: str = "openai"
    refuses_json_schema: bool = False
    needs_tool_choice: bool = False
    output_caps: tuple[str, ...] = ()
    streams_usage: bool = True
    first_delta: FirstDelta = "openai"
    timings: bool = False
    integer_error_codes: bool = False
    reports_cache_details: bool = True
    single_slot: bool = False
    model_alias: str | None = None

    @classmethod
    def openai(cls) -> ServerProfile:
        """OpenAI's own API: the fake server's default."""
        return cls()

    @classmethod
    def llama_cpp_python(cls, *, model_alias: str = _SERVER_MODEL) -> ServerProfile:
        """llama-cpp-python's server (`python -m llama_cpp.server`, 0.3.x)."""
        return cls(
            name="llama-cpp-python",
            refuses_json_schema=True,
            needs_tool_choice=True,
            output_caps=("max_tokens",),
            streams_usage=False,
            first_delta="role-only",
            reports_cache_details=False,
            single_slot=True,
            model_alias=model_alias,
        )

    @classmethod
    def llama_server(cls, *, model_alias: str = _SERVER_MODEL) -> ServerProfile:
        """llama.cpp's `llama-server --jinja`."""
        return cls(
            name="llama-server",
            output_caps=("max_tokens", "max_completion_tokens"),
            first_delta="null-content",
            timings=True,
            integer_error_codes=True,
            single_slot=True,
            model_alias=model_alias,
        )

    # -- what the server does with a request -----------------------------------------------

    def refusal(self, request: dict[str, Any]) -> tuple[int, str] | None:
        """The status and message the server refuses `request` with, before any generation,
        or None when it takes it."""
        fmt = request.get("response_format")
        if self.refuses_json_schema and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return 500, _SCHEMA_REFUSAL
        return None

    def reply_to(self, reply: Reply, request: dict[str, Any]) -> Reply:
        """What the model answers `request` with, given the scripted `reply`: without the tools
        it was not offered, and cut at the cap the server honours."""
        if reply.kind != "message":
            return reply
        if reply.calls and self.needs_tool_choice and "tool_choice" not in request:
            # Offered no tools, the model writes its call as text.
            call = reply.calls[0]
            written = json.dumps({"name": call.name, "arguments": call.arguments_object()})
            reply = replace(reply, calls=(), content=reply.content or written)
        cap = self._cap(request)
        pieces = text_pieces(reply.content or "")
        if cap is not None and reply.content and len(pieces) > cap:
            usage = replace(reply.usage, output_tokens=cap)
            reply = replace(reply, content="".join(pieces[:cap]), finish="max_tokens", usage=usage)
        return reply

    def _cap(self, request: dict[str, Any]) -> int | None:
        for field in self.output_caps:
            value = request.get(field)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return None

    # -- what it sends back ----------------------------------------------------------------

    def body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The 200 body as this server writes it."""
        shaped = dict(body)
        if self.model_alias is not None:
            shaped["model"] = self.model_alias
        shaped["usage"] = self._usage(body["usage"])
        if self.timings:
            shaped["timings"] = _timings(body["usage"])
        return shaped

    def stream(self, events: Iterator[str]) -> Iterator[str]:
        """The server-sent events of a stream as this server sends them."""
        first = True
        for event in events:
            if not event.startswith("data: {"):
                yield event
                continue
            chunk = json.loads(event.removeprefix("data: "))
            usage = chunk.get("usage")
            if not chunk.get("choices") and isinstance(usage, dict):
                if not self.streams_usage:
                    continue
                chunk["usage"] = self._usage(usage)
                if self.timings:
                    chunk["timings"] = _timings(usage)
            elif first:
                first = False
                if self.first_delta == "role-only":
                    chunk["choices"][0]["delta"] = {"role": "assistant"}
                elif self.first_delta == "null-content":
                    chunk["choices"][0]["delta"] = {"role": "assistant", "content": None}
            yield f"data: {json.dumps(chunk)}\n\n"

    def error_body(self, status: int, body: dict[str, Any]) -> dict[str, Any]:
        """An error body as this server writes it (`body` is OpenAI's)."""
        if not self.integer_error_codes:
            return body
        error = body.get("error", {})
        return {
            "error": {
                "code": status,
                "message": error.get("message", ""),
                "type": error.get("type", "invalid_request_error"),
            }
        }

    def _usage(self, usage: dict[str, Any]) -> dict[str, Any]:
        counts = {key: usage[key] for key in ("prompt_tokens", "completion_tokens", "total_tokens")}
        if not self.reports_cache_details:
            return counts
        details = usage.get("prompt_tokens_details") or {}
        return {**counts, "prompt_tokens_details": {"cached_tokens": details.get("cached_tokens")}}


def _timings(usage: dict[str, Any]) -> dict[str, Any]:
    """llama-server's `timings`, made up from the counts at its usual speeds on a CPU."""
    prompt, predicted = usage["prompt_tokens"], usage["completion_tokens"]
    return {
        "prompt_n": prompt,
        "prompt_ms": prompt * 11.0,
        "prompt_per_second": 90.0,
        "predicted_n": predicted,
        "predicted_ms": predicted * 40.0,
        "predicted_per_second": 25.0,
    }
