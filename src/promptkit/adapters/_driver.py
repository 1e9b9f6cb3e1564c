"""The one driver of an evaluation, for its four ways to run: `evaluate` and `aevaluate` return
the response, `stream` and `astream` yield events as things happen.

`drive` is written once and, like the tool loop it runs, does no I/O: it renders the prompt,
turns the loop's steps into effects (send a request, receive a streamed reply, run tool calls)
and, when streaming, into events, records the call's success or failure, and ends with
`ResponseCompleted`. `run_blocking` and `run_async` only perform the effects, blocking or with
asyncio, and pass the events on; an effect that fails is thrown back into `drive`, so a failure
is recorded wherever it happens. `evaluate` is `run_blocking` of a drive that streams nothing,
read to its last event.

Tool calls the loop lets overlap run at once, at most its `concurrency`: on worker threads when
blocking (an `async def` handler on an event loop of its own there), as tasks on the event loop
with asyncio (a plain handler on a worker thread). Their results go back in the reply's order.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from promptkit.adapters._evaluation import Evaluation
from promptkit.adapters._events import (
    ResponseCompleted,
    StreamEvent,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)
from promptkit.adapters._loop import RunTool, RunTools, SendRequest
from promptkit.adapters._response import PromptResponse
from promptkit.adapters._tools import ExecutedCall
from promptkit.adapters._transport import Transport
from promptkit.adapters._wire_api import ModelTurn, StreamDecoder
from promptkit.errors import ProviderError

OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class Send:
    """Effect: send `step`'s request and send back its `WireReply`."""

    transport: Transport
    step: SendRequest


@dataclass(frozen=True)
class Receive:
    """Effect: receive `step`'s reply as a stream, its text as `TextDelta` events and every SDK
    event fed to `decoder`; nothing is sent back."""

    transport: Transport
    step: SendRequest
    decoder: StreamDecoder


Effect: TypeAlias = Send | Receive | RunTools
Drive: TypeAlias = Generator[Effect | StreamEvent[OutputT], Any, None]


# The one driver of the four ways to run: each effect, plain or streamed, is a path here.
def drive(  # noqa: C901
    run: Evaluation[OutputT],
    params: tuple[Any, ...],
    *,
    connect: Callable[[], Any],
    streamed: bool,
) -> Drive[OutputT]:
    """The effects and events of `run` with `params`; `connect()` gives the SDK client (sync or
    async, as the runner performs effects). Without `streamed`, the only event is the last."""
    try:
        rendered = run.render(params)
        transport = run.transport(connect())
        steps = run.steps(rendered, transport.api)
        reply: Any = None
        try:
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as finished:
                    turn: ModelTurn = finished.value
                    break
                if isinstance(step, RunTools):
                    if streamed:
                        for run_tool in step.calls:
                            call = run_tool.call
                            yield ToolCallStarted(call.call_id, call.name, call.arguments)
                    reply = yield step
                    if streamed:
                        for executed in reply:
                            yield ToolCallFinished(executed.record)
                elif streamed:
                    decoder = transport.api.stream_decoder()
                    yield Receive(transport, step, decoder)
                    reply = decoder.turn(transport.api)
                    yield UsageReported(reply.usage, step.number)
                else:
                    reply = yield Send(transport, step)
        finally:
            steps.close()
        response = run.finish(rendered, turn)
    except GeneratorExit:
        run.abandon()  # the caller stopped reading a stream; nothing failed
        raise
    except BaseException as error:
        run.record_failure(error)
        raise
    run.record_success(response)
    yield ResponseCompleted(response)


def run_blocking(effects: Drive[OutputT]) -> Iterator[StreamEvent[OutputT]]:
    """The events of a drive, its effects performed with blocking calls."""
    reply: Any = None
    failure: BaseException | None = None
    try:
        while True:
            try:
                item = effects.send(reply) if failure is None else effects.throw(failure)
            except StopIteration:
                return
            reply = failure = None
            try:
                if isinstance(item, Send):
                    reply = item.transport.send(item.step)
                elif isinstance(item, Receive):
                    yield from item.transport.receive(item.step, item.decoder)
                elif isinstance(item, RunTools):
                    reply = run_tools(item)
                else:
                    yield item
            except GeneratorExit:
                raise  # the caller stopped reading: `drive` is closed below
            except BaseException as error:
                failure = error
    finally:
        effects.close()


async def run_async(effects: Drive[OutputT]) -> AsyncIterator[StreamEvent[OutputT]]:
    """The events of a drive, its effects awaited; an `async def` tool handler runs on the event
    loop."""
    reply: Any = None
    failure: BaseException | None = None
    try:
        while True:
            try:
                item = effects.send(reply) if failure is None else effects.throw(failure)
            except StopIteration:
                return
            reply = failure = None
            try:
                if isinstance(item, Send):
                    reply = await item.transport.asend(item.step)
                elif isinstance(item, Receive):
                    async for delta in item.transport.areceive(item.step, item.decoder):
                        yield delta
                elif isinstance(item, RunTools):
                    reply = await arun_tools(item)
                else:
                    yield item
            except GeneratorExit:
                raise
            except BaseException as error:
                failure = error
    finally:
        effects.close()


def run_tools(step: RunTools) -> list[ExecutedCall]:
    """`step`'s calls run blocking: on this thread when it is one, else on worker threads,
    each in a copy of this thread's context (so its spans and log context carry over)."""
    if len(step.calls) == 1 or step.concurrency == 1:
        return [run_tool.run() for run_tool in step.calls]
    workers = min(step.concurrency, len(step.calls))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="promptkit-tool") as pool:
        futures = [
            pool.submit(contextvars.copy_context().run, run_tool.run) for run_tool in step.calls
        ]
        return [future.result() for future in futures]


async def arun_tools(step: RunTools) -> list[ExecutedCall]:
    """`step`'s calls awaited, at most `concurrency` at once; when one raises, the others are
    cancelled."""
    if len(step.calls) == 1:
        return [await step.calls[0].arun()]
    slots = asyncio.Semaphore(step.concurrency)

    async def bounded(run_tool: RunTool) -> ExecutedCall:
        async with slots:
            return await run_tool.arun()

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(bounded(run_tool)) for run_tool in step.calls]
    return [task.result() for task in tasks]


def last_response(events: Iterable[StreamEvent[OutputT]]) -> PromptResponse[OutputT]:
    """The response of a drive's events, read to the end."""
    response: PromptResponse[OutputT] | None = None
    for event in events:
        if isinstance(event, ResponseCompleted):
            response = event.response
    return _completed(response)


async def alast_response(events: AsyncIterator[StreamEvent[OutputT]]) -> PromptResponse[OutputT]:
    """`last_response` of asynchronous events."""
    response: PromptResponse[OutputT] | None = None
    async for event in events:
        if isinstance(event, ResponseCompleted):
            response = event.response
    return _completed(response)


def _completed(response: PromptResponse[OutputT] | None) -> PromptResponse[OutputT]:
    if response is None:  # `drive` ends with the response or raises: not reached
        raise ProviderError("the evaluation ended without a response")
    return response
