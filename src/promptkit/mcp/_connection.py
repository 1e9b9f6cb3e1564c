"""A connection to another MCP server, usable from plain and asyncio code alike.

`McpConnection` owns one thread with an event loop of its own, where the SDK's `Client` is
opened, used and closed by the same task (the SDK's task groups require it). Tool calls from any
thread are sent to that loop and waited for with a timeout, so `evaluate` (whose async handlers
run each on a loop of their own), `aevaluate` and `stream` share one connection, opened once
when the `with` block is entered and closed when it is left, however it is left (a garbage
collected connection is closed too). A server that cannot be started, exits or drops its stream
raises `McpConnectionError`; a protocol error is `McpError`; a call past its time is cancelled
and raises `McpTimeoutError`. Error messages are redacted of credentials like every promptkit
error; a stdio server gets only the SDK's safe environment plus the variables given.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from promptkit._names import require_key
from promptkit.errors import (
    ArgumentValueError,
    InvalidStateError,
    McpConnectionError,
    McpError,
    McpTimeoutError,
)
from promptkit.mcp._sdk import require_mcp

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

DEFAULT_CONNECT_TIMEOUT_S = 30.0
_CLOSE_TIMEOUT_S = 10.0
_HTTP_TIMEOUT_S = 30.0
_HTTP_READ_TIMEOUT_S = 300.0
# The MCP error code the SDK raises for every request pending when the connection closes.
_CONNECTION_CLOSED = -32000


@dataclass(frozen=True)
class McpStdioServer:
    """An MCP server started as `command args...`, spoken to on its stdin and stdout.

    `name` labels the server in tool names, logs and errors. `env` is added to the SDK's safe
    environment (PATH, HOME and the like: never the caller's API keys unless named here).
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    def __post_init__(self) -> None:
        require_key(self.name, what="MCP server name", error=ArgumentValueError)
        object.__setattr__(self, "args", tuple(self.args))

    def describe(self) -> str:
        return f"MCP server {self.name!r} (command {self.command})"


@dataclass(frozen=True)
class McpHttpServer:
    """An MCP server at a Streamable HTTP `url`; `headers` go with every request (an
    `Authorization` header, say) and never into a log or an error."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        require_key(self.name, what="MCP server name", error=ArgumentValueError)

    def describe(self) -> str:
        return f"MCP server {self.name!r} ({self.url})"


McpServerSpec = McpStdioServer | McpHttpServer


@dataclass(frozen=True)
class McpToolInfo:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


class McpConnection:
    """An open connection to `server` (see the module doc): enter it with `with` or
    `async with`; `tools` is what the server listed when it was opened."""

    def __init__(
        self, server: McpServerSpec, *, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    ) -> None:
        self.server = server
        self.connect_timeout_s = connect_timeout_s
        self._state: _LoopState | None = None
        self._tools: tuple[McpToolInfo, ...] | None = None
        self.instructions: str | None = None

    @property
    def name(self) -> str:
        return self.server.name

    @property
    def is_open(self) -> bool:
        return self._state is not None and not self._state.is_closed

    @property
    def tools(self) -> tuple[McpToolInfo, ...]:
        """The tools the server listed; InvalidStateError before the connection is opened."""
        if self._tools is None:
            raise InvalidStateError(
                f"{self.server.describe()} is not connected: open it first"
                " (`with connect_mcp(server) as connection:`)"
            )
        return self._tools

    def open(self) -> Self:
        """Start the server (or reach it), initialise the session and list its tools."""
        if self._state is not None:
            raise InvalidStateError(f"{self.server.describe()}: the connection was opened already")
        state = _LoopState(self.server)
        self._state = state
        weakref.finalize(self, state.close)
        try:
            listed, instructions = state.start(self.connect_timeout_s)
        except BaseException:
            state.close()
            raise
        self._tools = listed
        self.instructions = instructions
        return self

    def close(self) -> None:
        """End the session and stop the server (a stdio server is terminated); idempotent."""
        if self._state is not None:
            self._state.close()

    def call_tool(
        self, name: str, arguments: Mapping[str, Any], *, timeout_s: float
    ) -> mcp_types.CallToolResult:
        """Call the server's tool `name`, waiting at most `timeout_s` seconds."""
        state = self._state
        if state is None or state.is_closed:
            raise McpConnectionError(
                f"{self.server.describe()} is not connected: call its tools inside the"
                " `with connect_mcp(...)` block"
            )
        return state.call(name, dict(arguments), timeout_s)

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        # The connection's own thread does the work; this task only waits for it.
        return await asyncio.to_thread(self.open)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.close)


def connect_mcp(
    server: McpServerSpec, *, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
) -> McpConnection:
    """A connection to `server`, opened when its `with` (or `async with`) block is entered."""
    if not isinstance(server, McpStdioServer | McpHttpServer):
        from promptkit.errors import ArgumentTypeError

        raise ArgumentTypeError(
            f"connect_mcp needs an McpStdioServer or McpHttpServer, got {type(server).__name__}"
        )
    return McpConnection(server, connect_timeout_s=connect_timeout_s)


