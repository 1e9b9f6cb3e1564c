"""Session benchmark: dispatch throughput in memory and persisted, and load time, with baselines.

Every figure is printed next to a baseline measured in the same run on the same events
(`ToolInvoked` values with a small JSON payload):

- in memory: `Session.dispatch` against appending the events to a Python list;
- persisted, once per fsync policy: dispatch into a session attached to a SessionStore against
  writing equivalent JSON lines with `os.write` and the same fsync cadence;
- load: `SessionStore.load` of a session with `--load-events` events against reading the same
  events.jsonl and `json.loads`-ing every line.

Files go to a temporary directory under `--dir` (default: the system temp directory); fsync
figures depend on the filesystem that directory lives on.

Usage: python benchmarks/session_bench.py [--events 20000] [--fsync-events 1000]
                                          [--load-events 100000] [--dir PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptkit.session import FsyncPolicy, Session, SessionStore, ToolInvoked

WHEN = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Plain:
    """Not a registered slice type: dispatching it skips the JSON check."""

    index: int
    call_id: str


def _events(count: int) -> list[ToolInvoked]:
    return [
        ToolInvoked(
            prompt_ns="bench",
            prompt_key="session",
            name="search",
            params={"query": f"term {i}", "limit": 10},
            result_message=f"found {i % 7} results",
            value={"hits": [i, i + 1, i + 2]},
            success=True,
            duration_s=0.0125,
            call_id=f"call-{i}",
            invoked_at=WHEN,
        )
        for i in range(count)
    ]


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _timed_each(action: Callable[[Any], object], items: Sequence[Any]) -> float:
    start = time.perf_counter()
    for item in items:
        action(item)
    return time.perf_counter() - start


def _raw_record(seq: int, event: ToolInvoked) -> bytes:
    # What a hand-written logger would store: the same fields, one JSON line per event.
    record = {
        "seq": seq,
        "recorded_at": datetime.now(UTC).isoformat(),
        "name": event.name,
        "params": dict(event.params),
        "result_message": event.result_message,
        "value": event.value,
        "success": event.success,
        "duration_s": event.duration_s,
        "call_id": event.call_id,
        "invoked_at": event.invoked_at.isoformat(),
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def _raw_append(path: Path, events: list[ToolInvoked], fsync_every: int | None) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for seq, event in enumerate(events, start=1):
            os.write(fd, _raw_record(seq, event))
            if fsync_every is not None and seq % fsync_every == 0:
                os.fsync(fd)
        os.fsync(fd)
    finally:
        os.close(fd)


def _persisted_dispatch(
    root: Path, workspace: Path, policy: FsyncPolicy, events: list[ToolInvoked], label: str
) -> float:
    session = Session(session_id=f"bench-{label}")
    with SessionStore(root, fsync=policy) as store:
        store.attach(session, workspace)

        start = time.perf_counter()
        for event in events:
            session.dispatch(event)
        store.close()
        return time.perf_counter() - start


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>12,.0f} events/s"


# A benchmark's main lists each step it measures, in the order it runs them.
def main() -> None:  # noqa: PLR0915
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--fsync-events", type=int, default=1_000, help="events for every_event")
    parser.add_argument("--load-events", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()

    # Library logs (session_attached, ...) are not part of the figures.
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))

    events = _events(max(args.events, args.fsync_events))
    scratch = Path(tempfile.mkdtemp(prefix="session-bench-", dir=args.dir))
    try:
        workspace = scratch / "workspace"
        workspace.mkdir()
        root = scratch / "state"

        print(f"session benchmark in {scratch}")
        print(f"\nin memory, {args.events:,} dispatches")
        in_memory = events[: args.events]
        appended: list[object] = []
        baseline = _timed_each(appended.append, in_memory)
        plain = [Plain(i, f"call-{i}") for i in range(args.events)]
        unregistered = Session()
        registered = Session()
        figures = {
            "Session.dispatch, unregistered type": _timed_each(unregistered.dispatch, plain),
            "Session.dispatch, ToolInvoked (checked)": _timed_each(registered.dispatch, in_memory),
        }
        print(f"  list.append baseline                     {_rate(args.events, baseline)}")
        for label, seconds in figures.items():
            print(
                f"  {label:<40} {_rate(args.events, seconds)}"
                f"   {seconds / baseline:6.1f}x baseline time"
            )

        policies = [
            ("every_event", FsyncPolicy.every_event(), args.fsync_events, 1),
            ("every_100", FsyncPolicy.every(100), args.events, 100),
            ("on_close", FsyncPolicy.on_close(), args.events, None),
        ]
        print("\npersisted (SessionStore) vs raw json lines + os.write with the same fsyncs")
        for label, policy, count, every in policies:
            batch = events[:count]
            start = time.perf_counter()
            _raw_append(scratch / f"{label}.raw", batch, every)
            raw = time.perf_counter() - start
            stored = _persisted_dispatch(root, workspace, policy, batch, label.replace("_", "-"))
            print(
                f"  fsync {label:<12} {count:>7,} events: store {_rate(count, stored)}, "
                f"raw {_rate(count, raw)}   {stored / raw:5.2f}x raw time"
            )

        print(f"\nload of a session with {args.load_events:,} events")
        big = Session(session_id="bench-load")
        load_events = _events(args.load_events)
        with SessionStore(root, fsync=FsyncPolicy.on_close()) as store:
            store.attach(big, workspace)
            written = _timed_each(big.dispatch, load_events)
        print(f"  writing it (fsync on close) {_rate(args.load_events, written)}")
        store = SessionStore(root)
        events_file = store.session_dir(workspace, "bench-load") / "events.jsonl"
        size_mb = events_file.stat().st_size / 1e6
        raw_load = _timed_each(json.loads, events_file.read_bytes().splitlines())
        loaded: list[Session] = []
        load_time = _timed(lambda: loaded.append(store.load(workspace, "bench-load")))
        assert len(loaded[0].select_all(ToolInvoked)) == args.load_events
        print(f"  events.jsonl                {size_mb:8.1f} MB")
        print(f"  json.loads baseline         {raw_load:8.2f} s")
        print(
            f"  SessionStore.load           {load_time:8.2f} s   "
            f"{load_time / raw_load:5.2f}x baseline time, {_rate(args.load_events, load_time)}"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
