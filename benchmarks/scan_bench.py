"""Workspaces at scale: scan and `promptkit optimize` in fresh processes, against `git ls-files`.

Usage:
    python benchmarks/scan_bench.py [PATH ...] [--files N ...] [--repeat R]

Measures generated git repositories of N mixed-language files (default 10,000 and 100,000) and
every PATH given. Each measurement is a new process, so imports and the first scan are paid
every time (the OS page cache stays warm: that is the steady state a CLI sees). Per tree:

- `git ls-files -co --exclude-standard`: the floor, the cheapest listing of the files;
- reading every listed file in a Python process: what copying the workspace into memory costs;
- `scan_workspace` + `render_static_digest` in a process, split into import, scan and render;
- `promptkit optimize --provider static`: wall time and peak RSS of the whole command;
- a model-driven `promptkit optimize` against a FakeProviderServer on 127.0.0.1 (the
  OpenAI-compatible `--base-url` path, no key): the time from starting the process to its first
  request reaching the server, which answers with a digest at once.

Peak RSS is the child's `ru_maxrss` from `wait4`. Targets on a 2-core machine: 100,000 files in
3 s or less with peak RSS at most 200 MB, and a first request within 1 s of starting.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from promptkit.testing import FakeProviderServer, RecordedRequest, Reply

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

# What a copy of the workspace costs: every listed file read into memory and kept.
READ_EVERY_FILE = """
import subprocess, sys
root = sys.argv[1].encode()
listed = subprocess.run(
    ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, capture_output=True,
    check=True,
).stdout.split(b"\\0")
kept = []
for name in listed:
    if name:
        try:
            with open(root + b"/" + name, "rb") as handle:
                kept.append(handle.read())
        except OSError:
            pass
print(sum(map(len, kept)))
"""

EXTENSIONS = (".py", ".ts", ".go", ".rs", ".md", ".json", ".yaml", ".sh", ".c", ".java")
DIGEST = "## Layout\n- generated packages\n\n## Tooling\n- `make test`"


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
    # No background auto-gc: it would still be writing in .git when the tree is removed.
    identity = [
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.invalid",
        "-c",
        "gc.auto=0",
    ]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run(["git", *identity, *args], cwd=root, env=env, check=True)


def child_environment(**changes: str) -> dict[str, str]:
    """This environment for a measured child, with bytecode caching on: a user's installed
    promptkit has its .pyc files, and PYTHONDONTWRITEBYTECODE would have every run compile every
    module from source."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(changes)
    return env


