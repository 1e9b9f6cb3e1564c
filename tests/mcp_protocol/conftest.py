"""Fixtures for the MCP tests: a repository with every kind of file the file tools leave out,
`promptkit mcp serve` as the SDK's client reaches it (a stdio subprocess, a Streamable HTTP
subprocess, or in-process), the small notes server of the client tests, and a bound on every
wait.

Every wait is bounded: an async test body runs under `within` (a timeout), a subprocess is
waited for with a timeout, and the HTTP server's address is read from its stderr with one.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from mcp import StdioServerParameters

from promptkit.cli import main
from promptkit.mcp import McpConnection, McpStdioServer

from ..adapters.conftest import make_adapter, wire  # noqa: F401  (fixtures for the client tests)
from ..conftest import REPO_FILES, committed_repo, offline_env
from ..credentials import PLANTED

T = TypeVar("T")

WAIT_S = 60.0
"""The longest any test waits for a server: far past what a loaded machine needs."""

SECRET = PLANTED[0]
NOTES_SERVER = Path(__file__).with_name("notes_server.py")


def within(coroutine: Coroutine[Any, Any, T], seconds: float = WAIT_S) -> T:
    """Run `coroutine` to its end, failing the test when it takes longer than `seconds`."""

    async def bounded() -> T:
        async with asyncio.timeout(seconds):
            return await coroutine

    return asyncio.run(bounded())


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A committed repository plus what must never be served: a credential file, a planted
    credential inside an ordinary file, and symlinks to a file and a folder outside it."""
    root = committed_repo(
        tmp_path / "repo",
        {**REPO_FILES, "src/demo/settings.py": f"DEBUG = True\n{SECRET.line}\n"},
    )
    (root / ".env").write_text("API_TOKEN=abc123\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("outside the workspace\n", encoding="utf-8")
    (root / "outside-link.txt").symlink_to(tmp_path / "outside.txt")
    (root / "etc-link").symlink_to("/etc")
    return root


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


def store_static_digest(workspace: Path, state_dir: Path) -> None:
    """`promptkit optimize --provider static`: the workspace's session gets a digest."""
    status = main(
        ["optimize", str(workspace), "--provider", "static", "--state-dir", str(state_dir)]
    )
    assert status == 0


def serve_arguments(workspace: Path, state_dir: Path, *options: str) -> list[str]:
    return [
        "-m",
        "promptkit",
        "mcp",
        "serve",
        str(workspace),
        "--state-dir",
        str(state_dir),
        *options,
    ]


def stdio_server(workspace: Path, state_dir: Path, *options: str) -> StdioServerParameters:
    """`promptkit mcp serve` as a stdio subprocess of the SDK's client."""
    return StdioServerParameters(
        command=sys.executable, args=serve_arguments(workspace, state_dir, *options)
    )


@contextmanager
def http_server(workspace: Path, state_dir: Path, *options: str) -> Iterator[str]:
    """`promptkit mcp serve --http 127.0.0.1:0` running in a subprocess; yields its URL, read
    from the line it writes on stderr once it accepts connections, and stops it after."""
    process = subprocess.Popen(
        [
            sys.executable,
            *serve_arguments(workspace, state_dir, "--http", "127.0.0.1:0", *options),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=offline_env(),
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        seen: list[str] = []
        while True:
            line = lines.get(timeout=WAIT_S)
            assert line is not None, f"the server exited before serving: {''.join(seen)}"
            seen.append(line)
            found = re.search(r"http://\S+/mcp", line)
            if found:
                break
        yield found.group()
    finally:
        process.terminate()
        process.wait(timeout=WAIT_S)


def notes_server(notes: Path) -> McpStdioServer:
    """The notes server of the client tests, serving `notes`."""
    return McpStdioServer(
        name="notes", command=sys.executable, args=(str(NOTES_SERVER), str(notes))
    )


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A notes file with a planted credential on one line."""
    path = tmp_path / "notes.txt"
    path.write_text(
        f"deploy: run `make release` from main\nrelease key: {SECRET.value}\n",
        encoding="utf-8",
    )
    return path


def is_running(pid: int) -> bool:
    """Whether process `pid` still exists (a stopped server has been reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def server_pid(connection: McpConnection) -> int:
    """The process id of the notes server behind `connection`."""
    result = connection.call_tool("pid", {}, timeout_s=WAIT_S)
    assert result.structured_content is not None
    return int(result.structured_content["result"])
