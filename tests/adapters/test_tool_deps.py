"""Async tool handlers and dependencies: an `async def` handler runs under `evaluate` and
`aevaluate`, and `ToolContext` carries the application's `deps` and the session."""

import asyncio
import threading
from dataclasses import dataclass
from datetime import timedelta

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.errors import ProviderTimeoutError
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from .conftest import WIRES


@dataclass(frozen=True)
class Inventory:
    stock: dict[str, int]


class Item(BaseModel):
    name: str


async def count_stock(params: Item, context: ToolContext[Inventory]) -> ToolResult:
    await asyncio.sleep(0)
    return ToolResult(message=str(context.deps.stock.get(params.name, 0)))


def session_id_of(params: Item, context: ToolContext) -> ToolResult:
    return ToolResult(message=context.session.session_id)


PROMPT: Prompt[None] = Prompt(
    ns="tests/deps",
    key="stock",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Check the stock.",
            tools=(
                Tool(name="stock", description="Stock.", params_type=Item, handler=count_stock),
                Tool(
                    name="session", description="Session.", params_type=Item, handler=session_id_of
                ),
            ),
        ),
    ),
)
INVENTORY = Inventory(stock={"bolts": 12})


def test_async_handler_gets_the_deps_under_evaluate(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("stock", {"name": "bolts"})), Reply.text("12"))

    response = make_adapter().evaluate(PROMPT, session=Session(), deps=INVENTORY)

    assert [call.result.message for call in response.tool_calls] == ["12"]
    assert response.tool_calls[0].success


def test_async_handler_gets_the_deps_under_aevaluate(server: FakeProviderServer) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("stock", {"name": "bolts"})), Reply.text("12"))
    wire = WIRES[0]

    async def run() -> str:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            response = await adapter.aevaluate(PROMPT, session=Session(), deps=INVENTORY)
        return response.tool_calls[0].result.message

    assert asyncio.run(run()) == "12"


def test_handler_context_carries_the_evaluations_session(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("session", {"name": "x"})), Reply.text("done"))
    session = Session()

    response = make_adapter().evaluate(PROMPT, session=session)

    assert response.tool_calls[0].result.message == session.session_id


def test_an_async_handler_still_running_at_the_deadline_is_cancelled(
    server: FakeProviderServer,
) -> None:
    stopped: list[bool] = []

    async def wait_forever(params: Item, context: ToolContext) -> ToolResult:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append(True)
        return ToolResult(message="never reached")

    hanging = Prompt(
        ns="tests/deps",
        key="hang",
        sections=(
            MarkdownSection(
                title="Task",
                key="task",
                template="Wait.",
                tools=(
                    Tool(name="hang", description="Hang.", params_type=Item, handler=wait_forever),
                ),
            ),
        ),
    )
    server.enqueue(Reply.text("warm"), Reply.tool_calls(ToolCall("hang", {"name": "x"})))
    wire = WIRES[0]

    async def run() -> None:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            # A first evaluation loads the SDK, so the deadline below is spent by the tool alone.
            await adapter.aevaluate(hanging, session=Session())
            await adapter.aevaluate(hanging, session=Session(), deadline=timedelta(seconds=1))

    with pytest.raises(ProviderTimeoutError, match="while tool 'hang' ran"):
        asyncio.run(run())
    assert stopped == [True]


def _blocking_prompt(started: threading.Event, released: threading.Event) -> Prompt[None]:
    def block(params: Item, context: ToolContext) -> ToolResult:
        started.set()
        released.wait()
        return ToolResult(message="never reached in time")

    return Prompt(
        ns="tests/deps",
        key="block",
        sections=(
            MarkdownSection(
                title="Task",
                key="task",
                template="Wait.",
                tools=(Tool(name="block", description="Block.", params_type=Item, handler=block),),
            ),
        ),
    )


@pytest.mark.parametrize("wire", ["chat"], indirect=True)
def test_a_blocking_handler_still_running_at_the_deadline_is_left_behind(
    server: FakeProviderServer, make_adapter
) -> None:
    started, released = threading.Event(), threading.Event()
    server.enqueue(Reply.tool_calls(ToolCall("block", {"name": "x"})))
    try:
        with pytest.raises(ProviderTimeoutError, match="while tool 'block' ran"):
            make_adapter().evaluate(
                _blocking_prompt(started, released), session=Session(), deadline=1.0
            )

        # The evaluation ended while the handler was still blocked: nothing waited for it.
        assert started.is_set() and not released.is_set()
    finally:
        released.set()


def test_a_blocking_handler_under_aevaluate_is_left_behind_at_the_deadline(
    server: FakeProviderServer,
) -> None:
    started, released = threading.Event(), threading.Event()
    prompt = _blocking_prompt(started, released)
    server.enqueue(Reply.tool_calls(ToolCall("block", {"name": "x"})))
    wire = WIRES[0]

    async def run() -> None:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            await adapter.aevaluate(prompt, session=Session(), deadline=timedelta(seconds=1))

    try:
        with pytest.raises(ProviderTimeoutError, match="while tool 'block' ran"):
            asyncio.run(run())

        assert started.is_set() and not released.is_set()
    finally:
        released.set()
