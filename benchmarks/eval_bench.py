"""Evaluation benchmark: `run_evaluation` over many cases against a fake provider with a fixed
reply delay, against the ideal time and against the bare SDK, measured in the same run.

A FakeProviderServer runs in a child process (so its threads do not share our interpreter) and
answers every request after `--delay` seconds. Three figures:
- ideal: cases x delay / concurrency, what perfect overlap of the waits would take;
- bare SDK: the same number of requests sent by `openai.AsyncOpenAI` with the same
  concurrency and nothing else (the floor this server and SDK allow);
- promptkit: `run_evaluation` of a one-section prompt, one ExactMatch evaluator.
promptkit's own overhead per case is (promptkit - bare SDK) x concurrency / cases: the extra time
each concurrency slot spends per case (render, session, parsing, scoring, bookkeeping). With one
event loop the client is CPU-bound at these settings, so CPU per case (this process) is reported
next to wall time.

The two are measured alternately `--repeat` times and the best of each is reported; before each
timed part the garbage of the warm-up and of earlier parts is collected, so neither pays for
the other's.

Usage: python benchmarks/eval_bench.py [--cases 1000] [--delay 0.05] [--concurrency 32]
       [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from promptkit import MarkdownSection, Prompt
from promptkit.adapters import OpenAIAdapter
from promptkit.evals import Case, Dataset, ExactMatch, run_evaluation

_SERVER = """
import sys
from promptkit.testing import FakeProviderServer, Reply

delay = float(sys.argv[1])
with FakeProviderServer() as server:
    server.respond_with(lambda request: Reply.delay(delay, Reply.text("Paris")))
    print(server.openai_base_url, flush=True)
    sys.stdin.read()
"""

_KEY = "bench-key"


@dataclass(frozen=True)
class Country:
    name: str


PROMPT: Prompt[None] = Prompt(
    ns="bench",
    key="capital",
    sections=(
        MarkdownSection(
            title="Question",
            key="question",
            params_type=Country,
            template="What is the capital of {{ name }}?",
        ),
    ),
)


@dataclass(frozen=True)
class Timing:
    """Wall seconds, and CPU seconds of this process (the server runs in another one)."""

    wall: float
    cpu: float


async def _bare_sdk(base_url: str, cases: int, concurrency: int) -> Timing:
    import openai

    client = openai.AsyncOpenAI(api_key=_KEY, base_url=base_url, max_retries=0)
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with gate:
            await client.responses.create(model="fake-model", input=f"Land {index}?")

    await one(-1)  # warm the connection pool and the SDK's lazy imports
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(index) for index in range(cases)))
    timing = Timing(time.perf_counter() - started, time.process_time() - cpu)
    await client.close()
    return timing


def _promptkit(base_url: str, cases: int, concurrency: int) -> tuple[Timing, int]:
    adapter = OpenAIAdapter(
        model="fake-model", client_kwargs={"api_key": _KEY, "base_url": base_url, "max_retries": 0}
    )
    dataset = Dataset(
        "bench",
        tuple(
            Case(f"c{index}", (Country(f"Land {index}"),), expected="Paris")
            for index in range(cases)
        ),
    )
    run_evaluation(PROMPT, Dataset("warm", dataset.cases[:concurrency]), adapter, [ExactMatch()])
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    report = run_evaluation(PROMPT, dataset, adapter, [ExactMatch()], concurrency=concurrency)
    timing = Timing(time.perf_counter() - started, time.process_time() - cpu)
    return timing, report.summary("latest").failed


def _best(runs: list[Timing]) -> Timing:
    """The shortest wall time and the least CPU among `runs` (noise only ever adds)."""
    return Timing(min(run.wall for run in runs), min(run.cpu for run in runs))


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (Linux /proc; 0.0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime and stime are fields 14 and 15 of stat(5), counted from the state field (3).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(args.delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        ideal = args.cases * args.delay / args.concurrency
        sdk_runs: list[Timing] = []
        our_runs: list[Timing] = []
        server_cpu_sdk = server_cpu_ours = 0.0
        failed = 0
        for _ in range(max(1, args.repeat)):
            before = _cpu_seconds(server.pid)
            sdk_runs.append(asyncio.run(_bare_sdk(base_url, args.cases, args.concurrency)))
            between = _cpu_seconds(server.pid)
            timing, failed_now = _promptkit(base_url, args.cases, args.concurrency)
            our_runs.append(timing)
            server_cpu_sdk += between - before
            server_cpu_ours += _cpu_seconds(server.pid) - between
            failed = max(failed, failed_now)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=30)
    sdk, ours = _best(sdk_runs), _best(our_runs)
    requests = args.cases * len(sdk_runs)
    overhead_ms = (ours.wall - sdk.wall) * args.concurrency / args.cases * 1000
    print(
        f"{args.cases} cases, {args.delay * 1000:.0f} ms reply delay, concurrency"
        f" {args.concurrency}; best of {len(sdk_runs)} alternate runs each"
    )
    print(f"ideal (cases x delay / concurrency): {ideal:.2f} s")
    print(f"bare AsyncOpenAI:         {sdk.wall:.2f} s  ({sdk.wall / ideal:.2f}x ideal)")
    print(
        f"promptkit run_evaluation: {ours.wall:.2f} s  ({ours.wall / ideal:.2f}x ideal,"
        f" {ours.wall / sdk.wall:.2f}x bare SDK)"
    )
    print(f"promptkit overhead per case (wall, per concurrency slot): {overhead_ms:.2f} ms")
    print(
        f"CPU per case: bare SDK {sdk.cpu / args.cases * 1000:.2f} ms, promptkit"
        f" {ours.cpu / args.cases * 1000:.2f} ms"
        f" (promptkit's own: {(ours.cpu - sdk.cpu) / args.cases * 1000:.2f} ms)"
    )
    print(
        f"fake server CPU per request: bare SDK {server_cpu_sdk / requests * 1000:.2f} ms,"
        f" promptkit {server_cpu_ours / requests * 1000:.2f} ms (its warm-up included)"
    )
    print(
        f"load average: {load_before:.1f} before, {os.getloadavg()[0]:.1f} at the end, on"
        f" {os.cpu_count()} CPUs"
    )
    print(f"failed cases: {failed}")


if __name__ == "__main__":
    main()
