"""Async tool handlers and dependencies: an `async def` handler runs under `evaluate` and
`aevaluate`, and `ToolContext` carries the application's `deps` and the session. Deps are
typed: a tool's handler says what it reads (`ToolContext[Inventory]`), its prompt declares a
deps type every such tool can use, and a call without them, or with another type, fails before
anything is sent."""

import asyncio
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.errors import DepsError, PromptValidationError, ProviderTimeoutError
from promptkit.session import PromptRendered, Session
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


PROMPT: Prompt[None, Inventory] = Prompt(
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
    deps_type=Inventory,
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

    response = make_adapter().evaluate(PROMPT, session=session, deps=INVENTORY)

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


def stock_prompt(*tools: Tool[Item, Any], deps_type: Any = None) -> Prompt[None, Any]:
    return Prompt(
        ns="tests/deps",
        key="typed",
        sections=(MarkdownSection(title="Task", key="task", template="Count.", tools=tools),),
        deps_type=deps_type,
    )


STOCK_TOOL = Tool(name="stock", description="Stock.", params_type=Item, handler=count_stock)


def test_a_prompt_whose_tool_reads_deps_must_declare_a_deps_type() -> None:
    with pytest.raises(PromptValidationError) as raised:
        stock_prompt(STOCK_TOOL)

    assert str(raised.value) == (
        "prompt tests/deps/typed: tool 'stock' (section task) reads deps of type Inventory, but"
        " the prompt declares no deps type; pass deps_type=Inventory to Prompt(...)"
    )


def test_a_prompt_declaring_deps_a_tool_cannot_use_is_refused() -> None:
    with pytest.raises(
        PromptValidationError, match=r"tool 'stock' .* reads deps of type Inventory"
    ):
        stock_prompt(STOCK_TOOL, deps_type=str)


@dataclass(frozen=True)
class Warehouse(Inventory):
    site: str = "north"


def test_a_deps_type_serves_every_tool_reading_it_or_a_base_of_it(
    server: FakeProviderServer, make_adapter
) -> None:
    async def site_of(params: Item, context: ToolContext[Warehouse]) -> ToolResult:
        return ToolResult(message=context.deps.site)

    site = Tool(name="site", description="Site.", params_type=Item, handler=site_of)
    prompt = stock_prompt(STOCK_TOOL, site, deps_type=Warehouse)
    server.enqueue(
        Reply.tool_calls(ToolCall("stock", {"name": "bolts"}), ToolCall("site", {"name": "x"})),
        Reply.text("done"),
    )

    response = make_adapter().evaluate(
        prompt, session=Session(), deps=Warehouse(stock={"bolts": 3})
    )

    assert [call.result.message for call in response.tool_calls] == ["3", "north"]


def test_a_call_without_the_deps_a_tool_needs_fails_before_anything_is_sent(
    server: FakeProviderServer, make_adapter
) -> None:
    session = Session()

    with pytest.raises(DepsError) as raised:
        make_adapter().evaluate(PROMPT, session=session)

    assert str(raised.value) == (
        "prompt tests/deps/stock needs deps of type Inventory (read by tool 'stock') and the call"
        " passed none; pass deps=Inventory(...) to the call (or bind them in the App)"
    )
    assert server.request_count == 0
    assert session.select_all(PromptRendered) == ()


def test_deps_of_another_type_fail_the_call_before_anything_is_sent(
    server: FakeProviderServer, make_adapter
) -> None:
    with pytest.raises(DepsError, match=r"needs deps of type Inventory .*; the call passed a str"):
        make_adapter().evaluate(PROMPT, session=Session(), deps="oops")

    assert server.request_count == 0


def test_a_stream_without_the_deps_fails_before_anything_is_sent(
    server: FakeProviderServer, make_adapter
) -> None:
    with pytest.raises(DepsError, match="read by tool 'stock'"):
        make_adapter().stream(PROMPT, session=Session())

    assert server.request_count == 0


async def read_unseen(
    params: Item,
    context: "ToolContext[Unseen]",  # type: ignore[name-defined]  # noqa: F821
) -> ToolResult:
    return ToolResult(message="never runs")


def test_a_deps_type_only_a_type_checker_sees_is_still_needed(
    server: FakeProviderServer, make_adapter
) -> None:
    unseen = Tool(name="unseen", description="Unseen.", params_type=Item, handler=read_unseen)

    with pytest.raises(PromptValidationError, match="reads deps of type Unseen"):
        stock_prompt(unseen)
    prompt = stock_prompt(unseen, deps_type=Inventory)
    with pytest.raises(DepsError, match="read by tool 'unseen'"):
        make_adapter().evaluate(prompt, session=Session())

    assert server.request_count == 0


def test_a_tool_run_directly_without_the_deps_it_needs_says_so() -> None:
    context: ToolContext[Inventory] = ToolContext("tests/deps", "stock", "call-1")

    with pytest.raises(DepsError, match="tool 'stock' needs deps of type Inventory"):
        STOCK_TOOL.run(Item(name="bolts"), context)


def test_a_handler_reading_no_deps_needs_none() -> None:
    def plain(params: Item, context: ToolContext) -> ToolResult:
        return ToolResult(message="ok")

    def untyped(params, context):
        return ToolResult(message="ok")

    tools = [
        Tool(name="plain", description="Plain.", params_type=Item, handler=plain),
        Tool(name="untyped", description="Untyped.", params_type=Item, handler=untyped),
        Tool(
            name="lambda",
            description="Lambda.",
            params_type=Item,
            handler=lambda p, c: ToolResult("ok"),
        ),
    ]

    assert [tool.deps_need for tool in tools] == [None, None, None]
    assert stock_prompt(*tools).deps_type is None


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
