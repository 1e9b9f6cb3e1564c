"""Fixtures for the REPL tests: the example REPL run as a user runs it (a subprocess reading
piped stdin) over the shared `repo` fixture, with its session state in `state_dir`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from ..conftest import REPO_ROOT, offline_env, run_process

EXAMPLE = REPO_ROOT / "examples" / "code_reviewer_example.py"
OPENAI_KEY = "sk-test-repl-0123456789abcdefghijklmn"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


def run_example(
    repo: Path,
    state_dir: Path,
    commands: str,
    *extra: str,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The code-review example over `repo`, with its session state in `state_dir`."""
    return run_process(
        [sys.executable, str(EXAMPLE), str(repo), "--state-dir", str(state_dir), *extra],
        cwd=repo.parent,
        env=env,
        stdin=commands,
    )


def openai_env() -> dict[str, str]:
    """The environment with a test OpenAI key, for `--provider openai --base-url ...`."""
    env = offline_env()
    env["OPENAI_API_KEY"] = OPENAI_KEY
    return env
