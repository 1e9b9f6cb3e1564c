"""A model's arguments for another server's tool are checked against that server's JSON schema
before the call: what breaks it goes back to the model as invalid arguments, as for any tool,
and the server never sees the call. The server (`schema_server.py`, a subprocess) offers one
tool with the schema each test gives it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from promptkit.errors import PromptValidationError, ToolValidationError
from promptkit.mcp import McpConnection, McpStdioServer, McpToolsSection, connect_mcp
from promptkit.prompt import Prompt, TextSection, Tool
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from ..adapters.conftest import MakeAdapter
from .conftest import WAIT_S

SCHEMA_SERVER = Path(__file__).with_name("schema_server.py")

TERM_SCHEMA = {
    "type": "object",
    "properties": {
        "term": {"type": "string", "maxLength": 8},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["term"],
}


def schema_server(schema: dict[str, Any]) -> McpStdioServer:
    return McpStdioServer(
        name="schema", command=sys.executable, args=(str(SCHEMA_SERVER), json.dumps(schema))
    )


def echo_tool(connection: McpConnection) -> Tool[Any]:
    (tool,) = McpToolsSection(connection=connection, include=("echo",)).tools
    return tool


@pytest.fixture(scope="module")
def term_echo() -> Tool[Any]:
    """The `echo` tool of a server whose schema is TERM_SCHEMA (checking needs no connection)."""
    with connect_mcp(schema_server(TERM_SCHEMA)) as connection:
        return echo_tool(connection)


def echo_calls(connection: McpConnection) -> int:
    result = connection.call_tool("calls", {}, timeout_s=WAIT_S)
    return int(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_arguments_that_break_the_schema_go_back_to_the_model_and_never_reach_the_server(
    server: FakeProviderServer, make_adapter: MakeAdapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("schema_echo", {"term": "far too long a term"})),
        Reply.tool_calls(ToolCall("schema_echo", {"term": "short"})),
        Reply.text("done"),
    )

    with connect_mcp(schema_server(TERM_SCHEMA)) as connection:
        prompt = Prompt(
            ns="tests/mcp",
            key="schema",
            sections=(
                TextSection(title="Task", key="task", text="Echo a term."),
                McpToolsSection(connection=connection, include=("echo",)),
            ),
        )
        response = make_adapter().evaluate(prompt, session=Session(), deadline=WAIT_S)
        calls = echo_calls(connection)

    refused, answered = response.tool_calls
    assert not refused.success
    assert refused.result.message.startswith(
        "tool 'schema_echo': invalid arguments: term: 'far too long a term' is too long"
    )
    assert "call the tool again with arguments that match its schema" in refused.result.message
    assert (answered.success, answered.result.message) == (True, '{"term": "short"}')
    assert calls == 1


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "<root>: 'term' is a required property"),
        ({"term": 5}, "term: 5 is not of type 'string'"),
        ({"term": "ok", "limit": 0}, "limit: 0 is less than the minimum of 1"),
        ('{"term": "ok", "limit": "many"}', "limit: 'many' is not of type 'integer'"),
    ],
)
def test_each_problem_is_named_by_its_path(
    term_echo: Tool[Any], arguments: Any, problem: str
) -> None:
    with pytest.raises(ToolValidationError) as raised:
        term_echo.parse_arguments(arguments)

    assert str(raised.value) == f"tool 'schema_echo': invalid arguments: {problem}"


def test_arguments_that_match_the_schema_pass_unchanged(term_echo: Tool[Any]) -> None:
    params = term_echo.parse_arguments({"term": "ok", "limit": 3})

    assert params.model_dump(mode="json") == {"term": "ok", "limit": 3}


def test_a_tool_whose_schema_is_not_json_schema_is_refused_when_the_section_is_built() -> None:
    broken = {"type": "object", "properties": {"term": {"type": "text"}}}

    with (
        connect_mcp(schema_server(broken)) as connection,
        pytest.raises(PromptValidationError) as raised,
    ):
        McpToolsSection(connection=connection)

    message = str(raised.value)
    assert "the input schema of tool 'echo' is not a valid JSON schema" in message
    assert "leave the tool out with include=" in message


def test_a_reference_the_schema_cannot_resolve_leaves_the_check_to_the_server() -> None:
    # Resolving it would mean fetching it: nothing is fetched, and the server decides.
    remote = {
        "type": "object",
        "properties": {"term": {"$ref": "https://schemas.example/term.json"}},
    }
    with connect_mcp(schema_server(remote)) as connection:
        tool = echo_tool(connection)

    params = tool.parse_arguments({"term": 5})

    assert params.model_dump(mode="json") == {"term": 5}
