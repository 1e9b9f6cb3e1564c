"""A connection to another MCP server is opened once, used by any number of runs, and closed
however its block is left; a server that never answers is stopped, not waited for; a server
reached over Streamable HTTP works as a stdio one does, and its headers stay out of errors.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import pytest

from promptkit.adapters import ToolCallFinished
from promptkit.errors import McpConnectionError
from promptkit.mcp import McpHttpServer, McpStdioServer, McpToolsSection, connect_mcp
from promptkit.prompt import Prompt, TextSection
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from ..adapters.conftest import MakeAdapter
from .conftest import SECRET, WAIT_S, http_server, is_running, notes_server, server_pid, within

# Writes its pid to the file it is given, then reads stdin and never answers.
MUTE_SERVER = "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); sys.stdin.read()"


def test_a_server_that_never_answers_initialize_is_stopped_when_the_wait_ends(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "mute.pid"
    mute = McpStdioServer(
        name="mute", command=sys.executable, args=("-c", MUTE_SERVER, str(pid_file))
    )

    with pytest.raises(McpConnectionError, match=r"'mute'.*did not answer within 5s"):
        connect_mcp(mute, connect_timeout_s=5).open()

    assert not is_running(int(pid_file.read_text(encoding="utf-8")))


def test_one_connection_serves_several_runs(
    server: FakeProviderServer, make_adapter: MakeAdapter, notes: Path
) -> None:
    for _ in range(2):
        server.enqueue(Reply.tool_calls(ToolCall("notes_pid", {})), Reply.text("ok"))

    with connect_mcp(notes_server(notes)) as connection:
        prompt = Prompt(
            ns="tests/mcp", key="pid", sections=(McpToolsSection(connection=connection),)
        )
        first = make_adapter().evaluate(prompt, session=Session())
        second = make_adapter().evaluate(prompt, session=Session())

    assert first.tool_calls[0].result.message == second.tool_calls[0].result.message


@pytest.mark.parametrize("wire", ["chat"], indirect=True)
def test_the_server_is_stopped_when_the_block_is_left_with_a_stream_unfinished(
    server: FakeProviderServer, make_adapter: MakeAdapter, notes: Path
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("notes_pid", {})), Reply.text("never read"))

    with connect_mcp(notes_server(notes)) as connection:
        pid = server_pid(connection)
        prompt = Prompt(
            ns="tests/mcp", key="pid", sections=(McpToolsSection(connection=connection),)
        )
        for event in make_adapter().stream(prompt, session=Session()):
            if isinstance(event, ToolCallFinished):
                break

    assert not is_running(pid)


def test_the_server_is_stopped_when_an_async_block_is_left_by_an_error(notes: Path) -> None:
    async def run() -> int:
        async with connect_mcp(notes_server(notes)) as connection:
            pid = await asyncio.to_thread(server_pid, connection)
            raise LookupError(pid)

    with pytest.raises(LookupError) as raised:
        within(run())

    assert not is_running(raised.value.args[0])


def test_a_prompt_uses_the_tools_of_a_server_over_streamable_http(
    server: FakeProviderServer, make_adapter: MakeAdapter, workspace: Path, state_dir: Path
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("repo_vfs_grep", {"pattern": "make test"})),
        Reply.text("Run `make test`."),
    )

    with http_server(workspace, state_dir) as url:
        repo = McpHttpServer(name="repo", url=url, headers={"Authorization": "Bearer local"})
        with connect_mcp(repo) as connection:
            prompt = Prompt(
                ns="tests/mcp",
                key="http",
                sections=(
                    TextSection(title="Task", key="task", text="How are the tests run?"),
                    McpToolsSection(connection=connection, include=("vfs_grep",)),
                ),
            )
            response = make_adapter().evaluate(prompt, session=Session(), deadline=WAIT_S)

    (call,) = response.tool_calls
    assert call.success
    assert call.result.message.startswith("/README.md:")


def test_headers_stay_out_of_a_connection_error_and_the_servers_repr() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port any more: the connection is refused.
    closed = McpHttpServer(
        name="closed",
        url=f"http://127.0.0.1:{port}/mcp",
        headers={"Authorization": f"Bearer {SECRET.value}"},
    )

    with pytest.raises(McpConnectionError) as raised:
        connect_mcp(closed, connect_timeout_s=WAIT_S).open()

    assert "'closed'" in str(raised.value)
    assert SECRET.value not in str(raised.value)
    assert SECRET.value not in repr(closed)
