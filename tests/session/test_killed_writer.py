"""A process killed while replacing a session file leaves a temp file named with its pid; the
next attachment of that session removes it."""

import os
import signal
from pathlib import Path

from promptkit.session import Session, SessionStore

from ..stuck_writer import start_stuck_writer


def _killed_writer_of(file: Path, tmp_path: Path) -> int:
    writer = start_stuck_writer(tmp_path, file)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    return writer.pid


def _temp_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


def test_attaching_a_session_removes_the_temp_file_a_killed_writer_left(
    store: SessionStore, workspace: Path, tmp_path: Path
) -> None:
    with store.attach(Session(session_id="s1"), workspace):
        pass
    session_dir = store.session_dir(workspace, "s1")
    pid = _killed_writer_of(session_dir / "base.jsonl", tmp_path)
    [left] = _temp_files(session_dir)
    assert left.startswith(f".base.jsonl.{pid}.")

    with store.attach(store.load(workspace, "s1"), workspace):
        pass

    assert _temp_files(session_dir) == []
