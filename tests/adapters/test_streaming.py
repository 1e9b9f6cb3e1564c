"""`stream` and `astream` through the real SDK clients against FakeProviderServer's
server-sent events, for each wire API: ordered deltas across a tool round, the same
`PromptResponse` as `evaluate`, the deadline while a reply streams, output retries."""

import asyncio

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, ProviderTimeoutError, Tool, ToolContext, ToolResult
from promptkit.adapters import (
    ResponseCompleted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)
from promptkit.session import PromptExecuted, Session, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage


class Port(BaseModel):
    port: str


class Tide(BaseModel):
    port: str
    high_water: str


def tide(params: Port, context: ToolContext) -> ToolResult:
    return ToolResult(message=f"high water at {params.port}: 14:05")


SECTION = MarkdownSection(
    title="Task",
    key="task",
    template="Tell the tide.",
    tools=(Tool(name="tide", description="Tide table.", params_type=Port, handler=tide),),
)
PROMPT: Prompt[None] = Prompt(ns="tests/streaming", key="tide", sections=(SECTION,))
TIDE_PROMPT: Prompt[Tide] = Prompt(
    ns="tests/streaming", key="tide-json", sections=(SECTION,), output_type=Tide
)
ANSWER = "High water in Brest is at 14:05 today."


def _script(server: FakeProviderServer) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("tide", {"port": "Brest"}, call_id="call_1"),
            usage=Usage(input_tokens=30, output_tokens=8),
        ),
        Reply.text(ANSWER, usage=Usage(input_tokens=50, output_tokens=12)),
    )


def test_streamed_tool_round_arrives_in_order_and_ends_in_the_evaluate_response(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    adapter = make_adapter()
    _script(server)
    expected = adapter.evaluate(PROMPT, session=Session())
    _script(server)

    events = list(adapter.stream(PROMPT, session=Session()))

    kinds = [type(event).__name__ for event in events]
    first_delta = kinds.index("TextDelta")
    assert kinds[:first_delta] == [
        "UsageReported",
        "ToolCallStarted",
        "ToolCallFinished",
    ]
    assert set(kinds[first_delta:-2]) == {"TextDelta"}
    assert kinds[-2:] == ["UsageReported", "ResponseCompleted"]
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == ANSWER
    assert {event.request for event in events if isinstance(event, TextDelta)} == {2}
    started = events[1]
    assert isinstance(started, ToolCallStarted) and started.name == "tide"
    finished = events[2]
    assert isinstance(finished, ToolCallFinished)
    assert finished.record.result.message == "high water at Brest: 14:05"
    completed = events[-1]
    assert isinstance(completed, ResponseCompleted)
    assert completed.response == expected
    assert server.requests[-1].body["stream"] is True


def test_stream_records_the_same_session_events_as_evaluate(
    server: FakeProviderServer, make_adapter
) -> None:
    _script(server)
    session = Session()

    list(make_adapter().stream(PROMPT, session=session))

    assert len(session.select_all(ToolInvoked)) == 1
    executed = session.select_all(PromptExecuted)
    assert [e.text for e in executed] == [ANSWER]
    assert (executed[0].input_tokens, executed[0].output_tokens) == (80, 20)


def test_stream_reports_usage_per_reply(server: FakeProviderServer, make_adapter) -> None:
    _script(server)

    events = list(make_adapter().stream(PROMPT, session=Session()))

    usage = [(e.request, e.usage.output_tokens) for e in events if isinstance(e, UsageReported)]
    assert usage == [(1, 8), (2, 12)]


def test_streamed_output_retry_reaches_a_parsed_response(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.json({"port": "Brest"}), Reply.json({"port": "Brest", "high_water": "14:05"})
    )

    events = list(make_adapter().stream(TIDE_PROMPT, session=Session()))

    completed = events[-1]
    assert isinstance(completed, ResponseCompleted)
    assert completed.response.output == Tide(port="Brest", high_water="14:05")
    assert server.request_count == 2


def test_deadline_holds_while_a_reply_streams(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.delay(5.0, Reply.text("too late")))

    with pytest.raises(ProviderTimeoutError) as raised:
        list(make_adapter().stream(PROMPT, session=Session(), deadline=0.3))

    assert "deadline of 0.3s passed" in str(raised.value)


def test_nothing_is_sent_until_the_first_event_is_read(
    server: FakeProviderServer, make_adapter
) -> None:
    events = make_adapter().stream(PROMPT, session=Session())

    assert server.request_count == 0
    del events


def test_astream_yields_the_same_events_as_stream(wire, server: FakeProviderServer) -> None:
    async def run() -> list[object]:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            return [event async for event in adapter.astream(PROMPT, session=Session())]

    _script(server)
    events = asyncio.run(run())

    deltas = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert deltas == ANSWER
    completed = events[-1]
    assert isinstance(completed, ResponseCompleted) and completed.response.text == ANSWER
    assert [type(e).__name__ for e in events[:3]] == [
        "UsageReported",
        "ToolCallStarted",
        "ToolCallFinished",
    ]


def test_astream_deadline_holds_while_a_reply_streams(server: FakeProviderServer, wire) -> None:
    server.enqueue(Reply.delay(5.0, Reply.text("too late")))

    async def run() -> None:
        async with wire.async_client(server) as client:
            adapter = wire.adapter(async_client=client)
            async for _event in adapter.astream(PROMPT, session=Session(), deadline=0.3):
                pass

    with pytest.raises(ProviderTimeoutError):
        asyncio.run(run())
