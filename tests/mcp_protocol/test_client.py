"""Another MCP server's tools in a prompt: a real server (the SDK's, `notes_server.py`, started as
a subprocess) and a model played by `FakeProviderServer` behind the real openai and anthropic
SDK clients.

The tools run as promptkit's own do: in `evaluate`, `aevaluate` and `stream`, with credential
masking, time limits, tracing and the response's tool-call records; a server that dies mid-call
is a typed error, never a hang; the server is stopped however the `with` block is left.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from structlog.testing import capture_logs

from promptkit.adapters import ResponseCompleted, ToolCallFinished, ToolCallRecord
from promptkit.errors import (
    InvalidStateError,
    McpConnectionError,
    PromptValidationError,
)
from promptkit.mcp import (
    McpConnection,
    McpStdioServer,
    McpToolsSection,
    connect_mcp,
)
from promptkit.prompt import Prompt, TextSection
from promptkit.session import Session, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from ..adapters.conftest import WIRES, MakeAdapter, Wire
from .conftest import SECRET, WAIT_S, is_running, notes_server, server_pid, within


def notes_prompt(connection: McpConnection, **section: Any) -> Prompt[None]:
    return Prompt(
        ns="tests/mcp",
        key="notes",
        sections=(
            TextSection(title="Task", key="task", text="Answer from the team's notes."),
            McpToolsSection(connection=connection, **section),
        ),
    )


def offered_tool_names(wire: Wire, body: dict[str, Any]) -> set[str]:
    if wire.name == "chat":
        return {tool["function"]["name"] for tool in body["tools"]}
    return {tool["name"] for tool in body["tools"]}


def test_a_prompt_runs_a_tool_round_with_a_real_mcp_server(
    server: FakeProviderServer, make_adapter: MakeAdapter, wire: Wire, notes: Path
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("notes_lookup", {"term": "deploy"})),
        Reply.text("Run `make release` from main."),
    )

    with connect_mcp(notes_server(notes)) as connection:
        response = make_adapter().evaluate(notes_prompt(connection), session=Session())

    (call,) = response.tool_calls
    assert (call.name, call.success) == ("notes_lookup", True)
    assert call.result.message == "deploy: run `make release` from main"
    first, second = server.requests
    assert offered_tool_names(wire, first.body) == {
        "notes_lookup",
        "notes_pid",
        "notes_crash",
        "notes_wait_forever",
    }
    assert "`notes_lookup`: Find the notes that mention a term." in wire.system_text(first.body)
    ((_, sent_back, _),) = wire.tool_results(second.body)
    assert "make release" in str(sent_back)
    assert response.text == "Run `make release` from main."


def test_stream_runs_the_same_tool_round(
    server: FakeProviderServer, make_adapter: MakeAdapter, notes: Path
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("notes_lookup", {"term": "deploy"})), Reply.text("ok"))

    with connect_mcp(notes_server(notes)) as connection:
        events = list(make_adapter().stream(notes_prompt(connection), session=Session()))

    finished = [event for event in events if isinstance(event, ToolCallFinished)]
    assert [event.record.result.message for event in finished] == [
        "deploy: run `make release` from main"
    ]
    assert isinstance(events[-1], ResponseCompleted)


def aevaluate_with_notes(server: FakeProviderServer, notes: Path, wire: Wire) -> ToolCallRecord:
    """The one tool call of `aevaluate` on the notes prompt, over `wire`'s async SDK client."""

    async def run() -> ToolCallRecord:
        async with (
            connect_mcp(notes_server(notes)) as connection,
            wire.async_client(server) as client,
        ):
            adapter = wire.adapter(async_client=client)
            response = await adapter.aevaluate(
                notes_prompt(connection), session=Session(), deadline=WAIT_S
            )
        (call,) = response.tool_calls
        return call

    return within(run())


def test_aevaluate_calls_the_servers_tools_from_asyncio(
    server: FakeProviderServer, notes: Path
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("notes_lookup", {"term": "deploy"})), Reply.text("ok"))

    call = aevaluate_with_notes(server, notes, WIRES[2])

    assert call.result.message == "deploy: run `make release` from main"


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_credentials_in_a_servers_result_never_reach_the_model_or_the_session(
    server: FakeProviderServer, make_adapter: MakeAdapter, notes: Path
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("notes_lookup", {"term": "release"})), Reply.text("ok")
    )
    session = Session()

    with connect_mcp(notes_server(notes)) as connection:
        response = make_adapter().evaluate(notes_prompt(connection), session=session)

    message = response.tool_calls[0].result.message
    assert SECRET.value not in message and "[REDACTED:" in message
    assert all(SECRET.value.encode() not in request.raw_body for request in server.requests)
    (invoked,) = session.select_all(ToolInvoked)
    assert SECRET.value not in invoked.result_message


