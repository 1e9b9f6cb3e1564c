"""The one protocol between `FakeProviderServer` and a wire API it imitates (`FakeApi`), and the
pieces the APIs' modules share.

A `FakeApi` renders a scripted `Reply` as the API's 200 body, re-tells that body as the
server-sent events the API streams (and says which of them carry text and which ends the
answer, for the stream faults of `_stream_faults`), writes the API's error body, and lists what
in a request the real API would refuse. Each API is one private module of this package
(`_responses`, `_chat`, `_messages`); the facts it shares with the adapters that speak the same
API (paths, names, strict-schema rules, the SDK's request types) come from its `WireFormat`
(`promptkit.wire`).

Bodies carry every field the SDKs' response models require, so clients built with
`_strict_response_validation=True` accept them; fields a real response echoes from the request
(model, tools, tool choice, text format) are echoed where the response model can hold them.
Streams are derived from the same body a non-streamed request gets, so a streamed and a plain
request for one `Reply` decode to the same answer; text is sent word by word, so a client sees
it arrive in order.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

from promptkit.errors import UsageError
from promptkit.testing._replies import Reply, ToolCall
from promptkit.wire import StrictDialect, WireFormat, request_type_problems, strict_schema_problems

FALLBACK_MODEL = "fake-model"
"""The model a reply names when the request named none."""

CUT_OFF = frozenset({"max_tokens", "context_window", "content_filter"})
"""The `Reply.finish` values of a reply cut off before the model completed it."""

_WORDS = re.compile(r"\S+\s*|\s+")


class WireRenderError(UsageError, ValueError):
    """A reply cannot be expressed in the receiving API's wire format: the test scripted one
    that API never sends (a caller's mistake).

    Internal to the fake server: it becomes a loud HTTP 500 for the client, never escapes.
    """


class FakeApi(ABC):
    """How the fake server imitates one wire API."""

    format: ClassVar[WireFormat]

    @abstractmethod
    def body(self, reply: Reply, request: dict[str, Any], seq: int) -> dict[str, Any]:
        """The 200 body answering `request` with message reply `reply` (the `seq`-th request);
        `WireRenderError` when the API cannot express it."""

    @abstractmethod
    def events(self, body: dict[str, Any], request: dict[str, Any]) -> Iterator[str]:
        """The server-sent events that tell `body`, the non-streamed answer to `request`."""

    @abstractmethod
    def is_text_delta(self, data: dict[str, Any]) -> bool:
        """Whether the streamed event `data` adds text to the answer."""

    @abstractmethod
    def is_finish(self, data: dict[str, Any]) -> bool:
        """Whether the streamed event `data` is the first of those that complete the answer."""

    @abstractmethod
    def wrong_shaped(self, data: dict[str, Any]) -> dict[str, Any]:
        """The text delta `data` with its text replaced by an object: JSON, but not the shape
        the event's type has."""

    @abstractmethod
    def error_body(
        self, status: int, message: str, *, error_type: str | None, request_id: str
    ) -> dict[str, Any]:
        """An error body in the API's format; `error_type` None picks the usual one."""

    @abstractmethod
    def rule_problems(self, body: dict[str, Any]) -> list[str]:
        """What the real API refuses in `body` beyond its request type (schemas, tool results)."""

    @abstractmethod
    def tool_results(self, body: dict[str, Any]) -> dict[str, str]:
        """The text of each tool result `body` sends back, by the id of the call it answers."""

    def problems(self, body: dict[str, Any]) -> list[str]:
        """Everything the real API would refuse in `body`, each as one sentence naming where:
        keys the SDK's request type does not declare or requires, then the API's own rules."""
        return request_type_problems(body, self.format.request_type()) + self.rule_problems(body)


# -- bodies -------------------------------------------------------------------------------------


def call_id(call: ToolCall, seq: int, index: int, prefix: str) -> str:
    """The id of the `index`-th call of the `seq`-th reply, unless the script named one."""
    return call.call_id or f"{prefix}_fake{seq:06d}_{index}"


def model_of(request: dict[str, Any]) -> str:
    """The model a reply to `request` names: the one asked for."""
    model = request.get("model")
    return model if isinstance(model, str) and model else FALLBACK_MODEL


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def openai_error_body(status: int, message: str, *, error_type: str | None) -> dict[str, Any]:
    """An error body as both OpenAI APIs write it (and the fake answers an unknown path)."""
    if status == 401:
        default_type, code = "invalid_request_error", "invalid_api_key"
    elif status == 429:
        default_type, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        default_type, code = "server_error", None
    else:
        default_type, code = "invalid_request_error", None
    return {
        "error": {
            "message": message,
            "type": error_type or default_type,
            "param": None,
            "code": code,
        }
    }


# -- streams ------------------------------------------------------------------------------------


def text_pieces(text: str) -> list[str]:
    """`text` cut into the deltas a stream sends: one word (with its trailing space) each."""
    return _WORDS.findall(text) or [""]


def sse_event(name: str | None, data: dict[str, Any]) -> str:
    """One server-sent event: `event: name` (when named) and its JSON `data`."""
    prefix = f"event: {name}\n" if name else ""
    return f"{prefix}data: {json.dumps(data)}\n\n"


# -- request rules ------------------------------------------------------------------------------


def dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON list with their indexes; anything else has none."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text of its text blocks."""
    if isinstance(content, str):
        return content
    return "".join(
        block["text"] for _, block in dicts(content) if isinstance(block.get("text"), str)
    )


def function_problems(where: str, function: dict[str, Any], dialect: StrictDialect) -> list[str]:
    """What OpenAI refuses in a function definition: its name, and a strict schema's rules."""
    problems: list[str] = []
    name = function.get("name")
    if isinstance(name, str) and dialect.tool_name_pattern.fullmatch(name) is None:
        problems.append(
            f"Invalid '{where}.name': string does not match pattern. Expected a string that"
            f" matches the pattern '^{dialect.tool_name_pattern.pattern}$'."
        )
    if function.get("strict") is True:
        problems += schema_problems(f"{where}.parameters", function.get("parameters"), dialect)
    return problems


def format_problems(where: str, fmt: dict[str, Any], dialect: StrictDialect) -> list[str]:
    """What OpenAI refuses in a JSON-schema output format: its name, and a strict schema's."""
    problems: list[str] = []
    name = fmt.get("name")
    if isinstance(name, str) and dialect.tool_name_pattern.fullmatch(name) is None:
        problems.append(f"Invalid '{where}.name': string does not match pattern.")
    if fmt.get("strict") is True:
        problems += schema_problems(f"{where}.schema", fmt.get("schema"), dialect)
    return problems


def schema_problems(where: str, schema: Any, dialect: StrictDialect) -> list[str]:
    """Where a strict `schema` at `where` breaks `dialect`'s rules."""
    return [
        f"Invalid schema for '{where}': {problem}"
        for problem in strict_schema_problems(schema, dialect)
    ]
