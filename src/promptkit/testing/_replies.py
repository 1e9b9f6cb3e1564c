"""Scripted replies for `FakeProviderServer`: what the fake model answers next.

A `Reply` says nothing about wire formats; the server renders it in the format of whichever
endpoint receives it, so one script drives an OpenAI Responses, Chat Completions or Anthropic
Messages client alike. Token counts in `Usage` go to the wire field of the same meaning unchanged:
no arithmetic between cached and uncached tokens, so a test can assert that code reports exactly
what the provider reported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from promptkit.errors import ArgumentValueError

ReplyKind = Literal["message", "error", "raw"]

Finish = Literal["complete", "max_tokens", "context_window", "content_filter", "refusal"]
"""How a message reply ends: complete, cut off by the output token limit, by the context
window or by a content filter, or declined (see `Reply.truncated` and `Reply.refusal`)."""

StreamFault = Literal[
    "cut_mid_text",
    "cut_before_finish",
    "malformed_event",
    "wrong_shaped_event",
    "endless",
    "endless_event",
]
"""How a streamed reply goes wrong (`Reply.faulty_stream`):

- `cut_mid_text`: the connection drops after the second piece of text (fewer bytes than the
  `content-length` promised);
- `cut_before_finish`: the stream ends cleanly just before the event that completes the answer
  (Responses `response.completed`, the Chat chunk with `finish_reason`, Anthropic
  `message_delta`), so neither it nor anything after it (`[DONE]`, `message_stop`) arrives;
- `malformed_event`: the second piece of text is not JSON (its text cut in half);
- `wrong_shaped_event`: the second piece of text is JSON of the wrong shape (its text an
  object);
