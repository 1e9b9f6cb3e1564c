"""Time the secret scanner over real text, against one plain regex pass over the same text.

Usage:
    python benchmarks/secrets_bench.py [PATH ...] [--repeat R]

Reads every UTF-8 file under each PATH (default: this repository's src, tests, docs) that git
would list, then times `redact_secrets` on each file's text, as a tool result or a stored
record would be scanned. The baseline, measured in the same run on the same texts, is one
`re.finditer` for a single literal (`sk-`): the cheapest scan a redactor could possibly do. Also
prints how many findings the scan reports over the tree (false positives show up here) and the
cost per 16 KiB, the default page a `vfs_read_file` returns.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from promptkit.secrets import find_secrets, redact_secrets

ROOT = Path(__file__).resolve().parents[1]


def texts_under(path: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=path,
        capture_output=True,
        text=True,
        check=False,
    )
    names = listed.stdout.splitlines() if listed.returncode == 0 else []
    files = [path / name for name in names] or [p for p in path.rglob("*") if p.is_file()]
    texts = []
    for file in files:
        try:
            data = file.read_bytes()
        except OSError:
            continue
        if len(data) > 2_000_000 or b"\0" in data[:4096]:
            continue
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return texts


def best_of(repeat: int, run: object) -> float:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    paths = args.paths or [ROOT / "src", ROOT / "tests", ROOT / "docs"]
    texts = [text for path in paths for text in texts_under(path)]
    total = sum(len(text) for text in texts)
    literal = re.compile("sk-")

    def baseline() -> None:
        for text in texts:
            for _ in literal.finditer(text):
                pass

    def scan() -> None:
        for text in texts:
            redact_secrets(text)

    base_s = best_of(args.repeat, baseline)
    scan_s = best_of(args.repeat, scan)
    rules = Counter(finding.rule for text in texts for finding in find_secrets(text))
    megabytes = total / 1e6
    print(f"{len(texts)} files, {megabytes:.2f} MB of text")
    print(
        f"baseline (one literal regex pass): {base_s * 1e3:8.1f} ms  {megabytes / base_s:8.1f} MB/s"
    )
    print(
        f"redact_secrets:                    {scan_s * 1e3:8.1f} ms  {megabytes / scan_s:8.1f} MB/s"
    )
    print(f"ratio scan / baseline: {scan_s / base_s:.1f}x")
    print(f"per 16 KiB tool result: {scan_s / total * 16384 * 1e6:.0f} us")
    print(f"findings: {dict(rules.most_common()) or 'none'}")
    print(f"median file: {statistics.median(len(t) for t in texts):.0f} chars")
    return 0


if __name__ == "__main__":
    sys.exit(main())
