"""`promptkit digest status`: where a workspace's digest would come from, how old, how fresh.

It resolves exactly as `WorkspaceDigestSection` does at render time (session digest, the
prompt's own override, a shared override, the placeholder) without rendering anything. The
prompt is the one `optimize` and `render` use (`--prompt`, default the built-in workspace
prompt), bound to the most recently active session stored for the workspace
(`SessionStore.latest`). `resolution_lines` is how this command and the REPL's `digest` describe
a resolved digest.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from promptkit.digest import DigestResolution
    from promptkit.session import Session


def register(subparsers: Any) -> None:
    """Add `digest status` to the `promptkit` parser."""
    from promptkit.cli.options import add_path_argument, add_prompt_arguments

    digest = subparsers.add_parser(
        "digest",
        help="inspect workspace digests",
        description="Inspect the workspace digest a prompt would render.",
    )
    commands = digest.add_subparsers(dest="digest_command", metavar="SUBCOMMAND", required=True)
    status = commands.add_parser(
        "status",
        help="print where the digest comes from, its age, and whether it is stale",
        description="Print where the workspace digest comes from (session, override,"
        " shared-override or placeholder), its age, and whether the workspace changed since.",
    )
    add_path_argument(status)
    add_prompt_arguments(status)
    status.set_defaults(handler=run_status)


def run_status(args: argparse.Namespace) -> int:
    """Resolve and print the digest status; returns the exit status."""
    from promptkit.cli.workspace_prompt import bind_workspace
    from promptkit.digest import resolve_workspace_digest

    bound = bind_workspace(
        args.path, prompt=args.prompt, state_dir=args.state_dir, overrides_dir=args.overrides_dir
    )
    prompt = bound.prompt
    resolution = resolve_workspace_digest(prompt, overrides_store=bound.overrides, tag=args.tag)
    origin = _origin_text(resolution, bound.stored_session, bound.overrides.root, args.tag)
    lines = [
        f"workspace: {bound.workspace}",
        f"prompt:    {prompt.ns}/{prompt.key}",
        *resolution_lines(resolution, origin=origin),
    ]
    print("\n".join(lines))
    return 0


def resolution_lines(resolution: DigestResolution, *, origin: str) -> list[str]:
    """How `digest status` and the REPL's `digest` describe a resolved digest, one aligned
    `name: value` line each: the section, `origin` (as the caller words where the body came
    from), when it was updated and how long ago, its author, and whether it is fresh."""
    lines = [f"section:   {resolution.section_key}", f"origin:    {origin}"]
    if resolution.updated_at is not None:
        age = describe_age(datetime.now(UTC) - resolution.updated_at)
        lines.append(f"updated:   {resolution.updated_at.isoformat()} ({age} ago)")
    if resolution.author is not None:
        lines.append(f"author:    {resolution.author}")
    lines.append(f"freshness: {_freshness_text(resolution)}")
    return lines


def _origin_text(
    resolution: DigestResolution, session: Session | None, overrides_dir: Path, tag: str
) -> str:
    if resolution.origin == "session":
        return f"session ({session.session_id})" if session is not None else "session"
    if resolution.origin in ("override", "shared-override"):
        return f"{resolution.origin} (tag {tag} in {overrides_dir})"
    return "placeholder (no digest yet: run `promptkit optimize` or store one)"


def _freshness_text(resolution: DigestResolution) -> str:
    freshness = resolution.freshness
    if resolution.origin == "placeholder":
        return "none (nothing to compare)"
    if freshness is None:
        if resolution.origin == "session":
            return "unknown (the digest records no workspace provenance)"
        return "unknown (overrides record no workspace provenance)"
    if freshness.is_stale is None:
        return f"unknown ({freshness.reason})"
    if not freshness.is_stale:
        return "fresh"
    recorded, current = resolution.provenance, freshness.current
    detail = [freshness.reason]
    if recorded is not None and current is not None:
        if recorded.head_sha != current.head_sha:
            detail.append(f"head {_short(recorded.head_sha)} -> {_short(current.head_sha)}")
        if recorded.fingerprint != current.fingerprint:
            detail.append(
                f"fingerprint {_short(recorded.fingerprint)} -> {_short(current.fingerprint)}"
            )
    return f"stale ({'; '.join(detail)})"


def _short(value: str | None) -> str:
    return value[:12] if value else "none"


def describe_age(elapsed: timedelta) -> str:
    """A timedelta as `45s`, `3m 12s`, `2h 5m` or `4d 3h`."""
    seconds = max(0, int(elapsed.total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {seconds}s"
    return f"{seconds}s"
