"""Fixtures for the REPL tests: a real git repository, the example REPL run as a user runs it
(a subprocess reading piped stdin), and a FakeProviderServer for the commands that need a model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from promptkit.testing import FakeProviderServer

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "examples" / "code_reviewer_example.py"
OPENAI_KEY = "sk-test-repl-0123456789abcdefghijklmn"

REPO_FILES = {
    "README.md": "# Demo app\n\nRun the tests with `make test` before every commit.\n",
    "Makefile": "test:\n\tpytest -q\n\nlint:\n\truff check .\n",
    "pyproject.toml": '[project]\nname = "demo"\n',
    "src/demo/__init__.py": '"""The demo package."""\n',
    "src/demo/cli.py": "def main() -> int:\n    return 0\n",
    "tests/test_demo.py": "def test_nothing():\n    assert True\n",
}


def git(cwd: Path, *args: str) -> str:
    """Run git with a fixed identity and no user or system configuration; returns stdout."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    completed = subprocess.run(
        [
            "git",
            "-c",
            "user.name=REPL Tests",
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


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed git repository with a README, a Makefile, a package and a test."""
    root = tmp_path / "repo"
    for relative, text in REPO_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    with FakeProviderServer() as running:
        yield running


def offline_env() -> dict[str, str]:
    """The environment without provider keys, so `auto` picks the static optimizer."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL")
    }
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def run_command(
    argv: list[str],
    commands: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `argv` with `commands` piped to its stdin, as a script would drive it."""
    return subprocess.run(
        argv,
        input=commands,
        cwd=cwd,
        env=dict(env) if env is not None else offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_example(
    repo: Path,
    state_dir: Path,
    commands: str,
    *extra: str,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The code-review example over `repo`, with its session state in `state_dir`."""
    return run_command(
        [sys.executable, str(EXAMPLE), str(repo), "--state-dir", str(state_dir), *extra],
        commands,
        cwd=repo.parent,
        env=env,
    )


def openai_env() -> dict[str, str]:
    """The environment with a test OpenAI key, for `--provider openai --base-url ...`."""
    env = offline_env()
    env["OPENAI_API_KEY"] = OPENAI_KEY
    return env
