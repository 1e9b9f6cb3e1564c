"""`promptkit repl [PATH] --prompt module:attr`: the workspace REPL for any prompt with a digest.

The loop itself is `promptkit.cli.workspace_repl.WorkspaceRepl`; this module only adds the
subcommand. `--prompt` names the prompt as for `optimize` and `render`; without it the built-in
workspace prompt is used.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add `repl` to the `promptkit` parser."""
    from promptkit.cli.options import add_repl_arguments

    parser = subparsers.add_parser(
        "repl",
        help="an interactive loop over a prompt: optimize, ask, digest, overrides, history",
        description="Read commands from the terminal or piped stdin and run them against a"
        " prompt with a workspace digest section: optimize [session|global], ask MESSAGE,"
        " digest, overrides, history, help, quit. The exit status is 1 when any command failed.",
    )
    add_repl_arguments(parser, prompt_option=True)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the REPL; returns the exit status."""
    from promptkit.cli.workspace_repl import run_repl

    return run_repl(args)