@pytest.mark.parametrize("wire", ["messages"], indirect=True)
def test_a_server_that_dies_mid_call_is_a_typed_error_not_a_hang(
    server: FakeProviderServer, make_adapter: MakeAdapter, notes: Path
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("notes_crash", {})), Reply.text("the notes are gone"))

    with connect_mcp(notes_server(notes)) as connection, capture_logs() as logs:
        response = make_adapter().evaluate(
            notes_prompt(connection), session=Session(), deadline=WAIT_S
        )
        with pytest.raises(McpConnectionError, match="went away"):
            connection.call_tool("lookup", {"term": "deploy"}, timeout_s=WAIT_S)

    (call,) = response.tool_calls
    assert not call.success
    assert "McpConnectionError" in call.result.message
    (failed,) = [log for log in logs if log["event"] == "tool_handler_failed"]
    assert failed["error_type"] == "McpConnectionError"
    assert "'notes'" in failed["error"] and "went away while 'crash' ran" in failed["error"]


def test_a_server_that_dies_mid_call_in_aevaluate_fails_the_call_without_a_hang(
    server: FakeProviderServer, notes: Path
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("notes_crash", {})), Reply.text("the notes are gone"))

    call = aevaluate_with_notes(server, notes, WIRES[0])

    assert not call.success
    assert "McpConnectionError" in call.result.message


@pytest.mark.parametrize("wire", ["chat"], indirect=True)
def test_a_call_past_its_time_limit_is_cancelled_and_fails(
    server: FakeProviderServer, make_adapter: MakeAdapter, notes: Path
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("notes_wait_forever", {})), Reply.text("gave up"))

    with connect_mcp(notes_server(notes)) as connection:
        response = make_adapter().evaluate(
            notes_prompt(connection, call_timeout_s=0.5), session=Session()
        )
        still_answers = connection.call_tool("lookup", {"term": "deploy"}, timeout_s=WAIT_S)

    (call,) = response.tool_calls
    assert not call.success
    assert "did not answer within 0.5s and was cancelled" in call.result.message
    assert not still_answers.is_error


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_mcp_tool_calls_are_traced_like_promptkit_tools(
    server: FakeProviderServer,
    make_adapter: MakeAdapter,
    notes: Path,
    spans: InMemorySpanExporter,
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("notes_lookup", {"term": "deploy"})), Reply.text("ok"))

    with connect_mcp(notes_server(notes)) as connection:
        make_adapter().evaluate(notes_prompt(connection), session=Session())

    (tool_span,) = [span for span in spans.get_finished_spans() if span.name.startswith("execute")]
    assert tool_span.name == "execute_tool notes_lookup"


def test_the_server_is_stopped_when_the_block_is_left_by_an_error(notes: Path) -> None:
    with pytest.raises(LookupError), connect_mcp(notes_server(notes)) as connection:
        pid = server_pid(connection)
        raise LookupError("the application failed")

    assert not connection.is_open
    assert not is_running(pid)
    with pytest.raises(McpConnectionError, match="not connected"):
        connection.call_tool("lookup", {"term": "x"}, timeout_s=WAIT_S)


def test_a_command_that_is_not_an_mcp_server_is_a_typed_connection_error() -> None:
    silent = McpStdioServer(name="silent", command=sys.executable, args=("-c", "pass"))

    with pytest.raises(McpConnectionError, match=r"'silent'.*could not be started or initialised"):
        connect_mcp(silent, connect_timeout_s=WAIT_S).open()


def test_tool_names_are_prefixed_so_two_servers_tools_never_clash(notes: Path) -> None:
    with connect_mcp(notes_server(notes)) as connection:
        prompt = Prompt(
            ns="tests/mcp",
            key="two",
            sections=(
                McpToolsSection(connection=connection, include=("lookup",)),
                McpToolsSection(
                    connection=connection, prefix="archive", key="archive", include=("lookup",)
                ),
            ),
        )

    assert [tool.name for tool in prompt.render().tools] == ["notes_lookup", "archive_lookup"]


def test_a_tool_the_server_does_not_list_is_refused_when_the_section_is_built(
    notes: Path,
) -> None:
    with (
        connect_mcp(notes_server(notes)) as connection,
        pytest.raises(PromptValidationError, match="has no tool search"),
    ):
        McpToolsSection(connection=connection, include=("search",))


def test_a_section_needs_an_open_connection(notes: Path) -> None:
    with pytest.raises(InvalidStateError, match="is not connected: open it first"):
        McpToolsSection(connection=connect_mcp(notes_server(notes)))


def test_an_async_with_block_opens_and_closes_the_connection(notes: Path) -> None:
    async def run() -> McpConnection:
        async with connect_mcp(notes_server(notes)) as connection:
            assert connection.is_open
            assert {tool.name for tool in connection.tools} >= {"lookup", "pid"}
            return connection

    assert not asyncio.run(run()).is_open
