"""`promptkit eval PROMPT --dataset FILE --tag latest --tag candidate`: run a dataset under
override tags and show the scores side by side.

The table goes to stdout (or the report as JSON with `--json`), a progress bar to stderr when
it is a terminal; `--html FILE` writes the one-file HTML report, and `--output-dir DIR` writes
`report.json`, `report.html` and the execution record `manifest.json`. `--provider fake
--script FILE` answers from a reply script on a local `FakeProviderServer`, so the workflow runs
with no model and no key. Exit status: 0 when every case ran and was scored, 1 when a case
failed or did not load (the report says which), 130 when interrupted (after reporting what
finished). The options that choose the dataset, evaluators and model are shared with
`promptkit overrides promote`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptkit.errors import ArgumentValueError

if TYPE_CHECKING:
    from promptkit.adapters import ProviderAdapter
    from promptkit.app import App
    from promptkit.config import ProjectConfig
    from promptkit.evals import DepsFactory, EvaluationReport
    from promptkit.overrides import PromptOverridesStore
    from promptkit.prompt import Prompt

EVAL_PROVIDERS = ("auto", "openai", "anthropic", "fake")
FAKE_MODEL = "fake-model"
# The OpenAI SDK wants a key; the fake server ignores it.
_FAKE_KEY = "fake-server-key"
DATASET_FOLDER = "evals"


def register(parser: argparse.ArgumentParser) -> None:
    """Fill in the parser of `promptkit eval`."""
    from promptkit.cli._options import PROMPT_HELP, add_overrides_folder_argument

    parser.description = (
        "Run every case of a dataset under each override tag, score the replies and compare"
        " the tags."
    )
    parser.add_argument("prompt", metavar="PROMPT", help=PROMPT_HELP)
    parser.add_argument(
        "--tag",
        action="append",
        default=[],
        help="override tag to evaluate; repeat to compare (the first is the baseline;"
        " default: the app's, else [tool.promptkit] tag, else latest)",
    )
    add_overrides_folder_argument(parser)
    add_evaluation_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--html", metavar="FILE", help="write the HTML report to FILE")
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write report.json, report.html and manifest.json (the execution record) to DIR",
    )
    parser.set_defaults(handler=run_eval)


def add_evaluation_arguments(parser: argparse.ArgumentParser) -> None:
    """The application, dataset, evaluator, concurrency and model options `eval` and `promote`
    share."""
    from promptkit.cli._options import (
        add_app_argument,
        add_structured_output_argument,
        positive_seconds,
    )
    from promptkit.evals import SPEC_HELP

    add_app_argument(parser)
    parser.add_argument(
        "--deps",
        metavar="MODULE:ATTR",
        help="a function of the case that returns its deps, called for each case (default: the"
        " app's deps for every case)",
    )
    parser.add_argument(
        "--allow-placeholder-digest",
        action="store_true",
        help="run a case whose prompt would render the placeholder workspace digest (by"
        " default it fails: store a digest first with `promptkit optimize --scope global`)",
    )

    parser.add_argument(
        "--dataset",
        metavar="FILE",
        help=f"cases as .jsonl or .yaml (default: {DATASET_FOLDER}/<prompt key>.jsonl in the"
        " project folder)",
    )
    parser.add_argument(
        "--evaluator",
        action="append",
        default=[],
        metavar="SPEC",
        help=f"how replies are scored; repeatable (default: exact): {SPEC_HELP}",
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="cases evaluated at once (default: 8)"
    )
    parser.add_argument(
        "--deadline",
        type=positive_seconds,
        metavar="SECONDS",
        help="time limit of each case: model calls, tools and evaluators (default: 300)",
    )
    parser.add_argument(
        "--provider",
        choices=EVAL_PROVIDERS,
        help="who answers: openai or anthropic (auto: whichever key is set), or fake (a reply"
        " script on a local fake server, with --script); default: [tool.promptkit] provider,"
        " else auto",
    )
    parser.add_argument(
        "--model", help="model name (default: [tool.promptkit] model, else one per provider)"
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="an OpenAI-compatible server (default: [tool.promptkit] base_url)",
    )
    add_structured_output_argument(parser)
    parser.add_argument(
        "--script", metavar="FILE", help="the reply script of --provider fake (YAML or JSON)"
    )


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate, show and write the report; returns the exit status."""
    from promptkit.cli._eval_table import report_table
    from promptkit.evals import render_html_report, report_json_text, write_evaluation_outputs

    config = evaluation_config(args, tag=args.tag[0] if args.tag else None)
    prompt = load_cli_prompt(args.prompt)
    store = evaluation_store(args, config)
    try:
        report = evaluate_from_args(args, prompt, tuple(args.tag or [args.served_tag]), store)
    except ValueError as error:
        print(f"promptkit: error: {error}", file=sys.stderr)
        return 2
    print(report_json_text(report) if args.json else report_table(report), end="\n")
    if args.html:
        from promptkit._durable import write_atomically

        write_atomically(Path(args.html), render_html_report(report))
    if args.output_dir:
        manifest = write_evaluation_outputs(report, args.output_dir)
        print(f"promptkit eval: execution record in {manifest}", file=sys.stderr)
    if report.interrupted:
        print("promptkit: interrupted", file=sys.stderr)
        return 130
    return 1 if report.invalid_cases or any(r.failed for r in report.results) else 0


