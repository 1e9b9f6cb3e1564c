"""`promptkit optimize [PATH]`: write the workspace digest of a prompt and store it.

The provider comes from `--provider` (`auto` says what it chose: OpenAI or Anthropic when that
key is set, else the offline static optimizer). The session is the one most recently stored for
PATH (or a new one), so SESSION scope persists the digest through `SessionStore` for a later
`render`; GLOBAL scope writes the shared override file (never over a digest an operator wrote,
unless `--force`) and clears that session's digest. Progress goes to stderr, live on a terminal
and as plain lines otherwise, with a status line (elapsed time, tokens, tool calls) while a
model is waited for; the digest, its grounding and where it was stored go to stdout (with
`--json`, one JSON object; fields in docs/cli.md). `--include` and `--exclude` narrow what the
digest describes; the overrides folder and the state folder are never described when they sit
inside PATH.

A model's run is bounded (`--deadline`, 900 s by default) and its digest goes through the
digest gate (`--no-gate` skips it; `--fallback-static` stores the static digest when it is
refused). Every run keeps its record (`manifest.json`) in `--output-dir`, or in the state
folder's `runs/optimize` for the last run, whatever ended it: a refusal, the deadline, Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from promptkit.cli._options import (
    add_json_argument,
    add_optimize_limits,
    add_path_argument,
    add_prompt_arguments,
    add_provider_arguments,
)
from promptkit.cli._start import CommandStart, command_start

if TYPE_CHECKING:
    from promptkit.discovery import BoundWorkspace
    from promptkit.optimize import OptimizationResult


def register(parser: argparse.ArgumentParser) -> None:
    """Fill in the parser of `promptkit optimize`."""
    parser.description = (
        "Write the workspace digest of a prompt (a model explores the workspace, or the static"
        " optimizer scans it) and store it in the session or the overrides."
    )
    add_path_argument(parser)
    add_prompt_arguments(parser)
    add_provider_arguments(parser, role="who writes the digest")
    parser.add_argument(
        "--scope",
        choices=("session", "global"),
        default="session",
        help="session: store in the workspace's session; global: write the overrides files"
        " (default: session)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --scope global, replace a digest an operator wrote (refused otherwise)",
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="describe only files matching GLOB, relative to PATH (`src/**`, `**/*.py`);"
        " repeat for several",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files matching GLOB, relative to PATH, and everything under a matching"
        " directory (`vendor`, `**/fixtures`); repeat for several",
    )
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write manifest.json, workspace.manifest.json and digest.md here (default: the"
        " last run's folder under the state folder, runs/optimize)",
    )
    add_optimize_limits(parser)
    add_json_argument(parser)
    parser.set_defaults(handler=run_optimize, head_start=start_listing_helper)


@contextmanager
def start_listing_helper(args: argparse.Namespace) -> Iterator[None]:
    """The command's head start: a model's run lists the workspace in a helper process
    (`args.listing`) from before the CLI sets up logging, while this one imports the prompt
    stack and the SDK, so on two cores the first request goes out sooner."""
    from promptkit.config import command_config
    from promptkit.optimize import writes_with_model

    config = command_config(workspace=args.path, provider=args.provider, base_url=args.base_url)
    if not writes_with_model(config.provider, base_url=config.base_url):
        yield
        return
    from promptkit.hostfiles import DEFAULT_MAX_FILE_BYTES, start_listing_process

    with start_listing_process(str(config.workspace_root), DEFAULT_MAX_FILE_BYTES) as listing:
        args.listing = listing
        yield


def run_optimize(args: argparse.Namespace) -> int:
    """Optimize, store, and print the digest and where it went; returns the exit status."""
    with command_start() as start:
        return _optimize(args, start)


def _optimize(args: argparse.Namespace, start: CommandStart) -> int:
    """The command's run, step by step in the order it happens."""
    from promptkit.cli._options import bind_command_workspace, command_writer
    from promptkit.optimize import OptimizationScope, optimize_workspace_digest
    from promptkit.repl import Progress
    from promptkit.session import PromptRendered, Session, SessionStore

    bound, app = bind_command_workspace(args)
    choice = command_writer(args, bound.config, app, listing=getattr(args, "listing", None))
    scope = OptimizationScope(args.scope)
    prompt, session, workspace = bound.prompt, bound.session, bound.workspace
    progress = Progress(sys.stderr, live=sys.stderr.isatty())
    progress.say(f"optimizing {prompt.ns}/{prompt.key} for {workspace}")
    progress.say(f"provider: {choice.reason}")
    if choice.adapter is None:
        start.over()
    # Else the start goes on until the model's prompt is rendered: the writer imports the SDK
    # (after telling the listing helper the globs to count for), and what that allocates is
    # frozen with the rest, not collected.

    def on_event(event: object) -> None:
        if isinstance(event, PromptRendered):
            start.over()
        progress.on_event(event)

    run_session = Session()
    unsubscribe = run_session.subscribe(on_event)
    # The last run's record goes beside the sessions, when they are kept in a folder.
    run_dir = (
        Path(args.output_dir)
        if args.output_dir
        else bound.sessions.run_dir(workspace, "optimize")
        if isinstance(bound.sessions, SessionStore)
        else None
    )
    # A stored session is attached first, so a lock held elsewhere fails before anything is
    # spent; a new one only after success, so a failed run leaves no empty session behind.
    attachment = (
        bound.sessions.attach(session, workspace) if bound.stored_session is not None else None
    )
    try:
        with progress.ticking() if choice.adapter is not None else nullcontext():
            result = optimize_workspace_digest(
                choice.writer,
                prompt,
                store_scope=scope,
                overrides_store=bound.overrides,
                overrides_tag=bound.tag,
                session=session,
                optimization_session=run_session,
                deadline=args.deadline,
                output_dir=run_dir,
                overwrite_operator=args.force,
                include=args.include,
                exclude=args.exclude,
                leave_out=bound.sessions.state_folders,
                gate=args.gate,
                fallback_static=args.fallback_static,
            )
        if attachment is None and scope is OptimizationScope.SESSION:
            attachment = bound.sessions.attach(session, workspace)
    except BaseException:
        progress.end_status()
        record = f"; run record: {run_dir / 'manifest.json'}" if run_dir is not None else ""
        progress.say(f"nothing was stored{record}")
        raise
    finally:
        unsubscribe()
        progress.end_status()
        if attachment is not None:
            attachment.close()
    progress.done(len(result.response.tool_calls), result.response.usage)
    if result.grounding is not None:
        progress.say(f"grounding: {result.grounding.summary()}")
    if result.fallback_reason is not None:
        progress.say(f"stored the static digest instead: {result.fallback_reason}")
    return _report(args, bound, result, run_dir)


