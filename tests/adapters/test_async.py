"""`aevaluate` with the real async SDK clients: the same loop as `evaluate`, many evaluations at
once against one server, and the deadline enforced by the event loop.
"""

import asyncio

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, ProviderTimeoutError, Tool, ToolContext, ToolResult
from promptkit.adapters import ProviderAdapter
from promptkit.session import PromptExecuted, Session, ToolInvoked
from promptkit.testing import FakeProviderServer, RecordedRequest, Reply, ToolCall


class Order(BaseModel):
    number: int


class Echo(BaseModel):
    number: int
    doubled: int


class Double(BaseModel):
    value: int


def double(params: Double, context: ToolContext) -> ToolResult:
    return ToolResult(message=str(params.value * 2), value=params.value * 2)


ORDER_PROMPT: Prompt[Echo] = Prompt(
    ns="tests/adapters",
    key="order",
    sections=(
        MarkdownSection(
            title="Order",
            key="order",
            template="Order number {{ number }}. Double it with the tool.",
            params_type=Order,
            tools=(Tool(name="double", description="Double.", params_type=Double, handler=double),),
        ),
    ),
    output_type=Echo,
)


def test_aevaluate_runs_the_tool_loop_like_evaluate(wire, server: FakeProviderServer) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("double", {"value": 21}, call_id="call_d")),
        Reply.json({"number": 21, "doubled": 42}),
    )
    session = Session()

    async def run() -> Echo | None:
        async with wire.async_client(server) as client:
            adapter: ProviderAdapter = wire.adapter(async_client=client)
            response = await adapter.aevaluate(ORDER_PROMPT, Order(number=21), session=session)
        return response.output

    assert asyncio.run(run()) == Echo(number=21, doubled=42)
    (invoked,) = session.select_all(ToolInvoked)
    assert (invoked.call_id, invoked.value) == ("call_d", 42)
    assert len(session.select_all(PromptExecuted)) == 1
    assert [result[:2] for result in wire.tool_results(server.requests[1].body)] == [
        ("call_d", "42")
    ]


def test_twenty_concurrent_aevaluate_calls_each_get_their_own_answer(
    wire, server: FakeProviderServer
) -> None:
    def answer(request: RecordedRequest) -> Reply:
        # Requests arrive in any order: the reply is computed from what each one asks.
        body = request.body
        number = int(wire.system_text(body).split("Order number ")[1].split(".")[0])
        if not wire.tool_results(body):
            return Reply.tool_calls(ToolCall("double", {"value": number}))
        doubled = int(wire.tool_results(body)[0][1])
        return Reply.json({"number": number, "doubled": doubled})

    server.respond_with(answer)
    session = Session()

    async def run() -> list[Echo | None]:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            responses = await asyncio.gather(
                *(
                    adapter.aevaluate(ORDER_PROMPT, Order(number=n), session=session)
                    for n in range(20)
                )
            )
            return [response.output for response in responses]

    assert asyncio.run(run()) == [Echo(number=n, doubled=2 * n) for n in range(20)]
    assert server.request_count == 40
    assert len(session.select_all(ToolInvoked)) == 20
    assert len(session.select_all(PromptExecuted)) == 20


def test_async_deadline_passed_while_waiting_raises_provider_timeout_error(
    wire, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.delay(5.0, Reply.text("too late")))

    async def run() -> None:
        async with wire.async_client(server, max_retries=2) as client:
            adapter = wire.adapter(async_client=client)
            await adapter.aevaluate(ORDER_PROMPT, Order(number=1), session=Session(), deadline=0.3)

    with pytest.raises(ProviderTimeoutError) as raised:
        asyncio.run(run())

    assert "deadline of 0.3s passed while waiting for" in str(raised.value)


def test_aevaluate_with_only_a_sync_client_asks_for_an_async_one(
    wire, server: FakeProviderServer
) -> None:
    with wire.client(server, max_retries=0, timeout=1.0) as client:
        adapter = wire.adapter(client=client)

        with pytest.raises(ValueError, match="needs an async client"):
            asyncio.run(adapter.aevaluate(ORDER_PROMPT, Order(number=1), session=Session()))

    assert server.request_count == 0
