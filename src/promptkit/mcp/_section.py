"""`McpToolsSection`: another MCP server's tools, offered to the model as promptkit `Tool`s.

Each tool the server listed becomes a `Tool` named `<prefix>_<name>` (lower-cased, other
characters as `_`, so two servers' `search` tools never clash), whose JSON schema is the
server's own and whose handler calls the server through the section's open `McpConnection`.
Being ordinary tools, they run under everything the tool loop gives promptkit's own tools, in
`evaluate`, `aevaluate`, `stream` and `astream` alike: the evaluation's deadline (a call gets
at most the time left, then is cancelled), the bounds on tool calls per reply and tool rounds,
the byte bound on results, credential masking, tracing spans, the `ToolInvoked` events and the
response's tool-call records. The server's text blocks become the result message and its
structured content the value; `isError` makes a failed result. Arguments are checked against the
server's schema before the call (`promptkit.mcp._schema`): what breaks it goes back to the model
as invalid arguments, as for any tool, and the server is not called. A protocol error (an
argument the server still refuses) goes back as a failed result the model can correct; a server
that went away raises `McpConnectionError`, which the loop reports as a failed call and logs.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict

from promptkit.errors import (
    ArgumentTypeError,
    McpConnectionError,
    McpError,
    McpTimeoutError,
    PromptValidationError,
    ToolValidationError,
)
from promptkit.mcp._connection import McpConnection, McpToolInfo
from promptkit.mcp._results import MAX_RESULT_BYTES, from_mcp_result
from promptkit.mcp._schema import ArgumentsSchema
from promptkit.prompt import RenderContext, Section, Tool, ToolContext, ToolResult

DEFAULT_CALL_TIMEOUT_S = 60.0
_NOT_TOOL_NAME = re.compile(r"[^a-z0-9_-]")
_TOOL_NAME_LIMIT = 64

_GUIDANCE = """\
The tools named below come from the MCP server `{server}`: call them as you would any other
tool. Their results are the server's own, with credentials masked."""


@dataclass(frozen=True, kw_only=True, eq=False)
class McpToolsSection(Section):
    """The tools of `connection` (opened), named `<prefix>_<tool>`; `prefix` defaults to the
    server's name. `include` names the server's tools to offer (default: all). A call waits at
    most `call_timeout_s`, or the time left before the evaluation's deadline when that is less;
    `max_result_bytes` bounds what a result passes on."""

    connection: McpConnection
    prefix: str | None = None
    include: tuple[str, ...] = ()
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    max_result_bytes: int = MAX_RESULT_BYTES
    title: str = "MCP tools"
    key: str = "mcp-tools"
    tools: tuple[Tool[Any], ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.connection, McpConnection):
            raise ArgumentTypeError(
                f"McpToolsSection needs connection=<an McpConnection from connect_mcp>, got"
                f" {type(self.connection).__name__}"
            )
        if not self.call_timeout_s > 0 or self.max_result_bytes < 1:
            raise PromptValidationError(
                f"section {self.key!r}: call_timeout_s and max_result_bytes must be positive"
            )
        prefix = self.prefix if self.prefix is not None else _tool_name_part(self.connection.name)
        if not prefix or _NOT_TOOL_NAME.search(prefix):
            raise PromptValidationError(
                f"section {self.key!r}: prefix {prefix!r} must be a-z, 0-9, '_' or '-'"
            )
        object.__setattr__(self, "prefix", prefix)
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "tools", self._offered_tools(prefix))
        super().__post_init__()

    def _offered_tools(self, prefix: str) -> tuple[Tool[Any], ...]:
        listed = {tool.name: tool for tool in self.connection.tools}
        missing = sorted(set(self.include) - set(listed))
        if missing:
            raise PromptValidationError(
                f"section {self.key!r}: {self.connection.server.describe()} has no tool"
                f" {', '.join(missing)} (it lists: {', '.join(sorted(listed)) or 'none'})"
            )
        chosen = [listed[name] for name in self.include] if self.include else list(listed.values())
        tools: dict[str, Tool[Any]] = {}
        for info in chosen:
            name = f"{prefix}_{_tool_name_part(info.name)}"
            if len(name) > _TOOL_NAME_LIMIT:
                raise PromptValidationError(
                    f"section {self.key!r}: the tool name {name!r} is longer than"
                    f" {_TOOL_NAME_LIMIT} characters: choose a shorter prefix, or leave"
                    f" {info.name!r} out with include="
                )
            if name in tools:
                raise PromptValidationError(
                    f"section {self.key!r}: two of the server's tools become {name!r}: offer"
                    " one of them with include="
                )
            tools[name] = ServerTool(
                name=name,
                description=info.description,
                params_type=_arguments_type(info),
                handler=partial(self._call, info.name),
                arguments_schema=ArgumentsSchema.compile(
                    info.input_schema, tool=info.name, server=self.connection.server.describe()
                ),
            )
        return tuple(tools.values())

    def original_body_template(self) -> str:
        return _GUIDANCE

    def render_body(self, params: Any, context: RenderContext) -> str:
        return self.resolve_body(params, None, context)

    def resolve_body(self, params: Any, override: str | None, context: RenderContext) -> str:
        guidance = override if override is not None else _GUIDANCE
        lines = [f"- `{tool.name}`: {_first_line(tool.description)}" for tool in self.tools]
        return "\n\n".join([guidance.replace("{server}", self.connection.name), "\n".join(lines)])

    def _call(self, server_tool: str, params: BaseModel, context: ToolContext) -> ToolResult:
        remaining = context.remaining_s()
        timeout = self.call_timeout_s if remaining is None else min(self.call_timeout_s, remaining)
        arguments = params.model_dump(mode="json")
        try:
            result = self.connection.call_tool(server_tool, arguments, timeout_s=timeout)
        except McpTimeoutError as error:
            return ToolResult(str(error), success=False)
        except McpConnectionError:
            raise
        except McpError as error:
            return ToolResult(f"{error}; call it again with arguments it accepts", success=False)
        return from_mcp_result(result, self.max_result_bytes)


@dataclass(frozen=True, kw_only=True, eq=False)
class ServerTool(Tool[BaseModel, Any]):
    """A tool of another MCP server: its arguments must also match the server's own schema."""

    arguments_schema: ArgumentsSchema = field(repr=False)

    def parse_arguments(self, arguments: str | Mapping[str, Any]) -> BaseModel:
        params = super().parse_arguments(arguments)
        problems = self.arguments_schema.problems(params.model_dump(mode="json"))
        if problems is not None:
            raise ToolValidationError(f"tool {self.name!r}: invalid arguments: {problems}")
        return params


def _tool_name_part(name: str) -> str:
    return _NOT_TOOL_NAME.sub("_", name.lower())


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _arguments_type(info: McpToolInfo) -> type[BaseModel]:
    """A params type whose JSON schema is the server's input schema and which accepts any JSON
    object: `ServerTool` checks the arguments against that schema."""
    schema = copy.deepcopy(dict(info.input_schema))

    class McpArguments(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
            return copy.deepcopy(schema)

    McpArguments.__name__ = McpArguments.__qualname__ = f"McpArguments_{_tool_name_part(info.name)}"
    return McpArguments
