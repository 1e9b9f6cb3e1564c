"""The options the workspace commands share, defined once so they read the same everywhere.

`optimize`, `render`, `digest status` and `repl` (and the code-review example) take a workspace,
a prompt and the stores; `optimize` and `repl` also choose a provider. This module only adds
arguments: it imports nothing heavy, because every command's parser is built on each run.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

Handler = Callable[[argparse.Namespace], int]

OVERRIDES_DIR_HELP = (
    "the overrides folder (default: [tool.promptkit] overrides of the project, else overrides/"
    " in the project folder)"
)
TAG_HELP = "overrides tag (default: [tool.promptkit] tag, else latest)"

PROMPT_HELP = (
    "package.module:attr or a promptkit.prompts entry-point name: a Prompt, or a function"
    " (session, workspace) -> Prompt, or one of no arguments (default: the built-in workspace"
    " prompt)"
)


def add_path_argument(parser: argparse.ArgumentParser) -> None:
    """The positional `PATH` of the workspace, default the current folder."""
    parser.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="workspace directory (default: [tool.promptkit] workspace of the project, else .)",
    )


def add_params_argument(parser: argparse.ArgumentParser) -> None:
    """`--params JSON|@FILE`: the prompt's params, keyed by params type name."""
    parser.add_argument(
        "--params",
        type=_params_document,
        metavar="JSON|@FILE",
        help="the prompt's params as a JSON object keyed by params type name"
        ' ({"Task": {"request": "..."}}), or one type\'s fields for a prompt with a single'
        " params type; @FILE reads the JSON from a file",
    )


def _params_document(value: str) -> object:
    # An argparse type: a bad value becomes the one-line usage error, exit status 2.
    from promptkit.errors import ArgumentValueError
    from promptkit.prompt import read_params_argument

    try:
        return read_params_argument(value)
    except ArgumentValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def positive_seconds(value: str) -> float:
    """An argparse type: a positive, finite number of seconds (`nan`, `inf`, `0`, `-1` are a
    usage error, exit status 2)."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(
            f"expected a positive, finite number of seconds, got {value!r}"
        )
    return seconds


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    """`--json`: print one JSON object on stdout instead of text (documented in docs/cli.md)."""
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object instead of text; its fields are stable (docs/cli.md)",
    )


def add_overrides_folder_argument(parser: argparse.ArgumentParser) -> None:
    """`--overrides-dir DIR` (into `args.root`) for the commands without a workspace, with
    `--root`, its earlier name, still accepted."""
    parser.add_argument("--overrides-dir", dest="root", metavar="DIR", help=OVERRIDES_DIR_HELP)
    parser.add_argument("--root", dest="root", help=argparse.SUPPRESS)


@dataclass(frozen=True)
class configured:  # noqa: N801 (reads as the function it stands for: `handler=configured(f)`)
    """`handler` run with `args.root` (the overrides folder) and, where the command has one,
    `args.tag` resolved against the project configuration (`promptkit.config.command_config`,
    found from `--overrides-dir` when given, else the current folder), which it finds in
    `args.config`: for the commands that take no workspace. A value, so two parsers of one
    command line hold equal handlers."""

    handler: Handler

    def __call__(self, args: argparse.Namespace) -> int:
        from promptkit.config import command_config, is_location_url
        from promptkit.discovery import use_project

        # A database URL is not a place in the project: the project is the current folder's.
        start = None if args.root is None or is_location_url(args.root) else args.root
        config = command_config(start, overrides_dir=args.root, tag=getattr(args, "tag", None))
        use_project(config)
        args.config = config
        args.root = config.overrides
        if hasattr(args, "tag"):
            args.tag = config.tag
        return self.handler(args)


def add_prompt_arguments(parser: argparse.ArgumentParser, *, prompt_option: bool = True) -> None:
    """`--prompt` (unless `prompt_option` is false), `--tag`, `--overrides-dir`, `--state-dir`."""
    if prompt_option:
        parser.add_argument("--prompt", metavar="MODULE:ATTR", help=PROMPT_HELP)
    add_tag_argument(parser)
    parser.add_argument("--overrides-dir", metavar="DIR", help=OVERRIDES_DIR_HELP)
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="session state root (default: [tool.promptkit] state, else $PROMPTKIT_HOME or"
        " ~/.promptkit)",
    )


def add_tag_argument(parser: argparse.ArgumentParser) -> None:
    """`--tag T`: the overrides tag, default the project's."""
    parser.add_argument("--tag", help=TAG_HELP)


def add_provider_arguments(parser: argparse.ArgumentParser, *, role: str) -> None:
    """`--provider`, `--model` and `--base-url`, as `choose_digest_writer` takes them; `role` says
    what the provider does for the command, in the help of `--provider`."""
    from promptkit.optimize import WRITER_NAMES

    parser.add_argument(
        "--provider",
        choices=WRITER_NAMES,
        help=f"{role} (default: [tool.promptkit] provider, else auto: openai or anthropic when"
        " its API key is set, else the offline static optimizer)",
    )
    parser.add_argument(
        "--model", help="model name (default: [tool.promptkit] model, else one per provider)"
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="server of an OpenAI-compatible API (vLLM, Ollama, llama.cpp), or another endpoint"
        " (default: [tool.promptkit] base_url, else $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL);"
        " name its model with --model",
    )
    parser.add_argument(
        "--api",
        choices=("responses", "chat"),
        help="OpenAI wire API (default: responses for OpenAI, chat at a custom base URL)",
    )
    add_structured_output_argument(parser)


def add_structured_output_argument(parser: argparse.ArgumentParser) -> None:
    """`--structured-output native|prompt`, as `choose_adapter` takes it."""
    parser.add_argument(
        "--structured-output",
        choices=("native", "prompt"),
        help="native: the server constrains replies to the output schema; prompt: the prompt"
        " alone asks for the JSON, for servers without JSON-schema output (default:"
        " [tool.promptkit] structured_output, else native; a local server that refuses the"
        " schema gets prompt mode after one refused request)",
    )


def add_repl_arguments(parser: argparse.ArgumentParser, *, prompt_option: bool) -> None:
    """PATH, the provider options and the store options of a REPL; `--prompt` when asked."""
    add_path_argument(parser)
    add_prompt_arguments(parser, prompt_option=prompt_option)
    add_provider_arguments(parser, role="who answers and optimizes")
