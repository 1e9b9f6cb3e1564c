"""The Model Context Protocol, on the official `mcp` SDK (the `promptkit[mcp]` extra).

- Server: `serve_workspace` (what `promptkit mcp serve` runs) offers coding agents the workspace
  digest, resolved as `promptkit render` resolves it and with its freshness, as a resource and a
  tool; the read-only `vfs_*` file tools with the VFS section's confinement, left-out files,
  credential masking and bounds; a digest refresh (the static writer unless configured; stored
  only when the server allows writes); and the project's prompts. `build_workspace_server` gives
  the SDK server itself, for an application that runs it its own way.

The SDK is imported only when a server is built or a connection opened. The guide is docs/mcp.md.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the declared imports

if TYPE_CHECKING:
    from promptkit.mcp._server import (
        DIGEST_URI as DIGEST_URI,
        build_workspace_server as build_workspace_server,
        serve_workspace as serve_workspace,
    )
    from promptkit.mcp._workspace import ServeOptions as ServeOptions
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__)
