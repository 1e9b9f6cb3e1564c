"""A small MCP server whose one tool has the input schema it is given, for the client tests.

`python schema_server.py SCHEMA_JSON` serves over stdio, on the SDK's low-level server (which
takes a schema as it is, valid or not): `echo` answers with the arguments it was sent, as JSON,
and `calls` says how many times `echo` was called, so a test can tell a call never arrived.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SCHEMA: dict[str, Any] = json.loads(sys.argv[1])
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
echoed: list[dict[str, Any]] = []


async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(
        tools=[
            mcp_types.Tool(name="echo", description="Say the arguments back.", input_schema=SCHEMA),
            mcp_types.Tool(name="calls", description="How often echo ran.", input_schema=EMPTY),
        ]
    )


async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    if params.name == "echo":
        echoed.append(dict(params.arguments or {}))
        text = json.dumps(params.arguments or {}, sort_keys=True)
    else:
        text = str(len(echoed))
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])


async def main() -> None:
    server: Server[Any] = Server("schema", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
