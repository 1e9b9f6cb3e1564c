"""Builds the argument parser from the subcommand modules and runs the chosen command.

A failure the user or the machine can fix is one line on stderr with an exit status from
`promptkit.failures`; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from promptkit import __version__
from promptkit.errors import PromptkitError
from promptkit.failures import EXIT_INTERRUPTED, describe_failure

# Subcommand modules, each exposing `register(subparsers)`; imported only when the CLI runs.
COMMAND_MODULES: tuple[str, ...] = (
    "promptkit.cli.optimize",
    "promptkit.cli.render",
    "promptkit.cli.digest",
    "promptkit.cli.overrides",
    "promptkit.cli.repl",
    "promptkit.cli.eval",
)


def build_parser() -> argparse.ArgumentParser:
    """The full `promptkit` parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="promptkit",
        description="Typed prompts, workspace digests and prompt overrides.",
    )
    parser.add_argument("--version", action="version", version=f"promptkit {__version__}")
    parser.add_argument(
        "--log-format",
        choices=("console", "json"),
        default="console",
        help="how log records are written to stderr (default: console)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        help="lowest level of log record shown: debug, info, warning, error (default: warning)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from promptkit.logging import configure

    configure(format=args.log_format, level=args.log_level)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        status: int = handler(args)
    except (PromptkitError, OSError, UnicodeError, RuntimeError) as error:
        failure = describe_failure(error)
        if failure is None:
            raise
        print(f"promptkit: error: {failure.message}", file=sys.stderr)
        return failure.status
    except KeyboardInterrupt:
        print("promptkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return status
