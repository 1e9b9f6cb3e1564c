"""MCP start benchmark: how long `promptkit mcp serve` takes to start and answer `tools/list`.

One sample starts `python -m promptkit mcp serve PATH` (this repository by default) with its
stdin and stdout as pipes, sends `initialize`, `notifications/initialized` and `tools/list` as
JSON-RPC lines at once, and stops the clock when the `tools/list` answer arrives: the time an
agent waits before it can call a tool. The client here is a few lines of JSON, so the figure
is the server's alone. Baselines in the same run, alternated with it so a busy machine favours
none: `python -c pass` (the interpreter's own start) and `python -m promptkit --help` (the
command line's start). Figures are medians over the samples.

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
    used in all (its start, the answers and its exit when stdin closes: on a busy machine the
    CPU time varies far less than the wall time), and how many tools it listed."""
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
    elapsed, tools = 0.0, 0
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
                tools = len(message["result"]["tools"])
                break
        else:
            raise RuntimeError(f"no tools/list answer within {ANSWER_TIMEOUT_S:g}s")
    finally:
        process.stdin.close()
    # Closing stdin ends a stdio server; wait4 reaps it and reports the CPU it used.
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return elapsed, usage.ru_utime + usage.ru_stime, tools


def command_s(*argv: str) -> float:
    """Seconds `python argv...` takes to run to its end."""
    started = time.perf_counter()
    subprocess.run([sys.executable, *argv], capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description="promptkit mcp serve: start to tools/list.")
    parser.add_argument("path", nargs="?", default=str(REPO_ROOT))
    parser.add_argument("--samples", type=int, default=7)
    arguments = parser.parse_args()
    path = Path(arguments.path).resolve()
    state_dir = REPO_ROOT / ".venv" / "mcp-bench-state"
    serve, serve_cpu, interpreter, help_text = [], [], [], []
    tools = 0
    for _ in range(arguments.samples):
        elapsed, cpu, tools = serve_to_tools_list_s(path, state_dir)
        serve.append(elapsed)
        serve_cpu.append(cpu)
        interpreter.append(command_s("-c", "pass"))
        help_text.append(command_s("-m", "promptkit", "--help"))
    serve_s = statistics.median(serve)
    interpreter_s = statistics.median(interpreter)
    help_s = statistics.median(help_text)
    print(f"workspace: {path} ({tools} tools listed)")
    print(f"mcp serve to tools/list: {serve_s * 1000:.0f} ms (median of {arguments.samples})")
    print(f"  its CPU time in all:   {statistics.median(serve_cpu) * 1000:.0f} ms (user + system)")
    print(f"python -c pass:          {interpreter_s * 1000:.0f} ms (baseline, same run)")
    print(f"promptkit --help:        {help_s * 1000:.0f} ms (baseline, same run)")
    print(
        f"ratio serve/python: {serve_s / interpreter_s:.1f}, serve/--help: {serve_s / help_s:.1f}"
    )


if __name__ == "__main__":
    main()
