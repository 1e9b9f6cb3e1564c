"""CLI start-up benchmark: `promptkit --help` and `promptkit overrides list`, against `python -c
pass` in the same run.

Each sample is a fresh process, timed from start to exit: the wall clock, and the CPU time the
process used (user + system), which a machine shared with other work inflates less. The figures
are the median and the minimum over the samples. The three commands are run in turn within each
round, so a busy machine's load falls on all of them alike. `overrides list` runs in the
repository root on its curated `overrides/` folder, so it also finds, imports and hashes the
prompts of the `[tool.promptkit]` list of pyproject.toml, as it does in `make test`. The
`promptkit` script next to the running interpreter is used when there is one, else `python -m
promptkit`.

Usage: python benchmarks/cli_start_bench.py [--samples 15]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def promptkit_command() -> list[str]:
    """How to run the installed `promptkit` command with this interpreter."""
    script = Path(sys.executable).parent / "promptkit"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "promptkit"]


def run_ms(command: list[str]) -> tuple[float, float]:
    """Milliseconds from starting `command` in the repository root to its exit, and
    milliseconds of CPU it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=REPOSITORY, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description="How long the promptkit command takes to start.")
    parser.add_argument("--samples", type=int, default=15)
    samples = parser.parse_args().samples
    promptkit = promptkit_command()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "promptkit --help": [*promptkit, "--help"],
        "promptkit overrides list": [
            *promptkit,
            "overrides",
            "list",
            "--overrides-dir",
            "overrides",
        ],
    }
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(samples):
        for name, command in commands.items():
            wall_ms, cpu_ms = run_ms(command)
            wall[name].append(wall_ms)
            cpu[name].append(cpu_ms)
    print(f"median (min) of {samples} runs; ratio of the medians to python -c pass")
    for figures, what in ((wall, "wall"), (cpu, "cpu")):
        baseline = statistics.median(figures["python -c pass"])
        for name, values in figures.items():
            median = statistics.median(values)
            print(
                f"{what}  {name:<26} {median:7.1f} ms ({min(values):6.1f})"
                f"  ratio {median / baseline:5.2f}"
            )


if __name__ == "__main__":
    main()
