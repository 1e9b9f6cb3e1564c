"""Whether a stored digest still describes its workspace, and warning about it once.

A digest whose provenance records a head_sha or fingerprint is compared against the workspace
as it is now (`describe_workspace`: a `git ls-files` listing, a stat per file, and an 8 KiB
binary sniff of each file except tracked, unmodified ones already sniffed with the same blob id
and stat; no content is hashed), so a new commit or an uncommitted edit show at the next render.
Renders keep using a stale digest (a slightly old summary beats none) and log
`workspace_digest_stale` once per digest and workspace state, remembered in a small bounded
cache. Describing a workspace takes milliseconds to tens of milliseconds, against microseconds
for a render, so a render may reuse a check of the same digest made less than `max_age_s` ago.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.digest._committed import CONTENT_FINGERPRINT, LEFT_OUT, current_state
from promptkit.digest._state import WorkspaceDigest
from promptkit.errors import WorkspaceError
from promptkit.hostfiles import WorkspaceManifest, describe_workspace
from promptkit.logging import get_logger
from promptkit.overrides import ProvenanceValue

_log = get_logger("promptkit.digest")

_WARNED_LIMIT = 256
_RECENT_CHECKS_LIMIT = 64


@dataclass(frozen=True)
class DigestFreshness:
    """How a digest's recorded workspace state compares with the workspace now.

    `is_stale` is None when it cannot be told: the digest has no provenance, its workspace
    directory is unknown or gone, or the provenance records neither head_sha nor fingerprint.
    `current` is the workspace's manifest now, when it could be read.
    """

    is_stale: bool | None
    current: WorkspaceManifest | None
    reason: str


def check_freshness(
    digest: WorkspaceDigest, *, max_age_s: float = 0.0, clock: Clock = SYSTEM_CLOCK
) -> DigestFreshness:
    """Compare `digest.provenance` with its workspace as it is now.

    With `max_age_s` above 0, a check of the same digest made less than that many seconds ago
    (by `clock`) is returned instead of describing the workspace again.
    """
    key = (
        digest.workspace_root,
        digest.section_key,
        digest.created_at.isoformat(),
        digest.provenance.fingerprint if digest.provenance else None,
    )
    if max_age_s > 0:
        recent = _recent_checks.get(key, max_age_s, clock)
        if recent is not None:
            return recent
    freshness = _compare(digest)
    _recent_checks.put(key, freshness, clock)
    return freshness


def _compare(digest: WorkspaceDigest) -> DigestFreshness:
    recorded = digest.provenance
    if recorded is None:
        return DigestFreshness(None, None, "the digest records no workspace provenance")
    if recorded.head_sha is None and recorded.fingerprint is None:
        return DigestFreshness(None, None, "the provenance records no head_sha or fingerprint")
    if digest.workspace_root is None:
        return DigestFreshness(
            None, None, f"the workspace {recorded.source} is not a local directory known here"
        )
    try:
        current = describe_workspace(digest.workspace_root)
    except WorkspaceError as error:
        return DigestFreshness(None, None, f"the workspace cannot be read now: {error}")
    changes = []
    if recorded.head_sha is not None and current.head_sha != recorded.head_sha:
        changes.append("head_sha")
    if recorded.fingerprint is not None and current.fingerprint != recorded.fingerprint:
        changes.append("fingerprint")
    if changes:
        return DigestFreshness(True, current, f"the workspace {' and '.join(changes)} changed")
    return DigestFreshness(False, current, "the workspace is unchanged since the digest")


def check_committed_freshness(
    provenance: Mapping[str, ProvenanceValue] | None,
    workspace: Path | None,
    *,
    max_age_s: float = 0.0,
    clock: Clock = SYSTEM_CLOCK,
) -> DigestFreshness:
    """Compare a committed digest's content fingerprint with its workspace as it is now
    (`promptkit.digest._committed`); reuses a check younger than `max_age_s` by `clock`, as
    `check_freshness` does."""
    recorded = (provenance or {}).get(CONTENT_FINGERPRINT)
    if not isinstance(recorded, str):
        return DigestFreshness(None, None, "the override records no workspace provenance")
    if workspace is None or not workspace.is_dir():
        return DigestFreshness(
            None, None, f"its workspace ({workspace or 'not recorded'}) is not a folder here"
        )
    left_out = (provenance or {}).get(LEFT_OUT)
    key = ("committed", str(workspace), recorded, left_out if isinstance(left_out, str) else None)
    if max_age_s > 0:
        recent = _recent_checks.get(key, max_age_s, clock)
        if recent is not None:
            return recent
    try:
        current, fingerprint = current_state(workspace, left_out=key[3])
    except WorkspaceError as error:
        return DigestFreshness(None, None, f"the workspace cannot be read now: {error}")
    if fingerprint != recorded:
        freshness = DigestFreshness(True, current, "the content of the workspace's files changed")
    else:
        freshness = DigestFreshness(False, current, "the workspace's files are as described")
    _recent_checks.put(key, freshness, clock)
    return freshness


class _SeenOnce:
    """Remembers up to `limit` keys, forgetting the oldest; `first_time` is thread-safe."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._keys: OrderedDict[tuple[str | None, ...], None] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, key: tuple[str | None, ...]) -> bool:
        with self._lock:
            if key in self._keys:
                self._keys.move_to_end(key)
                return False
            self._keys[key] = None
            if len(self._keys) > self._limit:
                self._keys.popitem(last=False)
            return True