def evaluation_config(args: argparse.Namespace, *, tag: str | None) -> ProjectConfig:
    """The project configuration `eval` and `promote` run with: the table's, with their options
    (`--overrides-dir` in `args.root`, the provider options, `tag`) in place. The application
    binding (`--app`, else the table's) is loaded into `args.app_binding`, `args.served_tag` is
    the tag served (`tag`, else the app's, else the table's), and the provider options of
    `args` are set from the configuration; `args.model_chosen` says whether the options chose a
    model (else the app's runs)."""
    from promptkit.cli._options import chooses_model, command_app
    from promptkit.config import command_config
    from promptkit.discovery import use_project

    args.model_chosen = chooses_model(args)
    provider = args.provider if args.provider != "fake" else None
    config = command_config(
        args.root,
        overrides_dir=args.root,
        tag=tag,
        provider=provider,
        model=args.model,
        base_url=args.base_url,
        structured_output=args.structured_output,
    )
    use_project(config)
    args.config = config
    args.app_binding = command_app(args.app, config)
    served = args.app_binding.tag if args.app_binding is not None else config.tag
    args.served_tag = tag if tag is not None else served
    if args.provider is None:
        args.provider = config.provider
    args.model, args.base_url = config.model, config.base_url
    args.structured_output = config.structured_output
    return config


def evaluation_store(args: argparse.Namespace, config: ProjectConfig) -> PromptOverridesStore:
    """The overrides store `eval` and `promote` read: `--overrides-dir`, else the app's, else
    the table's."""
    from promptkit.discovery import overrides_store_of

    app: App[Any] | None = args.app_binding
    if args.root is None and app is not None and app.overrides is not None:
        return app.overrides
    return overrides_store_of(config)


def load_cli_prompt(reference: str) -> Prompt[Any]:
    """The prompt a `PROMPT` argument names (package.module:attr or an entry-point name)."""
    from promptkit.discovery import bind_prompt, load_prompt_source

    return bind_prompt(load_prompt_source(reference))


def evaluate_from_args(
    args: argparse.Namespace,
    prompt: Prompt[Any],
    tags: tuple[str, ...],
    store: PromptOverridesStore,
) -> EvaluationReport:
    """Load the dataset, build the adapter and evaluators from `args`, and run every case under
    `tags` as the application runs it (its binding, with the adapter the options choose in
    place of its model); ValueError for a bad option."""
    import dataclasses

    from promptkit.app import App
    from promptkit.cli._eval_table import ProgressBar
    from promptkit.evals import evaluator_from_spec, load_dataset, run_evaluation

    dataset = load_dataset(dataset_path(args.dataset, prompt, args.config.root), prompt)
    deps = deps_factory(args.deps)
    bound: App[Any] | None = args.app_binding
    with evaluation_adapter(args, bound) as adapter:
        app = App(adapter=adapter) if bound is None else dataclasses.replace(bound, adapter=adapter)
        evaluators = [
            evaluator_from_spec(spec, judge_adapter=adapter) for spec in args.evaluator or ["exact"]
        ]
        progress = ProgressBar(len(dataset.cases) * len(tags), sys.stderr)
        try:
            return run_evaluation(
                prompt,
                dataset,
                app,
                evaluators,
                tag=tags,
                overrides_store=store,
                deps=deps,
                allow_placeholder_digest=args.allow_placeholder_digest,
                concurrency=args.concurrency,
                deadline=args.deadline,
                on_result=progress.advance,
            )
        finally:
            progress.close()


