"""`promptkit render`: print a prompt as a model would receive it, digest included.

The prompt binds to the session most recently stored for the workspace (a new, empty one when
there is none) and renders with the overrides store and tag, so the digest resolves exactly as
`WorkspaceDigestSection` does: the session's digest, the prompt's own override, a shared
override, then the placeholder (with its warning). Where the digest came from goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add `render` to the `promptkit` parser."""
    from promptkit.cli.options import add_prompt_arguments

    parser = subparsers.add_parser(
        "render",
        help="print a prompt rendered with the workspace's session and overrides",
        description="Print a prompt rendered with the session stored for the workspace and the"
        " overrides, showing the workspace digest it would use.",
    )
    parser.add_argument(
        "--workspace", default=".", metavar="PATH", help="workspace directory (default: .)"
    )
    add_prompt_arguments(parser)
    parser.set_defaults(handler=run_render)


def run_render(args: argparse.Namespace) -> int:
    """Render and print; returns the exit status."""
    from promptkit.digest import WorkspaceDigestSection, resolve_workspace_digest
    from promptkit.discovery.workspace import bind_workspace

    bound = bind_workspace(
        args.workspace,
        prompt=args.prompt,
        state_dir=args.state_dir,
        overrides_dir=args.overrides_dir,
    )
    prompt, store = bound.prompt, bound.overrides
    rendered = prompt.render(overrides_store=store, tag=args.tag)
    if isinstance(prompt.find_section(WorkspaceDigestSection), WorkspaceDigestSection):
        origin = resolve_workspace_digest(prompt, overrides_store=store, tag=args.tag).origin
        print(f"promptkit render: workspace digest from the {origin}", file=sys.stderr)
    print(rendered.text)
    return 0
