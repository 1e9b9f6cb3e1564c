"""The MCP server behind `promptkit mcp serve`, on the official SDK's low-level `Server`.

It speaks MCP and nothing else: what it offers comes from `WorkspaceService` (the tools and the
digest) and `ProjectPrompts` (the project's prompts), so every MCP tool is a promptkit `Tool`
run as a prompt would run it (its params validated, its result masked of credentials) and the
result is bounded in bytes. Each call runs on a worker thread, within `call_timeout_s` (the
tool's `ToolContext` deadline, which the grep tool honours; past it, plus a grace, the caller is
answered and the thread left to finish). A failure a tool reports, or a promptkit error it
raises, is a tool error the agent can read (`isError`); an unknown tool, prompt or resource is a
protocol error. The digest is also the resource `promptkit://workspace/digest`: a run of the
digest tool, so the resource and the tool give the same text, masked and bounded alike.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import PromptkitError, ToolValidationError
from promptkit.logging import get_logger
from promptkit.mcp._results import bounded_text, bounded_value, to_mcp_result
from promptkit.mcp._sdk import require_mcp
from promptkit.mcp._workspace import DIGEST_TOOL, REFRESH_TOOL, ServeOptions, WorkspaceService
from promptkit.prompt import Tool, ToolContext, ToolResult, schema_for_model
from promptkit.secrets import redact_secrets

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.lowlevel import Server

    from promptkit.mcp._prompts import ProjectPrompts

_log = get_logger("promptkit.mcp")

DIGEST_URI = "promptkit://workspace/digest"
DEFAULT_CALL_TIMEOUT_S = 60.0
# How long past a call's deadline the server still waits for its thread before answering.
_GRACE_S = 2.0
SERVER_NAME = "promptkit"


def build_workspace_server(
    options: ServeOptions, *, call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
) -> Server[Any]:
    """The MCP server `promptkit mcp serve` runs for `options`: the workspace and prompt are
    checked now (a promptkit error says what is wrong before anything is served)."""
    require_mcp()
    from promptkit.mcp._prompts import ProjectPrompts

    service = WorkspaceService(options)
    return build_server(service, prompts=ProjectPrompts(service), call_timeout_s=call_timeout_s)


def serve_workspace(
    options: ServeOptions,
    *,
    http: tuple[str, int] | None = None,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Serve `options`' workspace until the client leaves (stdio) or the process is interrupted
    (HTTP at `http`, a (host, port) pair; `on_listening` gets the URL once it accepts)."""
    server = build_workspace_server(options, call_timeout_s=call_timeout_s)
    import anyio

    if http is None:
        anyio.run(serve_stdio, server)
        return
    host, port = http
    anyio.run(partial(serve_http, server, host, port, on_listening=on_listening or _quiet))


def _quiet(url: str) -> None:
    return


