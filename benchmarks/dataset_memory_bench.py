"""Dataset memory benchmark: the peak memory of loading and running a 1 GB JSONL dataset.

A JSONL dataset is streamed (`promptkit.evals._dataset_file`): memory should follow the number
of cases, not the size of the file. The file is generated in a temporary folder (never kept)
in two shapes of the same size:
- many small cases (about 1 KB each): `load_dataset`, then every case read back, as a run reads
  them, with no model;
- few large cases (an `expected` text of about 500 KB each): `load_dataset` and `run_evaluation`
  of every case against a FakeProviderServer in a child process (the texts are not sent).

Each part runs in a child process of its own, so each peak (`ru_maxrss`) is its own. The
baseline is the same child's resident memory after its imports and before the dataset is
touched, measured in the same run; the figure to watch is the peak above it, against the file's
size. Target: a peak under 200 MB.

Usage: python benchmarks/dataset_memory_bench.py [--size-mb 1024] [--keep-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass


def rss_mb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


from promptkit import MarkdownSection, Prompt
from promptkit.adapters import OpenAIAdapter
from promptkit.evals import ExactMatch, load_dataset, run_evaluation


@dataclass(frozen=True)
class Country:
    name: str


PROMPT = Prompt(
    ns="bench",
    key="capital",
    sections=(
        MarkdownSection(
            title="Question", key="question", params_type=Country,
            template="What is the capital of {{ name }}?",
        ),
    ),
)
path, part = sys.argv[1], sys.argv[2]
baseline = rss_mb()
started = time.perf_counter()
dataset = load_dataset(path, PROMPT)
loaded = time.perf_counter() - started
if part == "read":
    count = sum(1 for _ in dataset.cases)
    failed = 0
else:
    server = subprocess.Popen(
        [sys.executable, "-c", sys.argv[3]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )
    base_url = server.stdout.readline().strip()
    adapter = OpenAIAdapter(
        model="fake-model",
        client_kwargs={"api_key": "bench-key", "base_url": base_url, "max_retries": 0},
    )
    report = run_evaluation(PROMPT, dataset, adapter, [ExactMatch()], concurrency=8)
    server.stdin.close()
    server.wait(timeout=60)
    count = len(report.results)
    failed = report.summary("latest").failed
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({
    "cases": count, "invalid": len(dataset.invalid), "failed": failed,
    "baseline_mb": baseline, "peak_mb": peak, "load_s": loaded,
    "total_s": time.perf_counter() - started,
}))
"""

_SERVER = """
import sys
from promptkit.testing import FakeProviderServer, Reply

with FakeProviderServer() as server:
    server.respond_with(lambda request: Reply.text("Paris"))
    print(server.openai_base_url, flush=True)
    sys.stdin.read()
"""


def _write_dataset(path: Path, size: int, expected_bytes: int) -> int:
    """Cases of about `expected_bytes` each until the file holds `size` bytes; their count."""
    filler = ("Paris is the capital of France. " * (expected_bytes // 32 + 1))[:expected_bytes]
    count = written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < size:
            line = json.dumps(
                {"id": f"case-{count}", "params": {"name": f"Land {count}"}, "expected": filler}
            )
            handle.write(line + "\n")
            written += len(line) + 1
            count += 1
    return count


def _measure(path: Path, part: str) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), part, _SERVER],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"the {part} child failed:\n{completed.stderr[-3000:]}")
    result: dict[str, float] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--keep-dir", help="generate the files here instead of a temp folder")
    args = parser.parse_args()
    size = args.size_mb * 2**20
    shapes = (("small cases, read back", 1_000, "read"), ("large cases, evaluated", 500_000, "run"))
    with tempfile.TemporaryDirectory(prefix="dataset-bench-", dir=args.keep_dir) as folder:
        for label, expected_bytes, part in shapes:
            path = Path(folder) / f"bench-{part}.jsonl"
            started = time.perf_counter()
            cases = _write_dataset(path, size, expected_bytes)
            written_s = time.perf_counter() - started
            measured = _measure(path, part)
            file_mb = path.stat().st_size / 2**20
            above = measured["peak_mb"] - measured["baseline_mb"]
            print(
                f"{label}: {file_mb:,.0f} MB, {cases:,} cases (written in {written_s:.0f} s);"
                f" {measured['cases']:,.0f} processed, {measured['invalid']:.0f} invalid,"
                f" {measured['failed']:.0f} failed"
            )
            print(
                f"  peak RSS {measured['peak_mb']:,.0f} MB (target < 200 MB); baseline after"
                f" imports {measured['baseline_mb']:,.0f} MB; above baseline {above:,.0f} MB ="
                f" {above / file_mb:.3f} x the file size"
            )
            print(f"  load {measured['load_s']:.1f} s, load and {part} {measured['total_s']:.1f} s")
            path.unlink()
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