def run_measured(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of `command`, run to completion."""
    env = child_environment() if env is None else env
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        # wait4 reaps the child and returns its own resource usage (ru_maxrss is in KiB).
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode(errors="replace")
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])} failed ({child.returncode}): {stderr[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024, stdout


PROMPTKIT_MAIN = "import sys; from promptkit.cli.app import main; sys.exit(main())"


def promptkit_command(*args: str) -> list[str]:
    return [sys.executable, "-c", PROMPTKIT_MAIN, *args]


def first_request_seconds(path: Path, state: Path) -> float:
    """Seconds from starting a model-driven `promptkit optimize` to its first request."""
    first: list[float] = []
    arrived = threading.Event()

    def answer(request: RecordedRequest) -> Reply:
        if not first:
            first.append(time.perf_counter())
            arrived.set()
        return Reply.json({"digest": DIGEST})

    env = child_environment(PROMPTKIT_HOME=str(state))
    env.pop("OPENAI_API_KEY", None)
    env.pop("ANTHROPIC_API_KEY", None)
    with FakeProviderServer() as server:
        server.respond_with(answer)
        started = time.perf_counter()
        command = promptkit_command(
            "optimize", str(path), "--base-url", server.openai_base_url,
            "--model", "bench-model", "--state-dir", str(state),
        )  # fmt: skip
        run_measured(command, env=env)
    if not arrived.is_set():
        raise RuntimeError("the model-driven optimize finished without sending a request")
    return first[0] - started


def measure(path: Path, repeat: int) -> None:
    listing = [
        run_measured(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=path)[0]
        for _ in range(repeat)
    ]
    startup = [run_measured([sys.executable, "-c", "pass"])[0] for _ in range(repeat)]
    reads = [
        run_measured([sys.executable, "-c", READ_EVERY_FILE, str(path)]) for _ in range(repeat)
    ]
    scans: list[dict[str, float]] = []
    scan_totals: list[float] = []
    for _ in range(repeat):
        elapsed, _, stdout = run_measured([sys.executable, "-c", CHILD, str(path)])
        scan_totals.append(elapsed)
        scans.append(json.loads(stdout.strip().splitlines()[-1]))
    with tempfile.TemporaryDirectory(prefix="scan-bench-state-") as state:
        env = child_environment(PROMPTKIT_HOME=state)
        optimizes = [
            run_measured(
                promptkit_command(
                    "optimize", str(path), "--provider", "static", "--state-dir", state
                ),
                env=env,
            )
            for _ in range(repeat)
        ]
        first_requests = [first_request_seconds(path, Path(state)) for _ in range(repeat)]
    median_listing = statistics.median(listing)
    optimize_s = statistics.median(run[0] for run in optimizes)
    optimize_mb = max(run[1] for run in optimizes)
    read_s = statistics.median(run[0] for run in reads)
    read_mb = max(run[1] for run in reads)
    print(f"\n{path}")
    print(f"  files selected                 {int(scans[0]['files']):>9,}")
    print(f"  bytes of listed files          {int(reads[0][2]):>9,}")
    print(f"  digest characters              {int(scans[0]['digest_chars']):>9,}")
    print(f"  baseline git ls-files          {median_listing * 1000:>9.1f} ms (median of {repeat})")
    print(f"  baseline python -c pass        {statistics.median(startup) * 1000:>9.1f} ms")
    print(f"  baseline read every file       {read_s * 1000:>9.1f} ms, peak RSS {read_mb:.0f} MB")
    for key, label in (("import_s", "scan: import"), ("scan_s", "scan: scan"),
                       ("render_s", "scan: render")):  # fmt: skip
        values = [report[key] for report in scans]
        print(f"  {label:<30} {statistics.median(values) * 1000:>9.1f} ms")
    print(f"  scan process (cold)            {statistics.median(scan_totals) * 1000:>9.1f} ms")
    print(
        f"  optimize --provider static     {optimize_s * 1000:>9.1f} ms median,"
        f" {min(run[0] for run in optimizes) * 1000:.1f} ms best, peak RSS {optimize_mb:.0f} MB"
    )
    print(
        f"  model optimize: first request  {statistics.median(first_requests) * 1000:>9.1f} ms"
        f" median, {min(first_requests) * 1000:.1f} ms best"
    )
    print(f"  ratio static optimize / ls-files      {optimize_s / median_listing:>7.1f}x")
    print(f"  ratio static optimize / read all      {optimize_s / read_s:>7.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="real workspaces to measure too")
    parser.add_argument(
        "--files",
        type=int,
        nargs="*",
        default=[10_000, 100_000],
        help="sizes of the generated trees (default: 10000 100000)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="processes per measurement")
    arguments = parser.parse_args()
    # Other work on this machine skews every figure; the load average says how much.
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for count in arguments.files:
        with tempfile.TemporaryDirectory(
            prefix="scan-bench-", ignore_cleanup_errors=True
        ) as directory:
            generated = Path(directory) / "generated"
            generated.mkdir()
            started = time.perf_counter()
            generate_tree(generated, count)
            print(f"\ngenerated {count:,} files in {time.perf_counter() - started:.1f} s")
            measure(generated, arguments.repeat)
    for path in arguments.paths:
        measure(path.resolve(), arguments.repeat)


if __name__ == "__main__":
    main()
