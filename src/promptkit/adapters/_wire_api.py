"""The one protocol between the shared adapter and a wire API (`WireApi`), and the values that
cross it.

A `WireApi` knows everything about speaking one API: the request for a rendered prompt, earlier
turns and tool results as the API's items, `ModelSettings` as its request fields, the SDK call
that sends a request and the one that opens a stream, and how a reply or a stream's events
decode into a `ModelTurn`. Each API is one private module of this package (`_responses`, `_chat`,
`_messages`); the facts the fake server shares with it (names, strict rules, request types) are
its `WireFormat` (`promptkit.wire`). A `WireApi` holds no state of its own: the conversation is
a `WireConversation` value that grows by one model turn and its tool results per round.

A request is sent through the SDK's raw-response variant, so the HTTP status and request id stay
with the reply (`WireReply`): a reply that is not what the API promises (not JSON, `null`, a
list, `{}`, an event stream, an item missing its fields) becomes `ProviderMalformedReplyError`
carrying both, never a `JSONDecodeError` or `AttributeError` from deep inside the SDK.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from promptkit.adapters._conversation import Message
from promptkit.adapters._provider_errors import request_id
from promptkit.adapters._response import FinishReason, TokenUsage
from promptkit.adapters._settings import ModelSettings, UnsupportedSettingError
from promptkit.errors import (
    PromptkitError,
    ProviderMalformedReplyError,
    ProviderStreamCutError,
)
from promptkit.prompt import RenderedPrompt
from promptkit.wire import WireFormat


@dataclass(frozen=True)
class RequestedToolCall:
    """A tool call as the model asked for it; `arguments` is JSON text or an object.

    `truncated` says the reply was cut off while the model was still writing this call, so its
    arguments are incomplete: such a call is answered with an error and never run.
    """

    call_id: str
    name: str
    arguments: str | Mapping[str, Any]
    truncated: bool = False

    def __post_init__(self) -> None:
        # A lenient SDK client leaves a field the reply lacks as None; `read_turn` reports it.
        if not isinstance(self.call_id, str) or not isinstance(self.name, str):
            raise TypeError(f"a tool call lacks its id or name ({self.call_id!r}, {self.name!r})")
        if not isinstance(self.arguments, str | Mapping):
            raise TypeError(f"tool call {self.name!r} has no arguments")


@dataclass(frozen=True)
class ModelTurn:
    """One reply, decoded: its text, its tool calls, its usage, the wire items that repeat it
    in the next request (`replay()`), why it ended, and the model's refusal text if it declined.

    `replay` is called only when there is a next request: most replies are final, and cutting a
    reply's items down to what a request declares costs more than decoding the rest of it.
    """

    text: str
    tool_calls: tuple[RequestedToolCall, ...]
    usage: TokenUsage
    model: str | None
    replay: Callable[[], tuple[Mapping[str, Any], ...]]
    finish_reason: FinishReason = "stop"
    refusal: str | None = None


@dataclass(frozen=True)
class ToolReply:
    """The result of one tool call as it goes back to the model."""

    call: RequestedToolCall
    message: str
    is_error: bool


@dataclass(frozen=True)
class WireConversation:
    """Everything a request carries: fixed parts (model, system text, tools, output format) and
    the growing list of conversation items under `items_key`."""

    fixed: Mapping[str, Any]
    items_key: str
    items: tuple[Mapping[str, Any], ...]
    takes_lone_text: bool = False
    """The API takes a conversation that is only a user's text as that text (Responses
    `input`). The SDK sends text as it is, while it walks each item of a list through every one
    of the two dozen kinds of input item: about a quarter of a millisecond of CPU a request."""

    def request(self) -> dict[str, Any]:
        """The keyword arguments of the SDK call."""
        if self.takes_lone_text and len(self.items) == 1:
            [item] = self.items
            text = item.get("content")
            if (
                item.keys() == {"role", "content"}
                and item["role"] == "user"
                and isinstance(text, str)
            ):
                return {**self.fixed, self.items_key: text}
        return {**self.fixed, self.items_key: list(self.items)}

    def extended(self, items: Sequence[Mapping[str, Any]]) -> WireConversation:
        """This conversation with `items` appended."""
        return replace(self, items=(*self.items, *items))

    def with_history(self, items: Sequence[Mapping[str, Any]]) -> WireConversation:
        """This conversation with earlier turns `items` placed before its opening user turn."""
        if not items:
            return self
        *leading, opening = self.items
        return replace(self, items=(*leading, *items, opening))

    def with_options(self, options: Mapping[str, Any]) -> WireConversation:
        """This conversation with request fields `options` added (settings); an object both
        set (Anthropic's `output_config`) is merged key by key."""
        if not options:
            return self
        fixed = dict(self.fixed)
        for name, value in options.items():
            current = fixed.get(name)
            if isinstance(current, Mapping) and isinstance(value, Mapping):
                fixed[name] = {**current, **value}
            else:
                fixed[name] = value
        return replace(self, fixed=fixed)


class WireApi(ABC):
    """How one wire API is spoken; the shared adapter asks nothing of an API but this."""

    format: ClassVar[WireFormat]
    """The API's facts: its names, strict structured-output rules and request type."""
    unsupported_settings: ClassVar[Mapping[str, str]] = {}
    """`ModelSettings` field -> why the API cannot take it and what to do instead."""
    refused_setting_values: ClassVar[Mapping[str, tuple[Any, ...]]] = {}
    """`ModelSettings` field -> values the API refuses although it takes the field."""

    @property
    def api(self) -> str:
        """Short name of the API, for messages and the execution record."""
        return self.format.api

    # -- the request ------------------------------------------------------------------------

    @abstractmethod
    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        """The first request: the rendered prompt as system text and `user_message` as the turn."""

    @abstractmethod
    def history_items(self, messages: Sequence[Message]) -> list[Mapping[str, Any]]:
        """Earlier turns `messages` as the conversation items of this API."""

    @abstractmethod
    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        """The conversation items that carry `replies` back to the model."""

    @abstractmethod
    def settings_fields(self, settings: ModelSettings, *, has_tools: bool) -> dict[str, Any]:
        """The request fields `settings` become, once `request_options` has checked them."""

    def request_options(self, settings: ModelSettings, *, has_tools: bool) -> dict[str, Any]:
        """The request fields `settings` become; `UnsupportedSettingError` for a setting this API
        does not accept, raised before anything is sent."""
        for name, value in settings.chosen().items():
            reason = self.unsupported_settings.get(name)
            if reason is not None:
                raise UnsupportedSettingError(
                    f"ModelSettings.{name}={value!r} is not supported on the {self.api} API:"
                    f" {reason}"
                )
            if value in self.refused_setting_values.get(name, ()):
                raise UnsupportedSettingError(
                    f"ModelSettings.{name}={value!r} is not accepted by the {self.api} API;"
                    " choose another value"
                )
        return self.settings_fields(settings, has_tools=has_tools)

    # -- the reply --------------------------------------------------------------------------

    @abstractmethod
    def read(self, response: Any) -> ModelTurn:
        """Decode an SDK response object (`read_turn` guards it against malformed replies)."""

    @abstractmethod
    def reply_shape(self) -> ReplyShape:
        """What every reply of this API is (imports the SDK's response model)."""

    # -- sending ----------------------------------------------------------------------------

    @abstractmethod
    def send_method(self, client: Any) -> Any:
        """The SDK method `create` and `acreate` send with (`with_raw_response.create` of the
        API's resource on `client`). The SDKs import a resource's module on first access: an
        adapter reaches for it in `prepare_client`, ahead of the first request."""

    def create(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> WireReply:
        """Send `request` with a sync SDK client; `timeout` None keeps the client's own."""
        raw = self.send_method(client)(**request, **timeout_option(timeout))
        return parsed_reply(raw, self.reply_shape())

    async def acreate(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> WireReply:
        """Send `request` with an async SDK client; `timeout` None keeps the client's own."""
        raw = await self.send_method(client)(**request, **timeout_option(timeout))
        return await aparsed_reply(raw, self.reply_shape())

    # -- streaming --------------------------------------------------------------------------

    @abstractmethod
    def open_stream(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> Any:
        """The SDK stream for `request` (iterable, with `close()`); raises as `create` does."""

    @abstractmethod
    async def aopen_stream(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> Any:
        """The async SDK stream (async iterable, with awaitable `close()`)."""

    @abstractmethod
    def stream_decoder(self) -> StreamDecoder:
        """A decoder for one streamed reply."""

    def without_native_output(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        """`request` without the schema-constrained output format it asks for, for a server
        that refused the format (the prompt's Response Format section asks instead); `request`
        itself when it asks for none, which is how the transport tells the two apart."""
        return request


class StreamDecoder(ABC):
    """Reads the events of one streamed reply. The final turn is the API's own `read` of the
    SDK's accumulated object, so a streamed reply and a plain one cannot disagree about text,
    tool calls or usage.

    A stream ends complete or raises: an event that is not of its type's shape (the SDK builds
    events leniently, so a field may hold anything) is `ProviderMalformedReplyError`, as a
    malformed plain reply is; a stream that ends before its API's finish event is
    `ProviderStreamCutError`, never a partial reply passed on as whole.
    """

    finish_event: ClassVar[str]
    """The API's name for the event that completes a reply, for messages."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.events = 0
        self.is_open = False
        self.status = 200
        self.request_id: str | None = None

    @abstractmethod
    def take(self, event: Any) -> str | None:
        """Take one SDK event; return the text it adds to the reply, if any (a field of the
        wrong kind may raise anything `read` may)."""

    @abstractmethod
    def finished(self) -> Any:
        """The accumulated reply object the API reads, or None when the finish event has not
        arrived."""

    def opened(self, stream: Any) -> None:
        """Note that the stream is open, and its HTTP response (`stream.response`) for errors
        to name."""
        self.is_open = True
        response = getattr(stream, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            self.status = status
        self.request_id = request_id(getattr(response, "headers", None))

    def feed(self, event: Any) -> str | None:
        """`take` one event, guarded: a malformed one is `ProviderMalformedReplyError`."""
        self.events += 1
        try:
            return self.take(event)
        except PromptkitError:
            raise
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as error:
            raise self.malformed(error) from None

    def malformed(self, error: BaseException) -> ProviderMalformedReplyError:
        """The error for event number `events` (or the stream's bytes) not being what the API
        sends."""
        return ProviderMalformedReplyError(
            f"the {self.api} stream{_ident(self.request_id, first=True)} is malformed at event"
            f" {max(self.events, 1)}: {type(error).__name__}: {str(error)[:200]}; is the base"
            " URL an API of the right kind?",
            status=self.status,
            request_id=self.request_id,
        )

    def cut(self, cause: str) -> ProviderStreamCutError:
        """The error for a stream that ended (`cause`) before its finish event."""
        return ProviderStreamCutError(
            f"the {self.api} stream{_ident(self.request_id, first=True)} ended after"
            f" {self.events} events without its finish event ({self.finish_event}): {cause};"
            " the partial reply was not used, retry the request",
            status=self.status,
            request_id=self.request_id,
        )

    def turn(self, api: WireApi) -> ModelTurn:
        """The decoded reply, once the stream has ended: `ProviderStreamCutError` when its
        finish event never came, `ProviderMalformedReplyError` when it does not decode."""
        final = self.finished()
        if final is None:
            raise self.cut("the stream closed early")
        return read_turn(api, WireReply(final, self.status, self.request_id))


def delta_text(value: Any, what: str) -> str | None:
    """`value` as the text a streamed event adds (None for none); TypeError, which
    `StreamDecoder.feed` reports as a malformed event, when the event holds something else
    there (the SDKs build events leniently)."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{what} is {type(value).__name__}, not text")


@dataclass(frozen=True)
class ReplyShape:
    """What every reply of an API is: the SDK model it parses into and the list fields a reply
    cannot lack (`output`, `choices`, `content`)."""

    api: str
    model_type: type[Any]
    list_fields: tuple[str, ...]


@dataclass(frozen=True)
class WireReply:
    """A parsed SDK reply with the status and request id of the HTTP response it came from."""

    body: Any
    status: int
    request_id: str | None


def parsed_reply(raw: Any, shape: ReplyShape) -> WireReply:
    """The reply inside an SDK raw response, checked against `shape`."""
    try:
        body = raw.parse()
    except ValueError as error:  # the body is not JSON (JSONDecodeError)
        raise _malformed(shape.api, raw, f"its body is not JSON ({error})") from None
    return _checked(raw, body, shape)


async def aparsed_reply(raw: Any, shape: ReplyShape) -> WireReply:
    """`parsed_reply` for an async raw response, whose `parse` may be a coroutine."""
    try:
        body = raw.parse()
        if inspect.isawaitable(body):
            body = await body
    except ValueError as error:
        raise _malformed(shape.api, raw, f"its body is not JSON ({error})") from None
    return _checked(raw, body, shape)


def read_turn(api: WireApi, reply: WireReply) -> ModelTurn:
    """`api.read` of a reply; a field missing or of the wrong kind anywhere inside it becomes
    `ProviderMalformedReplyError` with the reply's status and request id."""
    try:
        return api.read(reply.body)
    except PromptkitError:
        raise
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as error:
        raise ProviderMalformedReplyError(
            f"the {api.api} reply (HTTP {reply.status}{_ident(reply.request_id)}) is"
            f" malformed: {type(error).__name__}: {str(error)[:200]}; is the base URL an API"
            " of the right kind?",
            status=reply.status,
            request_id=reply.request_id,
        ) from None


def _checked(raw: Any, body: Any, shape: ReplyShape) -> WireReply:
    if not isinstance(body, shape.model_type):
        # Without strict validation the SDK hands back whatever the body was: text, None, a list.
        raise _malformed(shape.api, raw, f"it is {_kind(body)}, not a {shape.api} object")
    for name in shape.list_fields:
        if not isinstance(getattr(body, name, None), list):
            raise _malformed(shape.api, raw, f"it has no {name!r} list")
    return WireReply(body, raw.status_code, request_id(raw.headers))


def _malformed(api: str, raw: Any, what: str) -> ProviderMalformedReplyError:
    status: int = raw.status_code
    sent_id = request_id(raw.headers)
    return ProviderMalformedReplyError(
        f"the {api} reply (HTTP {status}{_ident(sent_id)}) is malformed: {what}; is the base"
        " URL an API of the right kind?",
        status=status,
        request_id=sent_id,
    )


def _ident(sent_id: str | None, *, first: bool = False) -> str:
    if not sent_id:
        return ""
    return f" (request id {sent_id})" if first else f", request id {sent_id}"


def _kind(body: Any) -> str:
    if body is None:
        return "null"
    if isinstance(body, str):
        return "text" if body.strip() else "empty"
    if isinstance(body, list):
        return "a JSON array"
    return f"a {type(body).__name__}"


def without_entry(request: Mapping[str, Any], field: str, key: str) -> Mapping[str, Any]:
    """`request` without `key` of its object `field` (and without `field` once it is empty)."""
    inner = request.get(field)
    if not isinstance(inner, Mapping) or key not in inner:
        return request
    rest = {name: value for name, value in inner.items() if name != key}
    kept = {name: value for name, value in request.items() if name != field}
    return {**kept, field: rest} if rest else kept


def timeout_option(timeout: float | None) -> dict[str, float]:
    """`{"timeout": t}` for an SDK call, or nothing so the client's default applies."""
    return {} if timeout is None else {"timeout": timeout}


def normalised_finish_reason(
    *, truncated_by: str | None, refused: bool, called_tools: bool
) -> FinishReason:
    """The `FinishReason` of a reply: cut off (`length` or `content_filter`, as `truncated_by`
    says), declined, calling tools, or complete. A cut-off reply stays cut off even when it
    called tools, so its last call is known to be incomplete."""
    if truncated_by is not None:
        return "content_filter" if truncated_by == "content_filter" else "length"
    if refused:
        return "refusal"
    return "tool_calls" if called_tools else "stop"
