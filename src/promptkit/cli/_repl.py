"""`promptkit repl [PATH] --prompt module:attr`: the workspace REPL for any prompt with a digest.

The loop itself is `promptkit.repl.WorkspaceRepl`; this module adds the subcommand and
`run_repl`, which opens a REPL from the parsed options (`promptkit.cli._options.add_repl_arguments`)
for `promptkit repl` and for REPLs built on `WorkspaceRepl`, such as the code-review example.
`--prompt` names the prompt as for `optimize` and `render`; without it the built-in workspace
prompt is used.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptkit.discovery import PromptSource
    from promptkit.repl import WorkspaceRepl


def register(parser: argparse.ArgumentParser) -> None:
    """Fill in the parser of `promptkit repl`."""
    from promptkit.cli._options import add_repl_arguments

    parser.description = (
        "Read commands from the terminal or piped stdin and run them against a prompt with a"
        " workspace digest section: optimize [session|global], ask MESSAGE, digest, overrides,"
        " history, help, quit. The exit status is 1 when any command failed."
    )
    add_repl_arguments(parser, prompt_option=True)
    parser.set_defaults(handler=run_repl)


def run_repl(
    args: argparse.Namespace,
    *,
    repl_type: type[WorkspaceRepl] | None = None,
    prompt_source: PromptSource | None = None,
) -> int:
    """Open a REPL from parsed `add_repl_arguments` options and run it to the end.

    `repl_type` defaults to `WorkspaceRepl`. `prompt_source` is used as given; without it
    `args.prompt` is resolved (the built-in workspace prompt when that is None too). Returns the
    exit status.
    """
    from promptkit.cli._options import app_stores, command_writer
    from promptkit.discovery import workspace_options
    from promptkit.repl import ReplSetup, WorkspaceRepl

    stores = app_stores(args, args.path)
    app = stores.app
    options = workspace_options(
        args.path,
        prompt=prompt_source if prompt_source is not None else getattr(args, "prompt", None),
        state_dir=args.state_dir,
        overrides_dir=args.overrides_dir,
        tag=stores.tag,
        overrides=stores.overrides,
        sessions=stores.sessions,
    )
    choice = command_writer(args, options.config, app)
    repl = (repl_type or WorkspaceRepl).open(
        ReplSetup(
            workspace=options.workspace,
            prompt_source=options.prompt_source,
            choice=choice,
            overrides=options.overrides,
            tag=options.tag,
            state=options.sessions,
            app=app,
            optimize_deadline=args.deadline,
            fallback_static=args.fallback_static,
            gate=args.gate,
        )
    )
    with repl:
        try:
            return repl.run()
        except BrokenPipeError:
            # The reader went away (`... | head`): stop quietly. stdout is pointed at devnull
            # so the interpreter's own flush at exit does not fail with a traceback either.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