def build_server(
    service: WorkspaceService,
    *,
    prompts: ProjectPrompts | None = None,
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
) -> Server[Any]:
    """An MCP server offering `service`'s tools and digest resource, and `prompts`."""
    require_mcp()
    import mcp_types
    from mcp.server.lowlevel import Server

    from promptkit import __version__

    tools = {tool.name: tool for tool in service.tools()}

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(
            tools=[
                _mcp_tool(tool, is_read_only=_is_read_only(tool, service))
                for tool in tools.values()
            ]
        )

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            raise _protocol_error(
                mcp_types.INVALID_PARAMS,
                f"unknown tool {params.name!r}: the tools are {', '.join(sorted(tools))}",
            )
        result = await _run_tool(tool, params.arguments or {}, str(ctx.request_id), call_timeout_s)
        return to_mcp_result(result)

    async def list_resources(ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
        return mcp_types.ListResourcesResult(
            resources=[
                mcp_types.Resource(
                    uri=DIGEST_URI,
                    name="workspace-digest",
                    title="Workspace digest",
                    description=f"The digest of {service.workspace}: where it came from and"
                    " whether the workspace changed since, then the digest itself.",
                    mime_type="text/markdown",
                )
            ]
        )

    async def read_resource(
        ctx: Any, params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult:
        if str(params.uri) != DIGEST_URI:
            raise _protocol_error(
                mcp_types.INVALID_PARAMS,
                f"no resource {params.uri}: the one resource is {DIGEST_URI}",
            )
        # The digest tool's own run: the resource is its text, masked and bounded alike.
        result = await _run_tool(tools[DIGEST_TOOL], {}, str(ctx.request_id), call_timeout_s)
        if not result.success:
            raise _protocol_error(mcp_types.INTERNAL_ERROR, result.message)
        return mcp_types.ReadResourceResult(
            contents=[
                mcp_types.TextResourceContents(
                    uri=DIGEST_URI,
                    mime_type="text/markdown",
                    text=bounded_text(result.message),
                    _meta={"promptkit/digest": bounded_value(result.value)},
                )
            ]
        )

    list_prompts, get_prompt = (
        prompts.handlers() if prompts is not None and prompts.references else (None, None)
    )
    return Server(
        SERVER_NAME,
        version=__version__,
        title="promptkit workspace",
        instructions=_instructions(service),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _instructions(service: WorkspaceService) -> str:
    return (
        f"This server describes the repository at {service.workspace}. Read its digest first"
        f" (the resource {DIGEST_URI} or the workspace_digest tool): it says how current the"
        f" digest is, and {REFRESH_TOOL} writes a fresh one. The vfs_* tools list, find, read"
        " and search the repository's files; paths start at `/`, the repository's root."
        " Credential files, binaries and very large files are left out, and credentials in"
        " results are masked."
    )


def _is_read_only(tool: Tool[Any], service: WorkspaceService) -> bool:
    return tool.name != REFRESH_TOOL or not service.refresh_stores


def _mcp_tool(tool: Tool[Any], *, is_read_only: bool) -> mcp_types.Tool:
    import mcp_types

    return mcp_types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=schema_for_model(tool.parameters_schema),
        annotations=mcp_types.ToolAnnotations(
            read_only_hint=is_read_only,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def _protocol_error(code: int, message: str) -> Exception:
    from mcp import MCPError

    return MCPError(code=code, message=message)


async def _run_tool(
    tool: Tool[Any], arguments: dict[str, Any], call_id: str, timeout_s: float
) -> ToolResult:
    """Run `tool` as the tool loop runs a call; every failure becomes a failed result."""
    import anyio

    try:
        params = tool.parse_arguments(arguments)
    except ToolValidationError as error:
        return ToolResult(
            f"{error}; call it again with arguments that match its schema", success=False
        )
    clock = SYSTEM_CLOCK
    context: ToolContext[Any] = ToolContext(
        prompt_ns="promptkit/mcp",
        prompt_key="serve",
        call_id=call_id,
        deadline=clock.monotonic() + timeout_s,
        clock=clock,
    )
    try:
        with anyio.fail_after(timeout_s + _GRACE_S):
            return await anyio.to_thread.run_sync(
                partial(tool.run, params, context), abandon_on_cancel=True
            )
    except TimeoutError:
        return ToolResult(
            f"{tool.name} did not finish within {timeout_s:g}s and was abandoned: ask for less"
            " (a narrower path or pattern)",
            success=False,
        )
    except PromptkitError as error:
        return ToolResult(str(error), success=False)
    except Exception as error:
        _log.warning(
            "mcp_tool_failed",
            tool=tool.name,
            error_type=type(error).__name__,
            error=redact_secrets(str(error))[:300],
        )
        return ToolResult(
            f"{tool.name} failed with {type(error).__name__}; the server logged it", success=False
        )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin and stdout until stdin closes."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(
    server: Server[Any], host: str, port: int, *, on_listening: Callable[[str], None]
) -> None:
    """Serve Streamable HTTP at `http://host:port/mcp` until interrupted; `on_listening` gets the
    URL once the socket accepts connections (port 0 picks a free port)."""
    import anyio
    import uvicorn

    # The socket is bound here, so the URL (and a port 0 chosen by the system) is known before
    # the first request; DNS rebinding protection is on for a loopback host.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError:
        listener.close()
        raise
    bound_port = listener.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{bound_port}/mcp"
    app = server.streamable_http_app(host=host)
    web = uvicorn.Server(
        uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="on")
    )

    async def announce() -> None:
        while not web.started:
            await anyio.sleep(0.01)
        on_listening(url)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(announce)
        await web.serve(sockets=[listener])
        tasks.cancel_scope.cancel()
