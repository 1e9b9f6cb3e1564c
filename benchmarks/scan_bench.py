"""Workspaces at scale: scan and `promptkit optimize` in fresh processes, against `git ls-files`.

Usage:
    python benchmarks/scan_bench.py [PATH ...] [--files N ...] [--repeat R]

Measures generated git repositories of N mixed-language files (default 10,000 and 100,000) and
every PATH given. Each measurement is a new process, so imports and the first scan are paid
every time (the OS page cache stays warm: that is the steady state a CLI sees). Per tree:

- `git ls-files -co --exclude-standard`: the floor, the cheapest listing of the files;
- reading every listed file in a Python process: what copying the workspace into memory costs;
- phases, each timed inside a process: the CLI's start (imports and the parser `promptkit
  optimize` builds), the OpenAI SDK's import (the floor of a model-driven run), `select_files`
  (the listing), and `scan_workspace` + `render_static_digest` split into import, scan and
  render;
- `promptkit optimize --provider static`: wall time, CPU time and peak RSS of the command;
- a model-driven `promptkit optimize` against a FakeProviderServer on 127.0.0.1 (the
  OpenAI-compatible `--base-url` path, no key): the time from starting the process to its first
  request reaching the server, which answers with a digest at once. The server is warmed up
  with one request of its own first: checking its first request against the SDK's request
  types imports them in the server's process (about 0.4 s), a cost of the stand-in provider,
  not of promptkit. The command's CPU time counts its listing helper process and git too, which
  run beside it on the second core.

Wall time is what a user waits; CPU time (user + system, of the process or phase) is what the
work costs, and moves less when other work shares the machine (the load average is printed
before and after each tree). Peak RSS is the child's `ru_maxrss` from `wait4`. Targets on a
2-core machine: 100,000 files in 3 s or less with peak RSS at most 200 MB, and a first request
within 1 s of starting.
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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptkit.testing import FakeProviderServer, RecordedRequest, Reply

# Each phase child prints {"<phase>": [wall seconds, CPU seconds], ...} as its last line.
PHASES = """
import json, logging, sys, time
marks = [(time.perf_counter(), time.process_time())]
def phase():
    marks.append((time.perf_counter(), time.process_time()))
    (wall0, cpu0), (wall1, cpu1) = marks[-2:]
    return [wall1 - wall0, cpu1 - cpu0]
"""

SCAN_CHILD = (
    PHASES
    + """
import structlog
from promptkit.repofacts import render_static_digest, scan_workspace
structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
report = {"scan: import": phase()}
facts = scan_workspace(sys.argv[1])
report["scan: scan"] = phase()
digest = render_static_digest(facts)
report["scan: render"] = phase()
report.update(files=facts.file_count, digest_chars=len(digest))
print(json.dumps(report))
"""
)

LISTING_CHILD = (
    PHASES
    + """
from promptkit.hostfiles import select_files
report = {"listing: import": phase()}
selection = select_files(sys.argv[1])
report["listing: select_files"] = phase()
print(json.dumps(report))
"""
)

CLI_START_CHILD = (
    PHASES
    + """
from promptkit.cli._app import build_parser
build_parser(["optimize"])
print(json.dumps({"cli start: optimize's parser": phase()}))
"""
)

SDK_CHILD = (
    PHASES
    + """
