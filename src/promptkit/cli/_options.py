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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from promptkit.app import App
    from promptkit.config import ProjectConfig
    from promptkit.discovery import BoundWorkspace
    from promptkit.hostfiles import ListingProcess
    from promptkit.optimize import WriterChoice
    from promptkit.overrides import DocumentOverridesStore
    from promptkit.session import SessionStoreProtocol

Handler = Callable[[argparse.Namespace], int]

OVERRIDES_DIR_HELP = (
    "the overrides folder (default: [tool.promptkit] overrides of the project, else overrides/"
    " in the project folder)"
)
TAG_HELP = "overrides tag (default: [tool.promptkit] tag, else latest)"
APP_TAG_HELP = "overrides tag (default: the app's, else [tool.promptkit] tag, else latest)"

APP_HELP = (
    "the application's binding: package.module:attr of a promptkit.App, or of a function"
    " returning one; the command runs with its model, settings, prices, deps, overrides and tag,"
    " and a flag replaces only what it names (default: [tool.promptkit] app)"
)

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
    """`--prompt` (unless `prompt_option` is false), `--app`, `--tag`, `--overrides-dir`,
    `--state-dir`."""
    if prompt_option:
        parser.add_argument("--prompt", metavar="MODULE:ATTR", help=PROMPT_HELP)
    add_app_argument(parser)
    parser.add_argument("--tag", help=APP_TAG_HELP)
    parser.add_argument("--overrides-dir", metavar="DIR", help=OVERRIDES_DIR_HELP)
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="session state root (default: [tool.promptkit] state, else $PROMPTKIT_HOME or"
        " ~/.promptkit)",
    )


def add_app_argument(parser: argparse.ArgumentParser) -> None:
    """`--app MODULE:ATTR`: the application's binding (`command_app`)."""
    parser.add_argument("--app", metavar="MODULE:ATTR", help=APP_HELP)


def command_app(reference: str | None, config: ProjectConfig) -> App[Any] | None:
    """The application binding a command runs with: `--app` (`reference`), else the table's
    `app`, imported from the project folder; None when neither names one."""
    reference = reference or config.app
    if reference is None:
        return None
    from promptkit.app import load_app
    from promptkit.discovery import use_project

    use_project(config)
    return load_app(reference)


@dataclass(frozen=True)
class AppStores:
    """The application binding a workspace command runs with (`app`, None without one), and
    the tag and stores it passes on to `promptkit.discovery.workspace_options`: `--tag` wins,
    then the app's tag; the app's overrides and sessions, unless a folder option names them."""

    app: App[Any] | None
    tag: str | None
    overrides: DocumentOverridesStore[Any] | None
    sessions: SessionStoreProtocol | None


def app_stores(args: argparse.Namespace, path: str | None) -> AppStores:
    """The `AppStores` of a workspace command run on `path` with `args` (`--app`, `--tag`)."""
    from promptkit.config import command_config

    app = command_app(args.app, command_config(workspace=path))
    if app is None:
        return AppStores(None, args.tag, None, None)
    from promptkit.errors import ConfigError
    from promptkit.overrides import DocumentOverridesStore

    overrides = app.overrides
    if overrides is not None and not isinstance(overrides, DocumentOverridesStore):
        raise ConfigError(
            f"the app's overrides store ({type(overrides).__name__}) is not one the commands"
            " read (a folder or a postgresql:// database); pass --overrides-dir DIR"
        )
    return AppStores(app, args.tag or app.tag, overrides, app.sessions)


def bind_command_workspace(
    args: argparse.Namespace, path: str | None = None
) -> tuple[BoundWorkspace, App[Any] | None]:
    """What a workspace command works on (`promptkit.discovery.bind_workspace`) from its
    options, and the application binding it runs with: each flag given wins, then the app's
    overrides, tag and sessions, then the project's table. `path` replaces `args.path`."""
    from promptkit.discovery import bind_workspace

    where = args.path if path is None else path
    stores = app_stores(args, where)
    bound = bind_workspace(
        where,
        prompt=args.prompt,
        state_dir=args.state_dir,
        overrides_dir=args.overrides_dir,
        tag=stores.tag,
        overrides=stores.overrides,
        sessions=stores.sessions,
    )
    return bound, stores.app


def chooses_model(args: argparse.Namespace) -> bool:
    """Whether the options choose a model of their own (`--provider`, `--model`, `--base-url`,
    `--structured-output`), which then runs in place of the app's."""
    return any(
        getattr(args, name, None) is not None
        for name in ("provider", "model", "base_url", "structured_output")
    )


def command_writer(
    args: argparse.Namespace,
    config: ProjectConfig,
    app: App[Any] | None,
    *,
    listing: ListingProcess | None = None,
) -> WriterChoice:
    """Who writes digests (and answers, in the REPL) for a command: the app's model unless a
    provider option is given, else what the options and `config` choose
    (`promptkit.optimize.choose_digest_writer`)."""
    from promptkit.optimize import WriterChoice, choose_digest_writer

    if app is not None and app.adapter is not None and not chooses_model(args):
        adapter = app.adapter
        reason = f"the app's model: {adapter.provider} {adapter.model}"
        return WriterChoice(app.digest_writer(listing=listing), reason, adapter)
    chosen = config.overriding(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        structured_output=args.structured_output,
    )
    return choose_digest_writer(
        chosen.provider,
        model=chosen.model,
        base_url=chosen.base_url,
        api=args.api,
        listing=listing,
        structured_output=chosen.structured_output,
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


# promptkit.optimize.DEFAULT_OPTIMIZE_DEADLINE: the parser is built before any import of it.
DEFAULT_OPTIMIZE_DEADLINE_S = 900.0


def add_optimize_limits(parser: argparse.ArgumentParser) -> None:
    """`--deadline`, `--fallback-static` and `--no-gate`: how long a model may write the digest
    and what happens to a digest the gate refuses (`promptkit optimize`, the REPL's optimize)."""
    parser.add_argument(
        "--deadline",
        type=positive_seconds,
        default=DEFAULT_OPTIMIZE_DEADLINE_S,
        metavar="SECONDS",
        help="stop a model that has not finished the digest by then (default:"
        f" {DEFAULT_OPTIMIZE_DEADLINE_S:g})",
    )
    parser.add_argument(
        "--fallback-static",
        action="store_true",
        help="when the model's digest is refused, store the static digest instead (the reason"
        " goes into its provenance)",
    )
    parser.add_argument(
        "--no-gate",
        dest="gate",
        action="store_false",
        help="store the model's digest without the digest gate (JSON, schema, echo, length and"
        " grounding checks); its grounding is still reported",
    )


def add_repl_arguments(parser: argparse.ArgumentParser, *, prompt_option: bool) -> None:
    """PATH, the provider options and the store options of a REPL; `--prompt` when asked."""
    add_path_argument(parser)
    add_prompt_arguments(parser, prompt_option=prompt_option)
    add_provider_arguments(parser, role="who answers and optimizes")
    add_optimize_limits(parser)
