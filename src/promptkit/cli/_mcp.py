"""`promptkit mcp serve [PATH]`: the workspace's digest and file tools for coding agents, over MCP.

Over stdio by default (an agent starts the command and speaks on its stdin and stdout; nothing
else is ever written to stdout), or Streamable HTTP with `--http 127.0.0.1:PORT` (loopback only:
the server has no authentication; port 0 picks a free one, and the URL goes to stderr). The
workspace options are `render`'s, so the digest served is the one `render` shows. Read-only
unless `--allow-writes`, which lets the refresh tool store the digest it writes. What the server
offers is `promptkit.mcp`'s; the guide is docs/mcp.md.
"""

from __future__ import annotations

import argparse
import sys

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
REFRESH_PROVIDERS = ("static", "auto", "openai", "anthropic")


def register(mcp: argparse.ArgumentParser) -> None:
    """Fill in the parser of `promptkit mcp` (`serve`)."""
    from promptkit.cli._options import (
        add_path_argument,
        add_prompt_arguments,
        positive_seconds,
    )

    mcp.description = "Model Context Protocol: serve the workspace to coding agents."
    commands = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve the workspace's digest, file tools and prompts over stdio or HTTP",
        description="Serve the workspace digest (as `promptkit render` resolves it, with its"
        " freshness) as a resource and a tool, the read-only vfs_* file tools, a digest"
        " refresh tool and the project's prompts, over stdio (default) or Streamable HTTP.",
    )
    add_path_argument(serve)
    add_prompt_arguments(serve)
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=_http_address,
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio; HOST must be"
        " loopback (127.0.0.1, localhost or ::1, as [::1]:PORT); PORT 0 picks a free port",
    )
    serve.add_argument(
        "--allow-writes",
        action="store_true",
        help="let the refresh tool store the digest it writes in the workspace's session"
        " (default: read-only, the refreshed digest is only returned)",
    )
    serve.add_argument(
        "--refresh-provider",
        choices=REFRESH_PROVIDERS,
        default="static",
        help="who writes a refreshed digest (default: static, the offline scan: no model call)",
    )
    serve.add_argument(
        "--call-timeout",
        type=positive_seconds,
        default=60.0,
        metavar="SECONDS",
        help="longest a tool call may run (default: 60)",
    )
    serve.set_defaults(handler=run_serve)


def _http_address(value: str) -> tuple[str, int]:
    host, separator, port_text = value.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not separator or not port_text.isdigit() or int(port_text) > 65535:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not HOST:PORT (for example 127.0.0.1:8765, or [::1]:8765)"
        )
    if host not in LOOPBACK_HOSTS:
        raise argparse.ArgumentTypeError(
            f"{host!r} is not a loopback address: the server has no authentication, so it"
            f" listens on {', '.join(LOOPBACK_HOSTS)} only"
        )
    return host, int(port_text)


def run_serve(args: argparse.Namespace) -> int:
    """Check the workspace, then serve until the client leaves or Ctrl-C; the exit status."""
    from promptkit.cli._options import app_stores
    from promptkit.mcp import ServeOptions, serve_workspace

    # The app's stores and tag, where no flag names them: the digest served is the app's.
    stores = app_stores(args, args.path)

    def listening(url: str) -> None:
        where = args.path or "the project's workspace"
        print(f"promptkit mcp: serving {where} at {url} (Ctrl-C stops)", file=sys.stderr)
        sys.stderr.flush()

    serve_workspace(
        ServeOptions(
            path=args.path,
            prompt=args.prompt,
            tag=stores.tag,
            state_dir=args.state_dir,
            overrides_dir=args.overrides_dir,
            allow_writes=args.allow_writes,
            refresh_provider=args.refresh_provider,
            overrides=stores.overrides,
            sessions=stores.sessions,
        ),
        http=args.http,
        call_timeout_s=args.call_timeout,
        on_listening=listening,
    )
    return 0
