"""The tool calls of one reply run at the same time where that is safe: an `async def` handler,
or a plain one marked `concurrency_safe=True`; a plain handler runs alone. At most
`tool_concurrency` run at once, and whatever order they finish in, the results go back to the
model, into the response and into the session in the order the model made the calls.

A barrier only two calls running at once can pass proves they overlapped: run one after the
other, the first would wait at it until the evaluation's deadline.
"""

import asyncio
import threading
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.adapters import StreamEvent, ToolCallFinished, ToolCallStarted
from promptkit.errors import ProviderTimeoutError
from promptkit.session import Session, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from .conftest import WIRES, Wire

# Long enough never to pass while the calls overlap; reached only when they do not.
BARRIER_TIMEOUT_S = 10.0


class Step(BaseModel):
    name: str


def tool_prompt(*tools: Tool[Step, Any]) -> Prompt[None, None]:
    return Prompt(
        ns="tests/concurrent",
        key="tools",
        sections=(MarkdownSection(title="Task", key="task", template="Work.", tools=tools),),
    )


def async_tool(
    name: str, body: Callable[[Step], Awaitable[str]], **options: Any
) -> Tool[Step, Any]:
    async def handler(params: Step, context: ToolContext) -> ToolResult:
        return ToolResult(message=await body(params))

    return Tool(name=name, description=name, params_type=Step, handler=handler, **options)


def plain_tool(name: str, body: Callable[[Step], str], **options: Any) -> Tool[Step, Any]:
    def handler(params: Step, context: ToolContext) -> ToolResult:
        return ToolResult(message=body(params))

    return Tool(name=name, description=name, params_type=Step, handler=handler, **options)


def calls(tool: str, *names: str) -> Reply:
    return Reply.tool_calls(*(ToolCall(tool, {"name": name}, call_id=name) for name in names))


def aevaluate(server: FakeProviderServer, prompt: Prompt[None, None], **options: Any) -> Any:
    wire = WIRES[0]

    async def run() -> Any:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            return await adapter.aevaluate(prompt, **options)

    return asyncio.run(run())


