"""Fixtures for the host files tests: real git repositories and real files in tmp_path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import git as run_git

GitRunner = Callable[..., str]
FileWriter = Callable[[Path, str, "str | bytes"], Path]


@pytest.fixture
def git() -> GitRunner:
    """Run git in a directory with a fixed identity and no user configuration; returns stdout."""
    return run_git


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
