"""Fixtures for the session tests: a state root and a workspace root in tmp_path, a store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from promptkit.session import FsyncPolicy, SessionStore


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def state_root(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def store(state_root: Path) -> Iterator[SessionStore]:
    with SessionStore(state_root, fsync=FsyncPolicy.on_close()) as opened:
        yield opened
