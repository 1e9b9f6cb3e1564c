"""Builds the argument parser from the subcommand modules and runs the chosen command.

Conventions every subcommand follows, so the command line reads the same everywhere:
- global options (`--log-level`, `--log-format`) go before or after the subcommand;
- a failure the user or the machine can fix is one line on stderr with an exit status from
  `promptkit.failures` (2 for a bad option value or input), never a traceback; anything else is
  a bug and keeps its traceback;
- every `--help` ends with an example and the exit statuses (`HELP_EXAMPLES` below);
- a command with work to start in other processes at once (optimize's listing helper) sets a
  `head_start` default: a context manager factory called with the parsed arguments before
  logging is set up (which imports structlog), left when the command ends.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn

from promptkit import __version__
from promptkit.errors import PromptkitError
from promptkit.failures import EXIT_INTERRUPTED, describe_failure

# Each command and its module, which exposes `register(subparsers)` adding that one command;
# imported only when the CLI runs, and only the named one when a command line names one.
COMMAND_MODULES: dict[str, str] = {
    "optimize": "promptkit.cli.optimize",
    "render": "promptkit.cli.render",
    "digest": "promptkit.cli.digest",
    "overrides": "promptkit.cli.overrides",
    "repl": "promptkit.cli.repl",
    "eval": "promptkit.cli.eval",
    "mcp": "promptkit.cli.mcp",
}

LOG_LEVELS = ("debug", "info", "warning", "error")

EXIT_STATUSES = """\
exit status:
  0    success
  1    the command ran and found problems (overrides check/list) or a REPL command failed
  2    bad usage, or an error (one line on stderr says what, where and what to do)
  65   input is not UTF-8 text
  66   a needed file, folder or program does not exist
  73   a path that must be a folder is a file, or a symlink loop
  74   the disk is full, a file-size limit was hit, or the filesystem is read-only
  77   permission denied
  130  interrupted"""

# One example per command, shown at the end of its --help (keyed by the command's words).
HELP_EXAMPLES: dict[str, str] = {
    "": "promptkit optimize . --provider static && promptkit render .",
    "optimize": "promptkit optimize . --provider static --json",
    "render": 'promptkit render . --prompt app.prompts:review --params \'{"request": "Fix it"}\'',
    "digest": "promptkit digest status . --json",
    "digest status": "promptkit digest status . --json",
    "overrides": "promptkit overrides check --overrides-dir overrides --prompt app.prompts:review",
    "overrides promote": "promptkit overrides promote app.prompts:review --from candidate"
    " --min-score 0.8",
    "eval": "promptkit eval app.prompts:review --dataset evals/review.jsonl --tag latest"
    " --tag candidate --json",
    "repl": "printf 'optimize\\nask What is this?\\n' | promptkit repl . --provider static",
    "mcp": "promptkit mcp serve . --http 127.0.0.1:8765",
    "mcp serve": "claude mcp add promptkit -- promptkit mcp serve /path/to/repo",
}


class PromptkitArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _add_global_options(parser: argparse.ArgumentParser, *, at_top: bool) -> None:
    # After the subcommand the defaults are SUPPRESS, so an option given there overrides the
    # one before it and an absent one leaves it alone.
    def default(value: str) -> str:
        return value if at_top else argparse.SUPPRESS

    parser.add_argument(
        "--log-format",
        choices=("console", "json"),
        default=default("console"),
        help="how log records are written to stderr (default: console)",
    )
    parser.add_argument(
        "--log-level",
        type=str.lower,
        choices=LOG_LEVELS,
        default=default("warning"),
        help="lowest level of log record shown (default: warning)",
    )


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `promptkit` parser: with every subcommand registered, or, when `argv` names a
    command, with that one only (its parsing and help are the same; the other modules' imports,
    a prompt stack and evaluation libraries, are not paid by a command that never uses them)."""
    parser = PromptkitArgumentParser(
        prog="promptkit",
        description="Typed prompts, workspace digests and prompt overrides.",
    )
    parser.add_argument("--version", action="version", version=f"promptkit {__version__}")
    _add_global_options(parser, at_top=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = [word for word in argv or () if word in COMMAND_MODULES][:1]
    for command_name in named or COMMAND_MODULES:
        importlib.import_module(COMMAND_MODULES[command_name]).register(subparsers)
    for words, command in _commands(parser, ()):
        if words:
            _add_global_options(command, at_top=False)
        example = HELP_EXAMPLES.get(" ".join(words[:2])) or HELP_EXAMPLES.get(
            words[0] if words else ""
        )
        command.epilog = "\n\n".join(
            part
            for part in (command.epilog, example and f"example:\n  {example}", EXIT_STATUSES)
            if part
        )
        command.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """`parser` and every subcommand parser below it, with the words that select each."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.prog.split()[-1] == name:  # aliases share their parser; visit it once
                    yield from _commands(sub, (*words, name))


def _configure_logging(args: argparse.Namespace) -> None:
    """Route log records as `--log-format` and `--log-level` say.

    structlog imports rich, when it is installed, for the tracebacks it can render: a twentieth
    of a second, and the CLI's records never use them (promptkit formats and redacts every
    exception before a renderer sees it). So structlog is imported here as if rich were absent;
    rich stays importable for anything imported later.
    """
    hides_rich = "rich" not in sys.modules and "structlog" not in sys.modules
    if hides_rich:
        sys.modules["rich"] = None  # type: ignore[assignment]  # `import rich` fails meanwhile
    try:
        from promptkit.logging import configure
    finally:
        if hides_rich:
            del sys.modules["rich"]
    configure(format=args.log_format, level=args.log_level)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status."""
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words)
    args = parser.parse_args(words)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    head_start = getattr(args, "head_start", None)
    try:
        with head_start(args) if head_start is not None else contextlib.nullcontext():
            _configure_logging(args)
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
