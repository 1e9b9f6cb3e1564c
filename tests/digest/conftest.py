"""Fixtures for the digest tests: real git repositories in tmp_path and a real overrides store."""

import argparse
from pathlib import Path

import pytest

from promptkit.overrides import LocalPromptOverridesStore
from promptkit.session import Session

from ..conftest import committed_repo, git


def run_digest_cli(*argv: str) -> int:
    """Run `promptkit digest ARGV...` through its parser and handler; returns the exit status."""
    from promptkit.cli import _digest as digest_cli

    parser = argparse.ArgumentParser(prog="promptkit digest")
    digest_cli.register(parser)
    args = parser.parse_args(argv)
    status: int = args.handler(args)
    return status


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
    """A git repository holding only a README, in one commit."""
    return committed_repo(tmp_path / "repo", {"README.md": "# Demo\n"})


@pytest.fixture
def session() -> Session:
    return Session()


@pytest.fixture
def store(tmp_path: Path) -> LocalPromptOverridesStore:
    return LocalPromptOverridesStore(tmp_path / "overrides")
