"""`promptkit render`: print a prompt as a model would receive it, digest included.

The prompt binds to the session most recently stored for the workspace (a new, empty one when
there is none) and renders with the overrides store and tag, so the digest resolves exactly as
`WorkspaceDigestSection` does: the session's digest, the prompt's own override, a shared
override, then the placeholder (with its warning). Where the digest came from goes to stderr.
`--params` gives the prompt's params as JSON, so a prompt with required params renders too.
"""

from __future__ import annotations

import argparse
import sys


def register(parser: argparse.ArgumentParser) -> None:
    """Fill in the parser of `promptkit render`."""
    from promptkit.cli._options import add_params_argument, add_path_argument, add_prompt_arguments

    parser.description = (
        "Print a prompt rendered with the session stored for the workspace and the overrides,"
        " showing the workspace digest it would use."
    )
    add_path_argument(parser)
    # The positional PATH is the one name for the workspace; --workspace still works.
    parser.add_argument("--workspace", dest="workspace_option", help=argparse.SUPPRESS)
    add_prompt_arguments(parser)
    add_params_argument(parser)
    parser.set_defaults(handler=run_render)


def run_render(args: argparse.Namespace) -> int:
    """Render and print; returns the exit status."""
    from promptkit.cli._options import bind_command_workspace
    from promptkit.digest import WorkspaceDigestSection, resolve_workspace_digest
    from promptkit.prompt import params_from_json

    bound, _ = bind_command_workspace(args, args.workspace_option or args.path)
    prompt, store, tag = bound.prompt, bound.overrides, bound.tag
    params = (
        params_from_json(prompt.params_types, args.params, prompt_name=prompt.display_name)
        if args.params is not None
        else ()
    )
    rendered = prompt.render(*params, overrides_store=store, tag=tag)
    if isinstance(prompt.find_section(WorkspaceDigestSection), WorkspaceDigestSection):
        resolution = resolve_workspace_digest(prompt, overrides_store=store, tag=tag)
        print(f"promptkit render: workspace digest from the {resolution.source}", file=sys.stderr)
    print(rendered.text)
    return 0
