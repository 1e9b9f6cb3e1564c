"""The options the workspace commands share, defined once so they read the same everywhere.

`optimize`, `render`, `digest status` and `repl` (and the code-review example) take a workspace,
a prompt and the stores; `optimize` and `repl` also choose a provider. This module only adds
arguments: it imports nothing heavy, because every command's parser is built on each run.
"""

from __future__ import annotations

import argparse
import math

PROMPT_HELP = (
    "package.module:attr or a promptkit.prompts entry-point name: a Prompt, or a function"
    " (session, workspace) -> Prompt, or one of no arguments (default: the built-in workspace"
    " prompt)"
)


def add_path_argument(parser: argparse.ArgumentParser) -> None:
    """The positional `PATH` of the workspace, default the current folder."""
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="workspace directory (default: .)"
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
    """`--overrides-dir DIR` (into `args.root`, default `overrides`) for the `overrides` commands,
    with `--root`, its earlier name, still accepted."""
    parser.add_argument(
        "--overrides-dir",
        dest="root",
        default="overrides",
        metavar="DIR",
        help="the overrides folder (default: overrides)",
    )
    parser.add_argument("--root", dest="root", help=argparse.SUPPRESS)


def add_prompt_arguments(parser: argparse.ArgumentParser, *, prompt_option: bool = True) -> None:
    """`--prompt` (unless `prompt_option` is false), `--tag`, `--overrides-dir`, `--state-dir`."""
    if prompt_option:
        parser.add_argument("--prompt", metavar="MODULE:ATTR", help=PROMPT_HELP)
    parser.add_argument("--tag", default="latest", help="overrides tag (default: latest)")
    parser.add_argument(
        "--overrides-dir", metavar="DIR", help="overrides store root (default: PATH/overrides)"
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="session state root (default: $PROMPTKIT_HOME or ~/.promptkit)",
    )


def add_provider_arguments(parser: argparse.ArgumentParser, *, role: str) -> None:
    """`--provider`, `--model` and `--base-url`, as `choose_digest_writer` takes them; `role` says
    what the provider does for the command, in the help of `--provider`."""
    from promptkit.optimize import WRITER_NAMES

    parser.add_argument(
        "--provider",
        choices=WRITER_NAMES,
        default="auto",
        help=f"{role} (default: auto: openai or anthropic when its API key is set, else the"
        " offline static optimizer)",
    )
    parser.add_argument("--model", help="model name (default: one per provider)")
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="server of an OpenAI-compatible API (vLLM, Ollama, llama.cpp), or another endpoint"
        " (default: $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL); name its model with --model",
    )
    parser.add_argument(
        "--api",
        choices=("responses", "chat"),
        help="OpenAI wire API (default: responses for OpenAI, chat at a custom base URL)",
    )


def add_repl_arguments(parser: argparse.ArgumentParser, *, prompt_option: bool) -> None:
    """PATH, the provider options and the store options of a REPL; `--prompt` when asked."""
    add_path_argument(parser)
    add_prompt_arguments(parser, prompt_option=prompt_option)
    add_provider_arguments(parser, role="who answers and optimizes")