class _LoopState:
    """The connection's thread, loop and client; nothing here refers back to the connection, so
    a connection nobody holds can be garbage collected and closed."""

    def __init__(self, server: McpServerSpec) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None
        self.client: Client | None = None
        self.closing: asyncio.Event | None = None
        self.lost: BaseException | None = None
        self.is_closed = False
        # Orders the loop's start against close(): one that comes first finds the other.
        self.lock = threading.Lock()
        self.opened: concurrent.futures.Future[tuple[tuple[McpToolInfo, ...], str | None]] = (
            concurrent.futures.Future()
        )
        self.thread = threading.Thread(
            target=self._run, name=f"promptkit-mcp-{server.name}", daemon=True
        )

    def start(self, timeout_s: float) -> tuple[tuple[McpToolInfo, ...], str | None]:
        require_mcp()
        self.thread.start()
        try:
            return self.opened.result(timeout=timeout_s)
        except TimeoutError:
            raise McpConnectionError(
                f"{self.server.describe()} did not answer within {timeout_s:g}s of starting:"
                " check the command or URL, or raise connect_timeout_s"
            ) from None

    def _run(self) -> None:
        asyncio.run(self._own())

    async def _own(self) -> None:
        """Open the client, hand out its tools, hold it open until asked to close."""
        with self.lock:
            if self.is_closed:
                self.opened.cancel()
                return
            self.loop = asyncio.get_running_loop()
            self.task = asyncio.current_task()
            self.closing = asyncio.Event()
        try:
            async with _client(self.server) as client:
                listed = await _list_tools(client)
                self.client = client
                self.opened.set_result((listed, client.instructions))
                await self.closing.wait()
        except BaseException as error:
            if not self.opened.done():
                self.opened.set_exception(_connect_failure(self.server, error))
            else:
                self.lost = error
        finally:
            self.client = None

    def call(
        self, name: str, arguments: dict[str, Any], timeout_s: float
    ) -> mcp_types.CallToolResult:
        loop, client = self.loop, self.client
        if loop is None or client is None:
            raise McpConnectionError(
                f"{self.server.describe()} went away before {name!r} was called"
                f"{_cause_text(_flatten(self.lost) if self.lost else None)}; open a new connection"
            )
        future = asyncio.run_coroutine_threadsafe(client.call_tool(name, arguments), loop)
        try:
            return future.result(timeout=max(timeout_s, 0.0))
        except TimeoutError:
            future.cancel()
            raise McpTimeoutError(
                f"{self.server.describe()}: tool {name!r} did not answer within {timeout_s:.3g}s"
                " and was cancelled"
            ) from None
        except concurrent.futures.CancelledError:
            raise McpConnectionError(
                f"{self.server.describe()} was closed while {name!r} ran"
            ) from None
        except Exception as error:
            raise _call_failure(self.server, name, error) from error

    def close(self) -> None:
        with self.lock:
            if self.is_closed:
                return
            self.is_closed = True
            loop = self.loop
        if loop is not None and not loop.is_closed():
            # The loop may end on its own meanwhile (the server went away).
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._stop)
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout=_CLOSE_TIMEOUT_S)

    def _stop(self) -> None:
        """On the loop: an open client is closed in order; one still starting (a server that
        never answers `initialize`) is cancelled, which stops its process too."""
        if self.client is not None and self.closing is not None:
            self.closing.set()
        elif self.task is not None:
            self.task.cancel()


@contextlib.asynccontextmanager
async def _client(server: McpServerSpec) -> AsyncIterator[Client]:
    """The SDK's client for `server`, open; a stdio server is stopped and an HTTP client of
    ours closed when the block ends."""
    import mcp_types
    from mcp import Client, StdioServerParameters

    from promptkit import __version__

    info = mcp_types.Implementation(name="promptkit", version=__version__)
    if isinstance(server, McpStdioServer):
        parameters = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            env=dict(server.env) or None,
            cwd=server.cwd,
        )
        async with Client(parameters, client_info=info) as client:
            yield client
        return
    if not server.headers:
        async with Client(server.url, client_info=info) as client:
            yield client
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # The SDK leaves a client it was given open, so this one is closed here. Its time limits
    # are the SDK's own: a response stream may stay open for minutes between events.
    timeout = httpx2.Timeout(_HTTP_TIMEOUT_S, read=_HTTP_READ_TIMEOUT_S)
    async with (
        httpx2.AsyncClient(headers=dict(server.headers), timeout=timeout) as http,
        Client(streamable_http_client(server.url, http_client=http), client_info=info) as client,
    ):
        yield client


async def _list_tools(client: Client) -> tuple[McpToolInfo, ...]:
    listed: list[McpToolInfo] = []
    cursor: str | None = None
    # A server that pages forever cannot hold the connection open: 100 pages is plenty.
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        listed.extend(
            McpToolInfo(tool.name, tool.description or tool.title or tool.name, tool.input_schema)
            for tool in page.tools
        )
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(listed)


def _cause_text(error: BaseException | None) -> str:
    return f" ({type(error).__name__}: {error})" if error is not None else ""


def _connect_failure(server: McpServerSpec, error: BaseException) -> McpConnectionError:
    detail = _flatten(error)
    return McpConnectionError(
        f"{server.describe()} could not be started or initialised: {type(detail).__name__}:"
        f" {detail}; check the command (or URL) and that it speaks MCP"
    )


def _call_failure(server: McpServerSpec, name: str, error: BaseException) -> McpError:
    from mcp import MCPError

    detail = _flatten(error)
    if isinstance(detail, MCPError) and detail.code != _CONNECTION_CLOSED:
        return McpError(
            f"{server.describe()} refused {name!r}: {detail.message} (code {detail.code})"
        )
    return McpConnectionError(
        f"{server.describe()} went away while {name!r} ran ({type(detail).__name__}: {detail});"
        " it exited or closed the connection: open a new connection"
    )


def _flatten(error: BaseException) -> BaseException:
    """The first leaf of an exception group (the SDK's task groups wrap what failed)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