import openai
print(json.dumps({"openai SDK import": phase()}))
"""
)

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


@dataclass(frozen=True)
class Run:
    """One measured process: wall and CPU (user + system) seconds, peak RSS in MB, stdout."""

    wall_s: float
    cpu_s: float
    peak_mb: float
    stdout: str

    def report(self) -> dict[str, Any]:
        """The JSON object a phase child printed last."""
        report: dict[str, Any] = json.loads(self.stdout.strip().splitlines()[-1])
        return report


def run_measured(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Run:
    """`command` run to completion, measured."""
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
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout)


PROMPTKIT_MAIN = "import sys; from promptkit.cli import main; sys.exit(main())"


def promptkit_command(*args: str) -> list[str]:
    return [sys.executable, "-c", PROMPTKIT_MAIN, *args]


def _warm_up(server: FakeProviderServer) -> None:
    """Send the server one Chat Completions request, so its first check of a request is paid
    before the measured one arrives."""
    import openai

    server.respond_with(lambda request: Reply.text("warm"))
    with openai.OpenAI(base_url=server.openai_base_url, api_key="warm-up") as client:
        client.chat.completions.create(
            model="bench-model", messages=[{"role": "user", "content": "warm up"}]
        )


def first_request_seconds(path: Path, state: Path) -> tuple[float, Run]:
    """Seconds from starting a model-driven `promptkit optimize` to its first request, and the
    measured run of the whole command."""
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
        _warm_up(server)
        server.respond_with(answer)
        started = time.perf_counter()
        command = promptkit_command(
            "optimize", str(path), "--base-url", server.openai_base_url,
            "--model", "bench-model", "--state-dir", str(state),
        )  # fmt: skip
        run = run_measured(command, env=env)
    if not arrived.is_set():
        raise RuntimeError("the model-driven optimize finished without sending a request")
    return first[0] - started, run


def measure(path: Path, repeat: int) -> None:
    python = sys.executable
    print(f"\n{path}")
    print("  load average before (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    listing = [
        run_measured(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=path)
        for _ in range(repeat)
    ]
    startup = [run_measured([python, "-c", "pass"]) for _ in range(repeat)]
    reads = [run_measured([python, "-c", READ_EVERY_FILE, str(path)]) for _ in range(repeat)]
    phases: dict[str, list[list[float]]] = {}
    scans: list[dict[str, Any]] = []
    for child in (CLI_START_CHILD, SDK_CHILD, LISTING_CHILD, SCAN_CHILD):
        for _ in range(repeat):
            report = run_measured([python, "-c", child, str(path)]).report()
            for key, value in report.items():
                if isinstance(value, list):
                    phases.setdefault(key, []).append(value)
            if child is SCAN_CHILD:
                scans.append(report)
    with tempfile.TemporaryDirectory(prefix="scan-bench-state-") as state:
        env = child_environment(PROMPTKIT_HOME=state)
        static = promptkit_command(
            "optimize", str(path), "--provider", "static", "--state-dir", state
        )
        optimizes = [run_measured(static, env=env) for _ in range(repeat)]
        model_runs = [first_request_seconds(path, Path(state)) for _ in range(repeat)]
    first_requests = [first for first, _ in model_runs]
    read_s = statistics.median(run.wall_s for run in reads)
    optimize_s = statistics.median(run.wall_s for run in optimizes)
    listing_s = statistics.median(run.wall_s for run in listing)
    print(f"  files selected                 {int(scans[0]['files']):>9,}")
    print(f"  bytes of listed files          {int(reads[0].stdout):>9,}")
    print(f"  digest characters              {int(scans[0]['digest_chars']):>9,}")
    print(f"  {'(medians of ' + str(repeat) + ')':<30} {'wall ms':>9} {'CPU ms':>9}")
    for label, runs in (
        ("baseline git ls-files", listing),
        ("baseline python -c pass", startup),
        ("baseline read every file", reads),
    ):
        print(f"  {label:<30} {_ms(r.wall_s for r in runs)} {_ms(r.cpu_s for r in runs)}")
    for label, values in phases.items():
        print(f"  {label:<30} {_ms(v[0] for v in values)} {_ms(v[1] for v in values)}")
    print(
        f"  {'optimize --provider static':<30} {_ms(r.wall_s for r in optimizes)}"
        f" {_ms(r.cpu_s for r in optimizes)}  best {min(r.wall_s for r in optimizes) * 1000:.0f}"
        f" ms wall, peak RSS {max(r.peak_mb for r in optimizes):.0f} MB"
    )
    print(
        f"  {'model optimize: first request':<30} {_ms(first_requests)} {'':>9}"
        f"  best {min(first_requests) * 1000:.0f} ms"
    )
    print(
        f"  {'model optimize: whole process':<30} {_ms(run.wall_s for _, run in model_runs)}"
        f" {_ms(run.cpu_s for _, run in model_runs)}"
    )
    print(f"  read every file: peak RSS {max(r.peak_mb for r in reads):.0f} MB")
    print(f"  ratio static optimize / ls-files      {optimize_s / listing_s:>7.1f}x")
    print(f"  ratio static optimize / read all      {optimize_s / read_s:>7.2f}x")
    print("  load average after  (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


def _ms(seconds: Iterable[float]) -> str:
    return f"{statistics.median(seconds) * 1000:>9.1f}"


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
