"""Streaming: `stream` and `astream` run the same evaluation as `evaluate`, yielding typed events
as the replies arrive.

Events come in the order things happen: `TextDelta`s of a reply, its `UsageReported`, then for
each tool call it made `ToolCallStarted` and `ToolCallFinished`, then the next reply's deltas,
and last one `ResponseCompleted` holding the `PromptResponse` that `evaluate` would have returned.
The tool loop, output retries, session events and execution record are the evaluation's own
(`promptkit.adapters.loop`, `promptkit.adapters.evaluation`); only how a reply is received
differs. The deadline holds while a reply streams: the sync path reads the stream on a worker
thread and stops waiting when the deadline passes, the async path bounds every read with
`asyncio.timeout`.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from promptkit.adapters.attempts import DeadlinePassedError, send_until_deadline
from promptkit.adapters.evaluation import Evaluation
from promptkit.adapters.loop import Deadline, SendRequest, Step
from promptkit.adapters.response import PromptResponse, TokenUsage, ToolCallRecord
from promptkit.adapters.stream_wire import StreamDecoder, StreamWire, stream_wire_for
from promptkit.adapters.wire import ModelTurn, WireCodec
from promptkit.errors import PromptkitError, ProviderError
from promptkit.prompt import OverridesLookup

if TYPE_CHECKING:
    from promptkit.adapters.base import WireAdapter

OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class TextDelta:
    """A piece of reply text, in order; `request` numbers the reply within the evaluation."""

    text: str
    request: int


@dataclass(frozen=True)
class UsageReported:
    """A reply is complete; `usage` is what that one request cost."""

    usage: TokenUsage
    request: int


@dataclass(frozen=True)
class ToolCallStarted:
    """A tool the model called is about to run, with the arguments as the model sent them."""

    call_id: str
    name: str
    arguments: str | Mapping[str, Any]


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call ran; `record.result` is what goes back to the model."""

    record: ToolCallRecord


@dataclass(frozen=True)
class ResponseCompleted(Generic[OutputT]):
    """The last event: the evaluation's `PromptResponse`."""

    response: PromptResponse[OutputT]


StreamEvent: TypeAlias = (
    TextDelta | UsageReported | ToolCallStarted | ToolCallFinished | ResponseCompleted[OutputT]
)


def response_of(
    events: Iterable[StreamEvent[OutputT]], *, on_text: Callable[[str], None]
) -> PromptResponse[OutputT]:
    """Read `events` to the end, handing each piece of reply text to `on_text` as it arrives
    (print it, for example); return the final `PromptResponse`."""
    for event in events:
        if isinstance(event, TextDelta):
            on_text(event.text)
        elif isinstance(event, ResponseCompleted):
            return event.response
    raise ProviderError("the event stream ended without a ResponseCompleted event")


class _StreamDeadlineError(Exception):
    """The caller stopped waiting for a streamed reply because the deadline passed."""


# -- sync -----------------------------------------------------------------------------------------


def stream_evaluation(
    adapter: WireAdapter,
    run: Evaluation[OutputT],
    params: tuple[Any, ...],
    overrides_store: OverridesLookup | None,
    overrides_tag: str,
) -> Iterator[StreamEvent[OutputT]]:
    """The events of `run`, a prepared evaluation on `adapter`."""
    try:
        rendered = run.render(params, overrides_store, overrides_tag)
        client = adapter.sync_client()
        codec = adapter.wire_codec()
        steps = run.steps(rendered, codec)
        turn = yield from _drive(adapter, steps, codec, client, run.deadline)
        response = run.finish(rendered, turn)
    except GeneratorExit:
        run.abandon()  # the caller stopped reading; nothing failed
        raise
    except BaseException as error:
        run.record_failure(error)
        raise
    run.record_success(response)
    yield ResponseCompleted(response)


def _drive(
    adapter: WireAdapter,
    steps: Generator[Step, Any, ModelTurn],
    codec: WireCodec,
    client: Any,
    deadline: Deadline,
) -> Generator[StreamEvent[Any], None, ModelTurn]:
    wire = stream_wire_for(codec)
    reply: Any = None
    try:
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as finished:
                turn: ModelTurn = finished.value
                return turn
            if isinstance(step, SendRequest):
                decoder = wire.decoder()
                yield from _streamed_reply(adapter, wire, decoder, step, codec, client, deadline)
                reply = decoder.turn(codec)
                yield UsageReported(reply.usage, step.number)
            else:
                yield ToolCallStarted(step.call.call_id, step.call.name, step.call.arguments)
                reply = step.run()
                yield ToolCallFinished(reply.record)
    finally:
        steps.close()


