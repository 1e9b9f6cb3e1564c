"""Time `scan_workspace` + `render_static_digest` in fresh processes, against `git ls-files`.

Usage:
    python benchmarks/scan_bench.py [PATH ...] [--files N] [--repeat R]

Measures (a) a generated git repository of about N (default 20,000) mixed-language files and
(b) every PATH given. Each measurement is a new Python process, so imports and the first scan
are paid every time (the OS page cache stays warm: that is the steady state a CLI sees). The
baseline, measured in the same run on the same tree, is a `git ls-files -co --exclude-standard`
process: the cheapest possible listing of the files a scan has to consider.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import json, logging, sys, time
started = time.perf_counter()
import structlog
from promptkit.workspace import render_static_digest, scan_workspace
structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
imported = time.perf_counter()
facts = scan_workspace(sys.argv[1])
scanned = time.perf_counter()
digest = render_static_digest(facts)
rendered = time.perf_counter()
print(json.dumps({
    "import_s": imported - started,
    "scan_s": scanned - imported,
    "render_s": rendered - scanned,
    "files": facts.file_count,
    "digest_chars": len(digest),
}))
"""

EXTENSIONS = (".py", ".ts", ".go", ".rs", ".md", ".json", ".yaml", ".sh", ".c", ".java")


def generate_tree(root: Path, count: int) -> None:
    """A git repository of `count` small files in nested directories, plus project files."""
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "generated"\n[tool.pytest.ini_options]\n[tool.ruff]\n[tool.mypy]\n'
    )
    (root / "Makefile").write_text("test:\n\tpytest -q\nlint:\n\truff check .\n")
    (root / "package.json").write_text('{"name": "gen", "scripts": {"test": "vitest"}}')
    (root / ".github" / "workflows" / "ci.yml").write_text(
        "name: CI\non: push\njobs:\n  t:\n    steps:\n      - run: make test\n"
    )
    (root / "AGENTS.md").write_text("- Always run `make test` before pushing.\n")
    (root / ".gitignore").write_text("*.log\n")
    for index in range(count):
        directory = root / f"pkg{index % 40}" / f"mod{index % 13}" / f"sub{index % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        extension = EXTENSIONS[index % len(EXTENSIONS)]
        (directory / f"file{index}{extension}").write_text(f"// file {index}\n" * 20)
    for index in range(50):
        (root / f"pkg{index % 40}" / f"blob{index}.bin").write_bytes(b"\0\1\2" * 100)
        (root / f"pkg{index % 40}" / f"trace{index}.log").write_text("ignored\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run(["git", *identity, *args], cwd=root, env=env, check=True)


def time_process(command: list[str], cwd: Path | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, completed.stdout


def measure(path: Path, repeat: int) -> None:
    listing = [
        time_process(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=path)[0]
        for _ in range(repeat)
    ]
    startup = [time_process([sys.executable, "-c", "pass"])[0] for _ in range(repeat)]
    totals: list[float] = []
    reports: list[dict[str, float]] = []
    for _ in range(repeat):
        elapsed, stdout = time_process([sys.executable, "-c", CHILD, str(path)])
        totals.append(elapsed)
        reports.append(json.loads(stdout.strip().splitlines()[-1]))
    median_total = statistics.median(totals)
    median_listing = statistics.median(listing)
    print(f"\n{path}")
    print(f"  files selected              {int(reports[0]['files']):>9,}")
    print(f"  digest characters           {int(reports[0]['digest_chars']):>9,}")
    print(f"  baseline git ls-files       {median_listing * 1000:>9.1f} ms (median of {repeat})")
    print(f"  baseline python -c pass     {statistics.median(startup) * 1000:>9.1f} ms")
    for key, label in (("import_s", "import"), ("scan_s", "scan"), ("render_s", "render")):
        values = [report[key] for report in reports]
        print(f"  {label:<27} {statistics.median(values) * 1000:>9.1f} ms")
    print(
        f"  whole process (cold)        {median_total * 1000:>9.1f} ms median, "
        f"{min(totals) * 1000:.1f} ms best"
    )
    print(f"  ratio process / ls-files    {median_total / median_listing:>9.1f}x")
    scan_and_render = statistics.median(r["scan_s"] + r["render_s"] for r in reports)
    print(f"  ratio scan+render / ls-files{scan_and_render / median_listing:>9.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="real workspaces to measure too")
    parser.add_argument("--files", type=int, default=20_000, help="size of the generated tree")
    parser.add_argument("--repeat", type=int, default=5, help="processes per measurement")
    arguments = parser.parse_args()
    # Other work on this machine skews every figure; the load average says how much.
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="scan-bench-") as directory:
        generated = Path(directory) / "generated"
        generated.mkdir()
        started = time.perf_counter()
        generate_tree(generated, arguments.files)
        print(f"generated {arguments.files:,} files in {time.perf_counter() - started:.1f} s")
        measure(generated, arguments.repeat)
    for path in arguments.paths:
        measure(path.resolve(), arguments.repeat)


if __name__ == "__main__":
    main()