class InFlight:
    """How many calls run right now, and the most that ever did."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


def test_async_handlers_of_one_reply_run_at_the_same_time(server: FakeProviderServer) -> None:
    barrier: list[asyncio.Barrier] = []

    async def meet(params: Step) -> str:
        if not barrier:
            barrier.append(asyncio.Barrier(2))
        async with asyncio.timeout(BARRIER_TIMEOUT_S):
            await barrier[0].wait()
        return f"{params.name} met"

    server.enqueue(calls("meet", "a", "b"), Reply.text("done"))

    response = aevaluate(server, tool_prompt(async_tool("meet", meet)), session=Session())

    assert [call.result.message for call in response.tool_calls] == ["a met", "b met"]


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_plain_handlers_marked_safe_run_at_the_same_time_under_evaluate(
    server: FakeProviderServer, make_adapter: Callable[..., Any]
) -> None:
    barrier = threading.Barrier(2, timeout=BARRIER_TIMEOUT_S)

    def meet(params: Step) -> str:
        barrier.wait()
        return f"{params.name} met"

    server.enqueue(calls("meet", "a", "b"), Reply.text("done"))
    prompt = tool_prompt(plain_tool("meet", meet, concurrency_safe=True))

    response = make_adapter().evaluate(prompt, session=Session())

    assert [call.result.message for call in response.tool_calls] == ["a met", "b met"]


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_async_handlers_run_at_the_same_time_under_evaluate(
    server: FakeProviderServer, make_adapter: Callable[..., Any]
) -> None:
    barrier = threading.Barrier(2, timeout=BARRIER_TIMEOUT_S)

    async def meet(params: Step) -> str:
        await asyncio.to_thread(barrier.wait)
        return f"{params.name} met"

    server.enqueue(calls("meet", "a", "b"), Reply.text("done"))

    response = make_adapter().evaluate(tool_prompt(async_tool("meet", meet)), session=Session())

    assert [call.result.message for call in response.tool_calls] == ["a met", "b met"]


def test_plain_handlers_not_marked_safe_run_one_after_another(
    server: FakeProviderServer,
) -> None:
    in_flight = InFlight()

    def work(params: Step) -> str:
        in_flight.enter()
        in_flight.leave()
        return params.name

    server.enqueue(calls("work", "a", "b", "c"), Reply.text("done"))

    aevaluate(server, tool_prompt(plain_tool("work", work)), session=Session())

    assert in_flight.most == 1


def test_a_call_to_a_tool_that_must_run_alone_overlaps_no_other(
    server: FakeProviderServer,
) -> None:
    in_flight = InFlight()
    alone_saw: list[int] = []

    async def together(params: Step) -> str:
        in_flight.enter()
        await asyncio.sleep(0)
        in_flight.leave()
        return params.name

    def alone(params: Step) -> str:
        alone_saw.append(in_flight.now)
        return params.name

    server.enqueue(
        Reply.tool_calls(
            ToolCall("together", {"name": "a"}),
            ToolCall("together", {"name": "b"}),
            ToolCall("alone", {"name": "c"}),
            ToolCall("together", {"name": "d"}),
        ),
        Reply.text("done"),
    )
    prompt = tool_prompt(async_tool("together", together), plain_tool("alone", alone))

    response = aevaluate(server, prompt, session=Session())

    assert alone_saw == [0]
    assert [call.result.message for call in response.tool_calls] == ["a", "b", "c", "d"]


def test_an_async_handler_marked_unsafe_runs_alone(server: FakeProviderServer) -> None:
    in_flight = InFlight()

    async def work(params: Step) -> str:
        in_flight.enter()
        await asyncio.sleep(0)
        in_flight.leave()
        return params.name

    server.enqueue(calls("work", "a", "b", "c"), Reply.text("done"))

    aevaluate(
        server, tool_prompt(async_tool("work", work, concurrency_safe=False)), session=Session()
    )

    assert in_flight.most == 1


def test_no_more_than_tool_concurrency_calls_run_at_once(server: FakeProviderServer) -> None:
    in_flight = InFlight()

    async def work(params: Step) -> str:
        in_flight.enter()
        for _ in range(3):
            await asyncio.sleep(0)
        in_flight.leave()
        return params.name

    server.enqueue(calls("work", "a", "b", "c", "d", "e"), Reply.text("done"))

    aevaluate(server, tool_prompt(async_tool("work", work)), session=Session(), tool_concurrency=2)

    assert in_flight.most == 2


def test_results_keep_the_replys_order_when_calls_finish_out_of_order(
    server: FakeProviderServer,
) -> None:
    finished: list[str] = []
    second_done: list[asyncio.Event] = []

    async def work(params: Step) -> str:
        if not second_done:
            second_done.append(asyncio.Event())
        if params.name == "first":
            await second_done[0].wait()
        else:
            second_done[0].set()
        finished.append(params.name)
        return f"{params.name} result"

    server.enqueue(calls("work", "first", "second"), Reply.text("done"))
    session = Session()

    response = aevaluate(server, tool_prompt(async_tool("work", work)), session=session)

    assert finished == ["second", "first"]
    assert [call.call_id for call in response.tool_calls] == ["first", "second"]
    assert [event.call_id for event in session.select_all(ToolInvoked)] == ["first", "second"]
    sent_back = WIRES[0].tool_results(server.requests[-1].body)
    assert [(call_id, text) for call_id, text, _ in sent_back] == [
        ("first", "first result"),
        ("second", "second result"),
    ]


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_a_stream_reports_every_call_of_a_run_starting_then_finishing_in_order(
    server: FakeProviderServer, wire: Wire, make_adapter: Callable[..., Any]
) -> None:
    async def work(params: Step) -> str:
        return params.name

    server.enqueue(calls("work", "a", "b"), Reply.text("done"))

    events: list[StreamEvent[None]] = list(
        make_adapter().stream(tool_prompt(async_tool("work", work)), session=Session())
    )

    tool_events = [
        (type(event).__name__, event.call_id if isinstance(event, ToolCallStarted) else None)
        for event in events
        if isinstance(event, ToolCallStarted | ToolCallFinished)
    ]
    finished = [event.record.call_id for event in events if isinstance(event, ToolCallFinished)]
    assert tool_events == [
        ("ToolCallStarted", "a"),
        ("ToolCallStarted", "b"),
        ("ToolCallFinished", None),
        ("ToolCallFinished", None),
    ]
    assert finished == ["a", "b"]


def test_calls_running_together_at_the_deadline_are_cancelled_and_named(
    server: FakeProviderServer,
) -> None:
    stopped: list[str] = []

    async def work(params: Step) -> str:
        if params.name == "quick":
            return "quick"
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append(params.name)
        return "never"

    prompt = tool_prompt(async_tool("work", work))
    server.enqueue(Reply.text("warm"), calls("work", "quick", "hang"))
    wire = WIRES[0]

    async def run() -> None:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            # A first evaluation loads the SDK, so the deadline below is spent by the tools.
            await adapter.aevaluate(prompt, session=Session())
            await adapter.aevaluate(prompt, session=Session(), deadline=timedelta(seconds=1))

    with pytest.raises(ProviderTimeoutError, match="while tool 'work' ran"):
        asyncio.run(run())
    assert stopped == ["hang"]
