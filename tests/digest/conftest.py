"""Fixtures for the digest tests: real git repositories in tmp_path and a real overrides store."""

import subprocess
from pathlib import Path

import pytest

from promptkit.overrides import LocalPromptOverridesStore
from promptkit.session import Session

GIT_IDENTITY = ("-c", "user.name=Digest Test", "-c", "user.email=digest@example.invalid")


def git(repo: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=repo, check=True, capture_output=True, text=True
    )
    return completed.stdout.strip()


def commit_file(repo: Path, name: str, text: str) -> str:
    """Write `name`, commit it, and return the new HEAD sha."""
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"change {name}")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_file(repo, "README.md", "# Demo\n")
    return repo


@pytest.fixture
def session() -> Session:
    return Session()


@pytest.fixture
def store(tmp_path: Path) -> LocalPromptOverridesStore:
    return LocalPromptOverridesStore(tmp_path / "overrides")
