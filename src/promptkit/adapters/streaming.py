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

from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from promptkit.adapters._transport import Transport
from promptkit.adapters._wire_api import ModelTurn
from promptkit.adapters.evaluation import Evaluation
from promptkit.adapters.loop import SendRequest, Step
from promptkit.adapters.response import PromptResponse, TokenUsage, ToolCallRecord
from promptkit.errors import ProviderError
from promptkit.prompt import OverridesLookup

if TYPE_CHECKING:
    from promptkit.adapters._wire_adapter import WireAdapter

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
        codec = adapter.wire_api()
        steps = run.steps(rendered, codec)
        turn = yield from _drive(steps, adapter.transport(codec, client, run.deadline))
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
    steps: Generator[Step, Any, ModelTurn], transport: Transport
) -> Generator[StreamEvent[Any], None, ModelTurn]:
    reply: Any = None
    try:
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as finished:
                turn: ModelTurn = finished.value
                return turn
            if isinstance(step, SendRequest):
                decoder = transport.api.stream_decoder()
                for text in transport.receive(step, decoder):
                    yield TextDelta(text, step.number)
                reply = decoder.turn(transport.api)
                yield UsageReported(reply.usage, step.number)
            else:
                yield ToolCallStarted(step.call.call_id, step.call.name, step.call.arguments)
                reply = step.run()
                yield ToolCallFinished(reply.record)
    finally:
        steps.close()


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
        codec = adapter.wire_api()
        steps = run.steps(rendered, codec)
        transport = adapter.transport(codec, client, run.deadline)
        reply: Any = None
        try:
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as finished:
                    turn: ModelTurn = finished.value
                    break
                if isinstance(step, SendRequest):
                    decoder = codec.stream_decoder()
                    async for text in transport.areceive(step, decoder):
                        yield TextDelta(text, step.number)
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