def _report(
    args: argparse.Namespace,
    bound: BoundWorkspace,
    result: OptimizationResult,
    run_dir: Path | None,
) -> int:
    """Print the digest and where it was stored (one JSON object with `--json`)."""
    from promptkit.optimize import OptimizationScope

    prompt, session, workspace, scope = bound.prompt, bound.session, bound.workspace, result.scope
    if scope is OptimizationScope.SESSION:
        session_dir = bound.sessions.location(workspace, session.session_id)
        stored_in = [session_dir]
        where = [f"session {session.session_id} of {workspace} ({session_dir})"]
    else:
        stored_in = list(result.locations)
        where = list(result.locations)
    record = run_dir / "manifest.json" if run_dir is not None else None
    if args.json:
        response = result.response
        report = {
            "workspace": str(workspace),
            "prompt": f"{prompt.ns}/{prompt.key}",
            "section_key": result.section_key,
            "scope": str(scope),
            "digest": result.digest,
            "session_id": session.session_id if scope is OptimizationScope.SESSION else None,
            "stored_in": stored_in,
            "provider": response.provider,
            "model": response.model,
            "tool_calls": len(response.tool_calls),
            "usage": response.usage.to_json(),
            "grounding": result.grounding.to_json() if result.grounding is not None else None,
            "fallback_reason": result.fallback_reason,
            "run_record": str(record) if record is not None else None,
        }
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(result.digest)
    print()
    print(f"stored the {result.section_key!r} digest ({scope} scope) in:")
    for line in where:
        print(f"  {line}")
    if args.output_dir:
        print(f"run record: {record}")
    return 0
