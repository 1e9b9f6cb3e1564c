"""Import benchmark: what `import promptkit` costs, against `import typing` in the same run.

Each sample is a fresh interpreter run with `-X importtime`; the figure is the cumulative time
of the `promptkit` (or `typing`) line, in microseconds, the median over the samples. `typing` is
the baseline because it is the one module nearly every library pulls in on import: promptkit's
package `__init__` files declare their names for type checkers without importing it.

Usage: python benchmarks/import_bench.py [--samples 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys


def cumulative_us(module: str) -> int:
    """Microseconds `import module` took in a fresh interpreter, per `-X importtime`."""
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(
        line for line in reversed(completed.stderr.splitlines()) if line.endswith(f"| {module}")
    )
    return int(line.split("|")[1])


def main() -> None:
    parser = argparse.ArgumentParser(description="What `import promptkit` costs, against typing.")
    parser.add_argument("--samples", type=int, default=15)
    samples = parser.parse_args().samples
    promptkit_us, typing_us = [], []
    for _ in range(samples):
        # Alternating the two keeps a busy machine's load from favouring either.
        promptkit_us.append(cumulative_us("promptkit"))
        typing_us.append(cumulative_us("typing"))
    promptkit_median = statistics.median(promptkit_us)
    typing_median = statistics.median(typing_us)
    print(f"import promptkit: {promptkit_median / 1000:.1f} ms (median of {samples})")
    print(f"import typing:    {typing_median / 1000:.1f} ms (baseline, same run)")
    print(f"ratio promptkit/typing: {promptkit_median / typing_median:.2f}")


if __name__ == "__main__":
    main()