- `endless`: the first piece of text again and again, until the client hangs up;
- `endless_event`: one event whose data line never ends, until the client hangs up.
"""


@dataclass(frozen=True)
class Usage:
    """Token counts one reply reports.

    `cached_tokens` is read from the provider's prompt cache (OpenAI `cached_tokens`, Anthropic
    `cache_read_input_tokens`); `cache_creation_tokens` is written to it (OpenAI
    `cache_write_tokens`, Anthropic `cache_creation_input_tokens`). A reply without a `usage`
    reports the defaults: 10 input and 5 output tokens, nothing cached.
    """

    input_tokens: int = 10
    output_tokens: int = 5
    cached_tokens: int = 0
    cache_creation_tokens: int = 0
    reasoning_tokens: int = 0

    def __post_init__(self) -> None:
        for name in (
            "input_tokens",
            "output_tokens",
            "cached_tokens",
            "cache_creation_tokens",
            "reasoning_tokens",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ArgumentValueError(f"Usage.{name} must be a non-negative int, got {value!r}")


@dataclass(frozen=True)
class ToolCall:
    """One function call the fake model makes.

    `arguments` is a mapping (sent as its JSON text) or a raw string sent exactly as given, which
    is how a test produces malformed arguments. `call_id` defaults to an id derived from the
    request, unique within the server.
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None
    # The JSON text is fixed at construction so mutating the caller's dict later cannot change
    # what the server sends.
    arguments_json: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            raise ArgumentValueError("ToolCall.name must be a non-empty tool name")
        if isinstance(self.arguments, str):
            text = self.arguments
        else:
            try:
                text = json.dumps(dict(self.arguments))
            except (TypeError, ValueError) as exc:
                raise ArgumentValueError(
                    f"ToolCall {self.name!r}: arguments are not JSON-serialisable ({exc}); "
                    "pass plain dicts, lists, strings, numbers, booleans and None, "
                    "or a raw JSON string"
                ) from exc
        object.__setattr__(self, "arguments_json", text)

    def arguments_object(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when the raw string is not one."""
        try:
            value = json.loads(self.arguments_json)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


_DEFAULT_USAGE = Usage()


@dataclass(frozen=True)
class Reply:
    """What the fake provider answers to one request.

    Build replies with the class methods: `Reply.text`, `Reply.json`, `Reply.tool_calls`,
    `Reply.error` and `Reply.delay`.
    """

    kind: ReplyKind
    content: str | None = None
    calls: tuple[ToolCall, ...] = ()
    usage: Usage = _DEFAULT_USAGE
    status: int = 200
    error_message: str = ""
    error_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay_seconds: float = 0.0
    finish: Finish = "complete"
    reasoning: str | None = None
    raw_body: bytes = b""
    content_type: str = "application/json"
    stream_fault: StreamFault | None = None

    def __post_init__(self) -> None:
        if self.kind == "raw":
            if not 200 <= self.status <= 599:
                raise ArgumentValueError(f"Reply.raw status must be 200-599, got {self.status}")
        elif self.kind == "message":
            if self.status != 200:
                raise ArgumentValueError(f"a message reply answers status 200, got {self.status}")
            if self.content is None and not self.calls:
                raise ArgumentValueError("a message reply needs text, tool calls or both")
        elif not 400 <= self.status <= 599:
            raise ArgumentValueError(
                f"Reply.error status must be an HTTP error status (400-599), got {self.status}"
            )
        if not (math.isfinite(self.delay_seconds) and self.delay_seconds >= 0):
            raise ArgumentValueError(
                f"Reply delay must be a finite number of seconds >= 0, got {self.delay_seconds!r}"
            )

    @classmethod
    def text(cls, text: str, *, usage: Usage | None = None) -> Reply:
        """A plain assistant message."""
        return cls(kind="message", content=text, usage=usage or _DEFAULT_USAGE)

    @classmethod
    def json(cls, value: Any, *, usage: Usage | None = None) -> Reply:
        """An assistant message whose text is `value` as JSON, as structured output arrives."""
        try:
            text = json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ArgumentValueError(f"Reply.json: value is not JSON-serialisable ({exc})") from exc
        return cls(kind="message", content=text, usage=usage or _DEFAULT_USAGE)

    @classmethod
    def tool_calls(
        cls, *calls: ToolCall, text: str | None = None, usage: Usage | None = None
    ) -> Reply:
        """An assistant turn that calls tools, optionally with text before the calls."""
        if not calls:
            raise ArgumentValueError("Reply.tool_calls needs at least one ToolCall")
        return cls(kind="message", content=text, calls=calls, usage=usage or _DEFAULT_USAGE)

    @classmethod
    def error(
        cls,
        status: int,
        message: str,
        *,
        error_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ) -> Reply:
        """An HTTP error in the receiving API's own error body format.

        `error_type` overrides the API's usual type for the status (OpenAI `error.type`,
        Anthropic `error.type`). `retry_after` (seconds, > 0) sends `retry-after-ms`, which both
        SDKs honour instead of their exponential backoff; keeps retry tests fast. (The OpenAI
        SDK does not retry at all when told to wait more than 120 seconds.)
        """
        extra = dict(headers or {})
        if retry_after is not None:
            if not (math.isfinite(retry_after) and retry_after > 0):
                raise ArgumentValueError(
                    f"Reply.error retry_after must be > 0 seconds (the SDKs ignore 0 and fall "
                    f"back to their backoff), got {retry_after!r}"
                )
            extra["retry-after-ms"] = f"{retry_after * 1000:g}"
        return cls(
            kind="error",
            status=status,
            error_message=message,
            error_type=error_type,
            headers=tuple(extra.items()),
        )

    @classmethod
    def truncated(
        cls,
        reply: Reply,
        *,
        by: Literal["max_tokens", "context_window", "content_filter"] = ("max_tokens"),
    ) -> Reply:
        """`reply` (text, JSON or tool calls) cut off before the model finished it.

        `by="max_tokens"` is the output token limit (Responses `status: "incomplete"` with
        `max_output_tokens`, Chat `finish_reason: "length"`, Anthropic `stop_reason:
        "max_tokens"`); `"context_window"` is Anthropic's `model_context_window_exceeded` (the
        OpenAI APIs report it as the token limit); `"content_filter"` is OpenAI's content filter
        (Anthropic, which has none, reports `stop_reason: "refusal"`). The last tool call of a
        truncated reply is the one cut off.
        """
        if reply.kind != "message":
            raise ArgumentValueError(
                "Reply.truncated takes a message reply (text, JSON or tool calls)"
            )
        return replace(reply, finish=by)

    @classmethod
    def with_reasoning(cls, reply: Reply, summary: str) -> Reply:
        """`reply` after a reasoning item (OpenAI Responses only; the other APIs ignore it)
        whose summary is `summary`. It carries `encrypted_content` when the request asked for
        it with `include=["reasoning.encrypted_content"]`."""
        if reply.kind != "message":
            raise ArgumentValueError("Reply.with_reasoning takes a message reply")
        return replace(reply, reasoning=summary)

    @classmethod
    def refusal(cls, explanation: str, *, usage: Usage | None = None) -> Reply:
        """The model declines: a Responses `refusal` content part, a Chat `message.refusal`, an
        Anthropic `stop_reason: "refusal"` with the explanation as its text."""
        return cls(
            kind="message", content=explanation, finish="refusal", usage=usage or _DEFAULT_USAGE
        )

    @classmethod
    def raw(
        cls, body: bytes | str, *, status: int = 200, content_type: str = "application/json"
    ) -> Reply:
        """Exactly `body` with `status` and `content-type`, whatever the endpoint: how a test
        sends a malformed reply (invalid JSON, `null`, an SSE stream where JSON was expected)."""
        data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        return cls(kind="raw", status=status, raw_body=data, content_type=content_type)

    @classmethod
    def faulty_stream(cls, reply: Reply, fault: StreamFault) -> Reply:
        """`reply` (text, JSON or tool calls) streamed with `fault` (see `StreamFault`); a request
        that does not stream gets `reply` whole. The faults act on the text, so give a reply of
        at least two words."""
        if reply.kind != "message":
            raise ArgumentValueError("Reply.faulty_stream takes a message reply")
        if fault not in get_args(StreamFault):
            raise ArgumentValueError(
                f"Reply.faulty_stream: unknown fault {fault!r}; expected one of"
                f" {', '.join(get_args(StreamFault))}"
            )
        return replace(reply, stream_fault=fault)

    @classmethod
    def delay(cls, seconds: float, then: Reply) -> Reply:
        """`then`, sent only after `seconds`; longer than a client's timeout makes it time out."""
        return replace(then, delay_seconds=seconds)