def dataset_path(given: str | None, prompt: Prompt[Any], root: Path) -> Path:
    """`given`, or the prompt's dataset under `evals/` (.jsonl, .yaml or .yml)."""
    if given:
        return Path(given)
    for suffix in (".jsonl", ".yaml", ".yml"):
        candidate = _shown(root) / DATASET_FOLDER / f"{prompt.key}{suffix}"
        if candidate.is_file():
            return candidate
    raise ArgumentValueError(
        f"no dataset given and no {_shown(root) / DATASET_FOLDER}/{prompt.key}.jsonl (or .yaml);"
        " pass --dataset FILE"
    )


def _shown(root: Path) -> Path:
    # The project folder, as `evals/...` when it is the current one.
    return Path() if root == Path.cwd().absolute() else root


def deps_factory(reference: str | None) -> DepsFactory | None:
    """The deps factory `--deps` names (a function of the case), or None."""
    if reference is None:
        return None
    from promptkit.discovery import import_reference

    factory = import_reference(reference, what="deps factory", error=ArgumentValueError)
    if not callable(factory):
        raise ArgumentValueError(
            f"--deps {reference}: a {type(factory).__name__}, not a function of the case that"
            " returns its deps"
        )
    named: DepsFactory = factory
    return named


@contextmanager
def evaluation_adapter(
    args: argparse.Namespace, app: App[Any] | None = None
) -> Iterator[ProviderAdapter]:
    """The adapter the options choose, its provider line on stderr: the app's model when they
    choose none; for `fake`, one talking to a FakeProviderServer that serves the reply script
    for as long as the block runs."""
    if args.script and args.provider != "fake":
        raise ArgumentValueError("--script is for --provider fake")
    if app is not None and app.adapter is not None and not args.model_chosen:
        adapter = app.adapter
        model = f"{adapter.provider} {adapter.model}"
        print(f"promptkit eval: the app's model: {model}", file=sys.stderr)
        yield adapter
        return
    if args.provider != "fake":
        from promptkit.adapters import choose_adapter

        if args.provider == "static":
            raise ArgumentValueError(
                "evaluation needs a model, and the provider is static: set OPENAI_API_KEY or"
                " ANTHROPIC_API_KEY with --provider auto, pass --base-url of a local server, or"
                " try it offline with --provider fake --script FILE"
            )
        choice = choose_adapter(
            args.provider,
            model=args.model,
            base_url=args.base_url,
            structured_output=args.structured_output,
        )
        print(f"promptkit eval: {choice.reason}", file=sys.stderr)
        yield choice.adapter
        return
    if not args.script:
        raise ArgumentValueError("--provider fake needs --script FILE (see docs/evaluation.md)")
    from promptkit.adapters import OpenAIAdapter
    from promptkit.testing import FakeProviderServer, load_reply_script

    script = load_reply_script(args.script)
    with FakeProviderServer() as server:
        server.respond_with(script.reply_to)
        model = args.model or FAKE_MODEL
        print(f"promptkit eval: fake provider answering from {args.script}", file=sys.stderr)
        # No SDK retries: a scripted error is an answer to report, not a hiccup to wait out.
        yield OpenAIAdapter(
            model=model,
            client_kwargs={
                "api_key": _FAKE_KEY,
                "base_url": server.openai_base_url,
                "max_retries": 0,
            },
            structured_output=args.structured_output,
        )