_warned = _SeenOnce(_WARNED_LIMIT)


def first_warning(key: tuple[str | None, ...]) -> bool:
    """True the first time a digest warning with this key is asked for (bounded memory)."""
    return _warned.first_time(key)


class _RecentChecks:
    """The latest check per digest, with when it was made and by which clock; bounded,
    thread-safe. A check timed by another clock is never reused: the two times do not compare."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._checks: OrderedDict[tuple[str | None, ...], tuple[Clock, float, DigestFreshness]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def get(
        self, key: tuple[str | None, ...], max_age_s: float, clock: Clock
    ) -> DigestFreshness | None:
        with self._lock:
            entry = self._checks.get(key)
            if entry is None:
                return None
            checked_by, checked_at, freshness = entry
            if checked_by is not clock or clock.monotonic() - checked_at >= max_age_s:
                return None
            self._checks.move_to_end(key)
            return freshness

    def put(self, key: tuple[str | None, ...], freshness: DigestFreshness, clock: Clock) -> None:
        with self._lock:
            self._checks[key] = (clock, clock.monotonic(), freshness)
            self._checks.move_to_end(key)
            if len(self._checks) > self._limit:
                self._checks.popitem(last=False)


_recent_checks = _RecentChecks(_RECENT_CHECKS_LIMIT)


def warn_if_stale(
    digest: WorkspaceDigest, freshness: DigestFreshness, *, prompt_ns: str, prompt_key: str
) -> None:
    """Log `workspace_digest_stale` the first time this digest meets this workspace state."""
    if not freshness.is_stale or digest.provenance is None or freshness.current is None:
        return
    recorded, current = digest.provenance, freshness.current
    key = (
        digest.section_key,
        digest.created_at.isoformat(),
        recorded.head_sha,
        recorded.fingerprint,
        current.head_sha,
        current.fingerprint,
    )
    if not _warned.first_time(key):
        return
    _log.warning(
        "workspace_digest_stale",
        prompt_ns=prompt_ns,
        prompt_key=prompt_key,
        section_key=digest.section_key,
        workspace=digest.workspace_root,
        digest_created_at=digest.created_at.isoformat(),
        recorded_head_sha=recorded.head_sha,
        current_head_sha=current.head_sha,
        recorded_fingerprint=recorded.fingerprint,
        current_fingerprint=current.fingerprint,
        reason=freshness.reason,
    )
