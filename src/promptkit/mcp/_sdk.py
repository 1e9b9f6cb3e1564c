"""Whether the `mcp` SDK is installed: it comes with the `promptkit[mcp]` extra."""

from __future__ import annotations

from promptkit.errors import McpError


def require_mcp() -> None:
    """Raise McpError, saying how to install it, when the `mcp` package is missing."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise McpError(
            "the MCP server and client need the mcp package: pip install 'promptkit[mcp]'"
        ) from None
