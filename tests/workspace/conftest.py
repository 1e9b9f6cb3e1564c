"""Fixtures for the workspace tests: real git repositories and real files in tmp_path."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

GitRunner = Callable[..., str]
FileWriter = Callable[[Path, str, "str | bytes"], Path]


def _git_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    return env


@pytest.fixture
def git() -> GitRunner:
    """Run git in a directory with a fixed identity and no user configuration; returns stdout."""

    def run(cwd: Path, *args: str) -> str:
        completed = subprocess.run(
            [
                "git",
                "-c",
                "user.name=Workspace Tests",
                "-c",
                "user.email=tests@example.invalid",
                "-c",
                "init.defaultBranch=main",
                "-c",
                "commit.gpgsign=false",
                *args,
            ],
            cwd=cwd,
            env=_git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=True,
        )
        return completed.stdout.strip()

    return run


@pytest.fixture
def write() -> FileWriter:
    """Write text or bytes to `root / relative`, creating parent directories."""

    def write_file(root: Path, relative: str, content: str | bytes) -> Path:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    return write_file


@pytest.fixture
def repo(tmp_path: Path, git: GitRunner) -> Path:
    """An empty git repository (no commits yet) on branch main."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


@pytest.fixture
def commit(git: GitRunner) -> Callable[[Path, str], str]:
    """Stage everything in a repository and commit it; returns the new head sha."""

    def commit_all(root: Path, message: str = "change") -> str:
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", message)
        return git(root, "rev-parse", "HEAD")

    return commit_all
