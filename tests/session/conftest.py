"""Fixtures for the session tests: a state root and a workspace root in tmp_path, a store; and
a writer that dies while recording."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from promptkit.session import FsyncPolicy, Session, SessionStore


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


def recorded_by_a_writer_that_died(
    store: SessionStore, workspace: Path, session_id: str, events: Iterable[Any]
) -> None:
    """Dispatch `events` to a session attached to `store`, then let go of the files as a process
    that died would: no close, so metadata.json still holds the head written at attach."""
    session = Session(session_id=session_id)
    attachment = store.attach(session, workspace)
    for event in events:
        session.dispatch(event)
    attachment.release()
