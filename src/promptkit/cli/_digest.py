"""`promptkit digest status`: where a workspace's digest would come from, how old, how fresh.

It resolves exactly as `WorkspaceDigestSection` does at render time (session digest, the
prompt's own override, a shared override, the placeholder) without rendering anything. The
prompt is the one `optimize` and `render` use (`--prompt`, default the built-in workspace
prompt), bound to the most recently active session stored for the workspace
(`SessionStore.latest`). `--json` prints the same as one JSON object (fields in docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptkit.digest import DigestResolution
    from promptkit.session import Session


def register(digest: argparse.ArgumentParser) -> None:
    """Fill in the parser of `promptkit digest` (`status` and `export`)."""
    from promptkit.cli._options import add_json_argument, add_path_argument, add_prompt_arguments

    digest.description = "Inspect the workspace digest a prompt would render."
    commands = digest.add_subparsers(dest="digest_command", metavar="SUBCOMMAND", required=True)
    status = commands.add_parser(
        "status",
        help="print where the digest comes from, its age, and whether it is stale",
        description="Print where the workspace digest comes from (session, override,"
        " shared-override or placeholder), its age, and whether the workspace changed since.",
    )
    add_path_argument(status)
    add_prompt_arguments(status)
    add_json_argument(status)
    status.set_defaults(handler=run_status)
    export = commands.add_parser(
        "export",
        help="write the stored digest into AGENTS.md or CLAUDE.md",
        description="Write the stored workspace digest (session or override, resolved as"
        " `digest status` shows) into a marked block of AGENTS.md or CLAUDE.md, keeping"
        " everything written around the block. With --check, write nothing and exit 1 when"
        " the file is out of date (for CI).",
    )
    add_path_argument(export)
    add_prompt_arguments(export)
    export.add_argument(
        "--format",
        dest="export_format",
        choices=("agents-md", "claude-md"),
        default="agents-md",
        help="agents-md writes AGENTS.md, claude-md writes CLAUDE.md (default: agents-md)",
    )
    export.add_argument(
        "--check", action="store_true", help="exit 1 when the file is out of date; write nothing"
    )
    export.set_defaults(handler=run_export)


def run_status(args: argparse.Namespace) -> int:
    """Resolve and print the digest status; returns the exit status."""
    from promptkit.cli._options import bind_command_workspace
    from promptkit.digest import resolve_workspace_digest
    from promptkit.repl import resolution_lines

    bound, _ = bind_command_workspace(args)
    prompt = bound.prompt
    resolution = resolve_workspace_digest(prompt, overrides_store=bound.overrides, tag=bound.tag)
    if args.json:
        session = bound.stored_session
        print(
            json.dumps(
                {
                    "workspace": str(bound.workspace),
                    "prompt": f"{prompt.ns}/{prompt.key}",
                    "section_key": resolution.section_key,
                    "origin": resolution.origin,
                    "tag": resolution.tag,
                    "fallback_from": resolution.fallback_from,
                    "session_id": session.session_id
                    if session is not None and resolution.origin == "session"
                    else None,
                    "updated_at": resolution.updated_at.isoformat()
                    if resolution.updated_at is not None
                    else None,
                    "author": resolution.author,
                    "is_stale": resolution.is_stale,
                },
                indent=2,
            )
        )
        return 0
    origin = _origin_text(resolution, bound.stored_session, bound.overrides.location)
    lines = [
        f"workspace: {bound.workspace}",
        f"prompt:    {prompt.ns}/{prompt.key}",
        *resolution_lines(resolution, origin=origin),
    ]
    print("\n".join(lines))
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Export the resolved digest into the agent file; returns the exit status."""
    from promptkit.cli._options import bind_command_workspace
    from promptkit.digest import export_digest, resolve_workspace_digest

    bound, _ = bind_command_workspace(args)
    resolution = resolve_workspace_digest(
        bound.prompt, overrides_store=bound.overrides, tag=bound.tag
    )
    if resolution.origin == "placeholder":
        print(
            f"promptkit: no digest stored for {bound.workspace}: run `promptkit optimize` first",
            file=sys.stderr,
        )
        return 2
    result = export_digest(
        Path(bound.workspace), resolution.body, args.export_format, check=args.check
    )
    if args.check:
        if result.is_outdated:
            print(
                f"{result.path} is out of date with the {resolution.origin} digest: run"
                f" `promptkit digest export --format {args.export_format}`",
                file=sys.stderr,
            )
            return 1
        print(f"{result.path} is up to date")
        return 0
    verb = "wrote" if result.is_outdated else "unchanged:"
    print(f"{verb} {result.path} ({resolution.origin} digest)")
    return 0


def _origin_text(resolution: DigestResolution, session: Session | None, overrides_dir: str) -> str:
    if resolution.origin == "session":
        return f"session ({session.session_id})" if session is not None else "session"
    if resolution.origin in ("override", "shared-override"):
        return f"{resolution.source} in {overrides_dir}"
    return "placeholder (no digest yet: run `promptkit optimize` or store one)"
