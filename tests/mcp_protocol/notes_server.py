"""A small MCP server, written with the SDK, that the client tests start as a subprocess.

`python notes_server.py NOTES_FILE` serves over stdio: `lookup` returns the lines of NOTES_FILE
holding a term, `pid` says the server's process id, `crash` ends the process in the middle of
the call, and `wait_forever` never answers.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from mcp.server import MCPServer

server: MCPServer = MCPServer("notes", log_level="WARNING")
NOTES = Path(sys.argv[1]) if len(sys.argv) > 1 else None


@server.tool()
def lookup(term: str) -> str:
    """Find the notes that mention a term."""
    lines = NOTES.read_text(encoding="utf-8").splitlines() if NOTES else []
    found = [line for line in lines if term.lower() in line.lower()]
    return "\n".join(found) or f"no note mentions {term!r}"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def wait_forever() -> str:
    """Never answer."""
    threading.Event().wait()
    return "unreachable"


if __name__ == "__main__":
    server.run()