def _streamed_reply(
    adapter: WireAdapter,
    wire: StreamWire,
    decoder: StreamDecoder,
    step: SendRequest,
    codec: WireCodec,
    client: Any,
    deadline: Deadline,
) -> Iterator[TextDelta]:
    where = adapter._where(codec, step)

    def opened() -> Any:
        if deadline.remaining() is None:
            return wire.open(client, step.request, None)
        return send_until_deadline(
            wire.open,
            client,
            step.request,
            deadline,
            is_connection_error=lambda error: adapter._is_connection_error(error, client),
        )

    try:
        for event in _events_within(opened, deadline):
            text = decoder.feed(event)
            if text:
                yield TextDelta(text, step.number)
    except (_StreamDeadlineError, DeadlinePassedError):
        raise deadline.exceeded(f"while receiving {where}") from None
    except PromptkitError:
        raise
    except Exception as error:
        raise adapter._translated(error, client, where, deadline) from None


def _events_within(opened: Callable[[], Any], deadline: Deadline) -> Iterator[Any]:
    """The events of the stream `opened()` returns, waiting for each no later than `deadline`.

    Without a deadline the stream is read here. With one it is read on a worker thread, since a
    blocking socket read cannot be interrupted: the caller stops waiting when the deadline
    passes, and the worker ends by itself because its request timeout is the time that was left.
    """
    if deadline.remaining() is None:
        stream = opened()
        try:
            yield from stream
        finally:
            stream.close()
        return
    items: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    stop = threading.Event()

    def produce() -> None:
        try:
            stream = opened()
            try:
                for event in stream:
                    items.put((True, event))
                    if stop.is_set():
                        break
            finally:
                stream.close()
            items.put((False, None))
        except BaseException as error:
            items.put((False, error))

    worker = threading.Thread(
        target=contextvars.copy_context().run,
        args=(produce,),
        name="promptkit-provider-stream",
        daemon=True,
    )
    worker.start()
    try:
        while True:
            try:
                is_event, value = items.get(timeout=deadline.remaining())
            except queue.Empty:
                raise _StreamDeadlineError from None
            if not is_event:
                if value is None:
                    return
                raise value
            yield value
    finally:
        stop.set()


# -- async ----------------------------------------------------------------------------------------


async def astream_evaluation(
    adapter: WireAdapter,
    run: Evaluation[OutputT],
    params: tuple[Any, ...],
    overrides_store: OverridesLookup | None,
    overrides_tag: str,
) -> AsyncIterator[StreamEvent[OutputT]]:
    """`stream_evaluation` for asyncio; an `async def` tool handler runs on the event loop."""
    try:
        rendered = run.render(params, overrides_store, overrides_tag)
        client = adapter.async_client()
        codec = adapter.wire_codec()
        wire = stream_wire_for(codec)
        steps = run.steps(rendered, codec)
        reply: Any = None
        try:
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as finished:
                    turn: ModelTurn = finished.value
                    break
                if isinstance(step, SendRequest):
                    decoder = wire.decoder()
                    async for delta in _astreamed_reply(
                        adapter, wire, decoder, step, codec, client, run.deadline
                    ):
                        yield delta
                    reply = decoder.turn(codec)
                    yield UsageReported(reply.usage, step.number)
                else:
                    yield ToolCallStarted(step.call.call_id, step.call.name, step.call.arguments)
                    reply = await step.arun()
                    yield ToolCallFinished(reply.record)
        finally:
            steps.close()
        response = run.finish(rendered, turn)
    except GeneratorExit:
        run.abandon()
        raise
    except BaseException as error:
        run.record_failure(error)
        raise
    run.record_success(response)
    yield ResponseCompleted(response)


async def _astreamed_reply(
    adapter: WireAdapter,
    wire: StreamWire,
    decoder: StreamDecoder,
    step: SendRequest,
    codec: WireCodec,
    client: Any,
    deadline: Deadline,
) -> AsyncIterator[TextDelta]:
    where = adapter._where(codec, step)
    try:
        async with asyncio.timeout(deadline.remaining()):
            stream = await wire.aopen(client, step.request, deadline.remaining())
        try:
            events = aiter(stream)
            while True:
                # Each read is bounded on its own: a timeout scope must not span a `yield`.
                async with asyncio.timeout(deadline.remaining()):
                    try:
                        event = await anext(events)
                    except StopAsyncIteration:
                        break
                text = decoder.feed(event)
                if text:
                    yield TextDelta(text, step.number)
        finally:
            await stream.close()
    except TimeoutError:
        if deadline.remaining() == 0.0:
            raise deadline.exceeded(f"while receiving {where}") from None
        raise
    except PromptkitError:
        raise
    except Exception as error:
        raise adapter._translated(error, client, where, deadline) from None
