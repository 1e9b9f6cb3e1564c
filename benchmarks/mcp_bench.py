"""MCP start benchmark: how long `promptkit mcp serve` takes to start and answer `tools/list`.

One sample starts `python -m promptkit mcp serve PATH` (this repository by default) with its
stdin and stdout as pipes, sends `initialize`, `notifications/initialized` and `tools/list` as
JSON-RPC lines at once, and stops the clock when the `tools/list` answer arrives: the time an
agent waits before it can call a tool. The client here is a few lines of JSON, so the figure
is the server's alone. Baselines in the same run, alternated with it so a busy machine favours
none: `python -c pass` (the interpreter's own start), `python -m promptkit --help` (the command
line's start) and importing the `mcp` SDK's stdio server alone (what any server on the SDK pays
before its first answer). Figures are medians over the samples.

On a shared machine the wall time measures the queue for the CPU as much as the server; the CPU
time the server used up to its answer (read from /proc on Linux) does not, and on an idle
machine the wall time is that plus a few milliseconds of pipes. Both are printed.

Usage: python benchmarks/mcp_bench.py [PATH] [--samples 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
ANSWER_TIMEOUT_S = 120.0

REQUESTS = (
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp_bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
)


def serve_to_tools_list_s(path: Path, state_dir: Path) -> tuple[float, float, int]:
    """Seconds from starting the server to its `tools/list` answer, the CPU seconds the server
    had used by then (in all, exit included, where /proc is missing), and how many tools it
    listed."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "promptkit",
            "mcp",
            "serve",
            str(path),
            "--state-dir",
            str(state_dir),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    elapsed, tools, cpu = 0.0, 0, None
    try:
        process.stdin.write("".join(json.dumps(request) + "\n" for request in REQUESTS))
        process.stdin.flush()
        deadline = started + ANSWER_TIMEOUT_S
        while time.perf_counter() < deadline:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("the server exited before answering tools/list")
            message = json.loads(line)
            if message.get("id") == 2:
                elapsed = time.perf_counter() - started
                cpu = _cpu_so_far_s(process.pid)
                tools = len(message["result"]["tools"])
                break
        else:
            raise RuntimeError(f"no tools/list answer within {ANSWER_TIMEOUT_S:g}s")
    finally:
        process.stdin.close()
    # Closing stdin ends a stdio server; wait4 reaps it and reports the CPU it used.
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return elapsed, cpu if cpu is not None else usage.ru_utime + usage.ru_stime, tools


def _cpu_so_far_s(pid: int) -> float | None:
    """User + system CPU seconds process `pid` has used, from /proc (None without it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    # utime and stime are fields 14 and 15 of stat(5); the split starts at field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def command_s(*argv: str) -> tuple[float, float]:
    """Seconds `python argv...` takes to run to its end, and the CPU seconds it used."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    if status != 0:
        raise RuntimeError(f"python {' '.join(argv)} failed (wait status {status})")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


# os._exit skips the interpreter's teardown, which the server's CPU figure (read at its answer)
# does not include either.
SDK_IMPORT = "import os, mcp.server.lowlevel, mcp.server.stdio; os._exit(0)"


def main() -> None:
    parser = argparse.ArgumentParser(description="promptkit mcp serve: start to tools/list.")
    parser.add_argument("path", nargs="?", default=str(REPO_ROOT))
    parser.add_argument("--samples", type=int, default=7)
    arguments = parser.parse_args()
    path = Path(arguments.path).resolve()
    state_dir = REPO_ROOT / ".venv" / "mcp-bench-state"
    serve: list[tuple[float, float]] = []
    baselines: dict[str, list[tuple[float, float]]] = {
        "python -c pass": [],
        "promptkit --help": [],
        "import the mcp SDK": [],
    }
    tools = 0
    for _ in range(arguments.samples):
        elapsed, cpu, tools = serve_to_tools_list_s(path, state_dir)
        serve.append((elapsed, cpu))
        baselines["python -c pass"].append(command_s("-c", "pass"))
        baselines["promptkit --help"].append(command_s("-m", "promptkit", "--help"))
        baselines["import the mcp SDK"].append(command_s("-c", SDK_IMPORT))
    serve_s, serve_cpu = _medians(serve)
    print(f"workspace: {path} ({tools} tools listed); wall and CPU ms, median of {len(serve)}")
    print(f"{'mcp serve to tools/list':24} {serve_s * 1000:6.0f} wall {serve_cpu * 1000:6.0f} CPU")
    for name, samples in baselines.items():
        wall, cpu = _medians(samples)
        print(
            f"{name:24} {wall * 1000:6.0f} wall {cpu * 1000:6.0f} CPU   serve/this:"
            f" {serve_s / wall:.1f} wall, {serve_cpu / cpu:.1f} CPU (baseline, same run)"
        )


def _medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return (
        statistics.median(wall for wall, _ in samples),
        statistics.median(cpu for _, cpu in samples),
    )


if __name__ == "__main__":
    main()
