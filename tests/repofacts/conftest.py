"""Fixtures for the repository facts tests: the host files tests' real git repositories and
real files in tmp_path."""

from ..hostfiles.conftest import commit, git, repo, write

__all__ = ["commit", "git", "repo", "write"]
