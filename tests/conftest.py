"""Helpers and fixtures every test area shares: git, committed repositories (`repo`), the CLI
as a subprocess, and a running FakeProviderServer (`server`).

`git` runs git the same way in every test: a fixed identity, branch `main`, no user or system
configuration and no prompts, so a developer's own git setup cannot change a result. Test
modules import the helpers with `from ..conftest import git` (pytest imports test files as
modules of the `tests` namespace package); the fixtures need no import.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from promptkit.testing import FakeProviderServer, PostgresServer

# Property tests never fail for being slow on a loaded machine; under CI they are derandomized,
# so a CI run is reproducible and a red one can be replayed exactly.
settings.register_profile("promptkit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "promptkit-ci", parent=settings.get_profile("promptkit"), derandomize=True
)
settings.load_profile("promptkit-ci" if os.environ.get("CI") else "promptkit")

REPO_ROOT = Path(__file__).resolve().parents[1]

PROVIDER_ENV_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL")

REPO_FILES = {
    "README.md": "# Demo app\n\nRun the tests with `make test` before every commit.\n",
    "Makefile": "test:\n\tpytest -q\n\nlint:\n\truff check .\n",
    "pyproject.toml": (
        '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    ),
    "src/demo/__init__.py": '"""The demo package."""\n',
    "src/demo/cli.py": "def main() -> int:\n    return 0\n",
    "tests/test_demo.py": "def test_nothing():\n    assert True\n",
}
"""The files of the `repo` fixture: a small project with a README, a Makefile, a package and a
test."""


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` with a fixed identity and no user or system configuration; returns
    its stdout, stripped. CalledProcessError when git fails."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", LC_ALL="C"
    )
    completed = subprocess.run(
        [
            "git",
            "-c",
            "user.name=promptkit tests",
            "-c",
            "user.email=tests@example.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout.strip()


def write_files(root: Path, files: Mapping[str, str]) -> None:
    """Write each `relative path: text` under `root`, creating folders as needed."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def committed_repo(root: Path, files: Mapping[str, str]) -> Path:
    """A new git repository at `root` holding `files` in one commit on `main`."""
    write_files(root, files)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def offline_env() -> dict[str, str]:
    """This environment without provider keys, so `--provider auto` picks the static
    optimizer and nothing can reach a real provider."""
    env = {key: value for key, value in os.environ.items() if key not in PROVIDER_ENV_KEYS}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `argv` as a user or CI would: `stdin` piped in (none when None), text output
    captured, `offline_env()` unless `env` is given. The exit status is not checked."""
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else offline_env(),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_promptkit(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m promptkit <args>` in `cwd`, through `run_process`."""
    return run_process([sys.executable, "-m", "promptkit", *args], cwd=cwd, env=env, stdin=stdin)


@pytest.fixture(autouse=True)
def logging_back_on_stderr() -> Iterator[None]:
    """A test may run `promptkit.cli.main` in this process, which points logging at the
    `sys.stderr` of the moment: `capsys` closes that after the test, so logging goes back to
    the real stderr after each test, wherever it ran."""
    yield
    from promptkit.logging import configure

    configure(level="warning")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed git repository of `REPO_FILES` at tmp_path/repo."""
    return committed_repo(tmp_path / "repo", REPO_FILES)


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    """A FakeProviderServer on 127.0.0.1, stopped after the test."""
    with FakeProviderServer() as running:
        yield running


_SPAN_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The OpenTelemetry spans finished during the test, from the SDK's in-memory exporter. The
    SDK's tracer provider is installed once per process, the first time a test asks."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_SPAN_EXPORTER))
        trace.set_tracer_provider(provider)
    _SPAN_EXPORTER.clear()
    yield _SPAN_EXPORTER
    _SPAN_EXPORTER.clear()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test process (one per xdist worker) in a temporary folder,
    stopped and removed at the end; the tests that need it skip where no server is installed."""
    if PostgresServer.binaries() is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, pg_ctl) on this machine: the database"
            " stores are not tested here"
        )
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


_DATABASES = itertools.count()


@pytest.fixture
def database_url(postgres_server: PostgresServer) -> str:
    """The URL of a new database on the test server, with promptkit's tables created."""
    from promptkit.database import upgrade_database

    url = postgres_server.create_database(f"test_{os.getpid()}_{next(_DATABASES)}")
    upgrade_database(url)
    return url
