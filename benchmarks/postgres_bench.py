"""PostgreSQL stores against the file stores, in the same run, and fault probes.

Turns: `--processes` worker processes (default 8) each append `--turns` conversation turns
(default 500; a turn is a user message and its answer, one session event) to `--sessions` shared
sessions (default 16, so workers contend), each turn as a worker serving a request does it: load
the session, attach, keep the turn, close; a turn refused because another worker moved the
session (SessionStaleError) or holds it (the file store's lock) is loaded and tried again. The
same workload runs on a SessionStore in a temp folder and on a PostgresSessionStore; p50/p99 of
an acknowledged turn and turns per second are printed side by side, then every session is
loaded and checked: each acknowledged turn present exactly once, its two messages adjacent (0
lost, 0 interleaved).

Reads: `--reads` (default 10,000) `resolve` calls of one prompt's overrides from a
LocalPromptOverridesStore and from a PostgresOverridesStore (served from its cache), and how
long a change committed by one store takes to reach another's cache (LISTEN/NOTIFY).

Probes (`--probes`): a worker killed with SIGKILL mid-turn, ten times (only whole turns remain,
no acknowledged turn lost); `pg_ctl restart` while the workers run (failures are typed
DatabaseErrors, retried by the worker; no acknowledged turn lost); a pool of 2 with 8 callers
while a table lock holds the 2 connections (DatabaseBusyError after pool_timeout, no hang).

The server is a throwaway PostgreSQL 15 started by `promptkit.testing.PostgresServer` in a
temp folder, with durable settings (fsync on), as the file store fsyncs every event.

Usage: nice -n 10 python benchmarks/postgres_bench.py [--processes 8] [--turns 500]
           [--sessions 16] [--reads 10000] [--probes]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptkit import Prompt, TextSection
from promptkit.adapters import Message, conversation_messages
from promptkit.adapters._conversation import keep_messages
from promptkit.database import upgrade_database
from promptkit.errors import DatabaseBusyError, DatabaseError, SessionError, SessionStaleError
from promptkit.overrides import LocalPromptOverridesStore, PostgresOverridesStore
from promptkit.session import PostgresSessionStore, Session, SessionStore, SessionStoreProtocol
from promptkit.testing import PostgresServer

WHEN = datetime(2026, 1, 1, tzinfo=UTC)
PROMPT = Prompt(
    ns="bench",
    key="review",
    sections=tuple(
        TextSection(title=f"Part {i}", key=f"part-{i}", text=f"default {i}") for i in range(8)
    ),
)


def _store(kind: str, target: str) -> SessionStoreProtocol:
    return SessionStore(target) if kind == "files" else PostgresSessionStore(target)


def _session_id(number: int) -> str:
    return f"shared-{number}"


def _one_turn(
    store: SessionStoreProtocol, workspace: Path, session_id: str, question: str
) -> tuple[int, int]:
    """Keep one turn in `session_id`, retrying while another worker holds or moved it; returns
    (refusals, database errors) met on the way."""
    refusals = errors = 0
    while True:
        try:
            session = store.load(workspace, session_id)
            with store.attach(session, workspace):
                keep_messages(
                    session,
                    "chat",
                    [Message.user(question), Message.assistant(f"answer {question}")],
                    added_at=WHEN,
                )
            return refusals, errors
        except (SessionError, SessionStaleError):  # moved by another worker, or its lock held
            refusals += 1
            time.sleep(random.uniform(0.0005, 0.002))
        except DatabaseError:
            errors += 1
            if errors > 200:
                raise
            time.sleep(0.05)


def worker(kind: str, target: str, workspace: str, name: str, turns: int, sessions: int) -> None:
    """One worker process: `turns` turns, one line of JSON per acknowledged turn on stdout."""
    store = _store(kind, target)
    index = int(name.removeprefix("w")) if name.startswith("w") else 0
    for turn in range(turns):
        session_id = _session_id((index * 7 + turn) % sessions)
        question = f"{name}-{turn}"
        started = time.perf_counter()
        refusals, errors = _one_turn(store, Path(workspace), session_id, question)
        elapsed = time.perf_counter() - started
        print(json.dumps([question, session_id, elapsed, refusals, errors]), flush=True)
    store.close()


def _spawn(kind: str, target: str, workspace: Path, name: str, turns: int, sessions: int) -> Any:
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", kind, target, str(workspace), name, str(turns),
         str(sessions)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _prepare(kind: str, target: str, workspace: Path, sessions: int) -> None:
    store = _store(kind, target)
    for number in range(sessions):
        with store.attach(Session(session_id=_session_id(number)), workspace):
            pass
    store.close()


def _acknowledged(processes: list[Any]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for process in processes:
        assert process.stdout is not None
        rows.extend(json.loads(line) for line in process.stdout)
        process.wait()
    return rows


def _verify(
    kind: str, target: str, workspace: Path, sessions: int, acknowledged: list[list[Any]]
) -> dict[str, int]:
    """Load every session: acknowledged turns missing, turns interleaved, turns twice."""
    store = _store(kind, target)
    found: dict[str, int] = {}
    interleaved = 0
    for number in range(sessions):
        texts = [
            m.text
            for m in conversation_messages(store.load(workspace, _session_id(number)), "chat")
        ]
        for question, answer in zip(texts[::2], texts[1::2], strict=False):
            if answer != f"answer {question}":
                interleaved += 1
            found[question] = found.get(question, 0) + 1
        interleaved += len(texts) % 2
    store.close()
    lost = sum(1 for row in acknowledged if row[0] not in found)
    twice = sum(1 for count in found.values() if count > 1)
    return {"lost": lost, "interleaved": interleaved, "twice": twice, "stored": len(found)}


def run_turns(
    kind: str, target: str, workspace: Path, processes: int, turns: int, sessions: int
) -> dict[str, Any]:
    _prepare(kind, target, workspace, sessions)
    started = time.perf_counter()
    workers = [_spawn(kind, target, workspace, f"w{n}", turns, sessions) for n in range(processes)]
    rows = _acknowledged(workers)
    wall = time.perf_counter() - started
    latencies = sorted(row[2] for row in rows)
    checked = _verify(kind, target, workspace, sessions, rows)
    return {
        "turns": len(rows),
        "p50_ms": 1000 * _quantile(latencies, 0.50),
        "p99_ms": 1000 * _quantile(latencies, 0.99),
        "turns_per_s": len(rows) / wall,
        "refusals": sum(row[3] for row in rows),
        "database_errors": sum(row[4] for row in rows),
        "exit_codes": [w.returncode for w in workers],
        **checked,
    }


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def run_reads(url: str, folder: Path, reads: int) -> dict[str, Any]:
    local = LocalPromptOverridesStore(folder)
    remote = PostgresOverridesStore(url)
    for store in (local, remote):
        for i in range(8):
            store.set_section_override(PROMPT, path=f"part-{i}", body=f"tuned text {i}")
    result: dict[str, Any] = {}
    for name, store in (("files", local), ("postgres", remote)):
        store.resolve(PROMPT.descriptor)
        times = []
        for _ in range(reads):
            started = time.perf_counter()
            store.resolve(PROMPT.descriptor)
            times.append(time.perf_counter() - started)
        times.sort()
        result[name] = {
            "p50_us": 1e6 * _quantile(times, 0.5),
            "p99_us": 1e6 * _quantile(times, 0.99),
            "reads_per_s": reads / sum(times),
        }
    # Notification latency: a write by one store, seen by another's cache.
    other = PostgresOverridesStore(url)
    other.resolve(PROMPT.descriptor)
    delays = []
    for i in range(20):
        remote.set_section_override(PROMPT, path="part-0", body=f"changed {i}")
        committed = time.perf_counter()
        while True:
            entry = other.resolve(PROMPT.descriptor)
            if entry is not None and entry.sections[("part-0",)].body == f"changed {i}":
                break
            other.wait_for_change(timeout=0.001)
        delays.append(time.perf_counter() - committed)
    delays.sort()
    result["notify_ms"] = {"p50": 1000 * _quantile(delays, 0.5), "max": 1000 * delays[-1]}
    for store in (remote, other):
        store.close()
    return result


def probe_kill(url: str, workspace: Path) -> dict[str, Any]:
    """Kill a worker with SIGKILL mid-turn ten times; only whole turns may remain."""
    _prepare("postgres", url, workspace, 1)
    acknowledged: list[list[Any]] = []
    for attempt in range(10):
        process = _spawn("postgres", url, workspace, f"k{attempt}", 100_000, 1)
        assert process.stdout is not None
        for _ in range(random.randint(2, 6)):
            acknowledged.append(json.loads(process.stdout.readline()))
        time.sleep(random.uniform(0.0, 0.01))
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    return {"kills": 10, **_verify("postgres", url, workspace, 1, acknowledged)}


def probe_restart(server: PostgresServer, url: str, workspace: Path, turns: int) -> dict[str, Any]:
    """Restart the server while 8 workers append turns."""
    _prepare("postgres", url, workspace, 4)
    workers = [_spawn("postgres", url, workspace, f"w{n}", turns, 4) for n in range(8)]
    time.sleep(1.0)
    started = time.perf_counter()
    server.restart()
    restart_s = time.perf_counter() - started
    rows = _acknowledged(workers)
    checked = _verify("postgres", url, workspace, 4, rows)
    return {
        "restart_s": restart_s,
        "turns": len(rows),
        "typed_failures_retried": sum(row[4] for row in rows),
        "exit_codes": [w.returncode for w in workers],
        **checked,
    }


def probe_pool(url: str, workspace: Path) -> dict[str, Any]:
    """A pool of 2, 8 callers, the 2 connections held by a table lock for 3 s."""
    import psycopg

    store = PostgresSessionStore(url, pool_size=2, pool_timeout=1.0)
    _prepare("postgres", url, workspace, 1)
    outcomes: list[str] = []
    lock = threading.Lock()

    def call() -> None:
        try:
            store.sessions(workspace)
            outcome = "ok"
        except DatabaseBusyError:
            outcome = "DatabaseBusyError"
        except DatabaseError as error:
            outcome = type(error).__name__
        with lock:
            outcomes.append(outcome)

    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE promptkit_sessions IN ACCESS EXCLUSIVE MODE")
        started = time.perf_counter()
        threads = [threading.Thread(target=call) for _ in range(8)]
        for thread in threads:
            thread.start()
        time.sleep(3.0)
        holder.commit()
    for thread in threads:
        thread.join(timeout=60)
    elapsed = time.perf_counter() - started
    store.close()
    return {
        "outcomes": {name: outcomes.count(name) for name in sorted(set(outcomes))},
        "hung": sum(thread.is_alive() for thread in threads),
        "elapsed_s": elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--reads", type=int, default=10_000)
    parser.add_argument("--probes", action="store_true")
    args = parser.parse_args()

    with (
        PostgresServer.start(durable=True) as server,
        tempfile.TemporaryDirectory() as temp,
    ):
        root = Path(temp)
        workspace = root / "workspace"
        workspace.mkdir()
        url = server.create_database("bench")
        upgrade_database(url)
        print(f"{args.processes} processes x {args.turns} turns on {args.sessions} shared sessions")
        results = {}
        for kind, target in (("files", str(root / "state")), ("postgres", url)):
            results[kind] = run_turns(
                kind, target, workspace, args.processes, args.turns, args.sessions
            )
            print(f"  {kind:8} {json.dumps(results[kind])}")
        files, pg = results["files"], results["postgres"]
        print(
            f"  postgres/files: p50 x{pg['p50_ms'] / files['p50_ms']:.2f},"
            f" p99 x{pg['p99_ms'] / files['p99_ms']:.2f},"
            f" throughput x{pg['turns_per_s'] / files['turns_per_s']:.2f}"
        )
        reads = run_reads(url, root / "overrides", args.reads)
        print(f"{args.reads} override reads: {json.dumps(reads)}")
        print(
            f"  postgres/files: p50 x{reads['postgres']['p50_us'] / reads['files']['p50_us']:.2f}"
        )
        if args.probes:
            for folder in ("kill", "restart", "pool"):
                (root / folder).mkdir()
            print(f"probe kill -9 mid-turn: {json.dumps(probe_kill(url, root / 'kill'))}")
            restart = probe_restart(server, url, root / "restart", max(20, args.turns // 5))
            print(f"probe pg_ctl restart mid-run: {json.dumps(restart)}")
            print(f"probe pool exhausted: {json.dumps(probe_pool(url, root / 'pool'))}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, target, workspace, name, turns, sessions = sys.argv[2:8]
        worker(kind, target, workspace, name, int(turns), int(sessions))
    else:
        main()
