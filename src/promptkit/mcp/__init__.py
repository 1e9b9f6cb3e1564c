"""The Model Context Protocol, both ways, on the official `mcp` SDK (the `promptkit[mcp]` extra).

- Server: `serve_workspace` (what `promptkit mcp serve` runs) offers coding agents the workspace
  digest, resolved as `promptkit render` resolves it and with its freshness, as a resource and a
  tool; the read-only `vfs_*` file tools with the VFS section's confinement, left-out files,
  credential masking and bounds; a digest refresh (the static writer unless configured; stored
  only when the server allows writes); and the project's prompts. `build_workspace_server` gives
  the SDK server itself, for an application that runs it its own way.
- Client: `connect_mcp` opens a connection to another MCP server (`McpStdioServer`, a command;
  `McpHttpServer`, a URL) and `McpToolsSection` offers its tools to a model in `evaluate` and
  `stream`, as promptkit `Tool`s under the run's deadline, bounds, masking and tracing.

The SDK is imported only when a server is built or a connection opened. The guide is docs/mcp.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.mcp._connection import (
        McpConnection as McpConnection,
        McpHttpServer as McpHttpServer,
        McpStdioServer as McpStdioServer,
        McpToolInfo as McpToolInfo,
        connect_mcp as connect_mcp,
    )
    from promptkit.mcp._section import McpToolsSection as McpToolsSection
    from promptkit.mcp._server import (
        DIGEST_URI as DIGEST_URI,
        build_workspace_server as build_workspace_server,
        serve_workspace as serve_workspace,
    )
    from promptkit.mcp._workspace import ServeOptions as ServeOptions
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.mcp._connection": (
                "McpConnection",
                "McpHttpServer",
                "McpStdioServer",
                "McpToolInfo",
                "connect_mcp",
            ),
            "promptkit.mcp._section": ("McpToolsSection",),
            "promptkit.mcp._server": ("DIGEST_URI", "build_workspace_server", "serve_workspace"),
            "promptkit.mcp._workspace": ("ServeOptions",),
        },
    )
