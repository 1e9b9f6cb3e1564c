"""Builds the argument parser and runs the chosen command, importing only that command's module.

Conventions every subcommand follows, so the command line reads the same everywhere:
- global options (`--log-level`, `--log-format`) go before or after the subcommand;
- a failure the user or the machine can fix is one line on stderr with an exit status from
  `promptkit._failures` (2 for a bad option value or input), never a traceback; anything else is
  a bug and keeps its traceback;
- every `--help` ends with an example and the exit statuses (`HELP_EXAMPLES` below);
- a command with work to start in other processes at once (optimize's listing helper) sets a
  `head_start` default: a context manager factory called with the parsed arguments before
  anything else runs, left when the command ends;
- logging is set up as the options say when the first record is written, so a command that
  logs nothing never imports structlog.

Each command lives in its own module, whose `register(parser)` fills in the command's parser.
`COMMANDS` names each module with the command's one-line summary, which is all `promptkit
--help` shows: a command's parser starts as a placeholder and is filled in only when argparse
hands it a command line (`CommandParser`), so a command line imports the module of the command
it names and no other, and the top-level help imports none. A command with subcommands of its
own may defer one the same way (`overrides promote`, which brings the evaluation options).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence

from promptkit import __version__
from promptkit.errors import PromptkitError

# Not `typing.TYPE_CHECKING`: `promptkit --help` imports nothing that imports typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

# Each command: the module whose `register(parser)` fills in its parser, and the one-line
# summary `promptkit --help` shows for it (in this order).
COMMANDS: dict[str, tuple[str, str]] = {
    "optimize": ("promptkit.cli._optimize", "write a prompt's workspace digest and store it"),
    "render": (
        "promptkit.cli._render",
        "print a prompt rendered with the workspace's session and overrides",
    ),
    "digest": ("promptkit.cli._digest", "inspect workspace digests"),
    "overrides": ("promptkit.cli._overrides", "list, edit and check prompt overrides"),
    "repl": (
        "promptkit.cli._repl",
        "an interactive loop over a prompt: optimize, ask, digest, overrides, history",
    ),
    "eval": (
        "promptkit.cli._eval",
        "score a prompt on a dataset under one or more override tags",
    ),
    "mcp": ("promptkit.cli._mcp", "serve the workspace digest and file tools over MCP"),
    "db": ("promptkit.cli._database", "create or migrate promptkit's tables in a database"),
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
    "db": "promptkit db upgrade --database postgresql://app@db.internal/app",
    "db upgrade": "promptkit db upgrade --database postgresql://app@db.internal/app",
    "overrides push": "promptkit overrides push --database postgresql://app@db.internal/app"
    " --tag latest",
    "overrides pull": "promptkit overrides pull --database postgresql://app@db.internal/app"
    " --tag latest",
}


class CommandParser(argparse.ArgumentParser):
    """A parser of the `promptkit` command line, whose usage errors are one line on stderr and
    exit status 2.

    After `defer(module)` it is a placeholder: a parent's help lists it by the summary it was
    added with, and the first time argparse hands it the rest of a command line (to parse it, to
    show its help or to report a mistake in it) it imports `module`, whose `register(parser)`
    fills it in, and takes the conventions of the module docstring.
    """

    _module: str | None = None
    _words: tuple[str, ...] = ()

    def defer(self, module: str) -> None:
        """Fill this parser in from `module`'s `register(parser)` when it is first used."""
        self._module = module

    @property
    def is_deferred(self) -> bool:
        return self._module is not None

    def fill(self) -> None:
        """Fill in a deferred parser now (nothing to do for any other)."""
        module, self._module = self._module, None
        if module is not None:
            # An import statement's machinery, not importlib.import_module: `python -X
            # importtime` then shows the command's module with the rest of the start-up.
            __import__(module, fromlist=("register",)).register(self)
            _follow_conventions(self, self._words)

    def parse_known_args(  # type: ignore[override]  # one signature for typeshed's overloads
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        # argparse hands a subcommand's parser the rest of the line through this method.
        self.fill()
        return super().parse_known_args(args, namespace)

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


def build_parser() -> CommandParser:
    """The `promptkit` parser, with a placeholder for each command (see `CommandParser`)."""
    parser = CommandParser(
        prog="promptkit",
        description="Typed prompts, workspace digests and prompt overrides.",
    )
    parser.add_argument("--version", action="version", version=f"promptkit {__version__}")
    _add_global_options(parser, at_top=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, summary) in COMMANDS.items():
        subparsers.add_parser(name, help=summary).defer(module)
    _follow_conventions(parser, ())
    return parser


def every_command(parser: CommandParser) -> Iterator[tuple[tuple[str, ...], CommandParser]]:
    """`parser` and every subcommand parser below it, filled in, with the words that select
    each. This imports every command's module: it is for checks over all commands."""
    return _commands(parser, (), fill=True)


def _follow_conventions(parser: CommandParser, words: tuple[str, ...]) -> None:
    """Give `parser` (selected by `words`) and the filled-in parsers below it the global options
    after the subcommand, and the help's example and exit statuses."""
    for command_words, command in _commands(parser, words, fill=False):
        if command_words:
            _add_global_options(command, at_top=False)
        example = HELP_EXAMPLES.get(" ".join(command_words[:2])) or HELP_EXAMPLES.get(
            command_words[0] if command_words else ""
        )
        command.epilog = "\n\n".join(
            part
            for part in (command.epilog, example and f"example:\n  {example}", EXIT_STATUSES)
            if part
        )
        command.formatter_class = argparse.RawDescriptionHelpFormatter


def _commands(
    parser: CommandParser, words: tuple[str, ...], *, fill: bool
) -> Iterator[tuple[tuple[str, ...], CommandParser]]:
    """`parser` and the subcommand parsers below it, with the words that select each; a deferred
    one is filled in first when `fill` is true, else left out with what is below it."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.prog.split()[-1] != name:  # aliases share their parser; visit it once
                    continue
                sub._words = (*words, name)  # what a deferred parser's conventions need
                if fill:
                    sub.fill()
                if not sub.is_deferred:
                    yield from _commands(sub, sub._words, fill=fill)


def _configure_logging(args: argparse.Namespace) -> None:
    """Route log records as `--log-format` and `--log-level` say, from the first record on.

    structlog, and asyncio with it, is imported when the first record is written: a command
    that logs nothing (a listing) never imports it. And it is imported as if rich were absent:
    structlog imports rich, when it is installed, for the tracebacks it can render (a twentieth
    of a second), and the CLI's records never use them (promptkit formats and redacts every
    exception before a renderer sees it); rich stays importable for anything imported later.
    """
    from promptkit.logging import configure, configure_on_first_record

    def set_up() -> None:
        hides_rich = "rich" not in sys.modules and "structlog" not in sys.modules
        if hides_rich:
            sys.modules["rich"] = None  # type: ignore[assignment]  # `import rich` fails meanwhile
        try:
            configure(format=args.log_format, level=args.log_level)  # imports structlog
        finally:
            if hides_rich:
                del sys.modules["rich"]

    configure_on_first_record(set_up)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    # Needed once a command runs; `--help` and usage errors have ended by now.
    from promptkit._failures import EXIT_INTERRUPTED, describe_failure

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
