"""SessionStore across real processes: write in one, load in another; survive kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import promptkit
from promptkit.session import FsyncPolicy, SessionStore, register_slice_type


@dataclass(frozen=True)
class Note:
    index: int
    text: str


register_slice_type("test-processes.note", Note)

SRC = Path(promptkit.__file__).resolve().parents[1]

# The child defines its own Note under the same stable name: stored sessions refer to names,
# never to import paths. structlog goes to stderr so stdout carries only what the test reads.
PRELUDE = """
import sys
from dataclasses import dataclass
import structlog
structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
from promptkit.session import FsyncPolicy, PromptRendered, Session, SessionStore
from promptkit.session import register_slice_type

@dataclass(frozen=True)
class Note:
    index: int
    text: str

register_slice_type("test-processes.note", Note)
state_root, workspace = sys.argv[1], sys.argv[2]
"""

WRITER = (
    PRELUDE
    + """
from datetime import datetime, timezone
session = Session(session_id="written", tags={"by": "writer"})
with SessionStore(state_root) as store:
    store.attach(session, workspace)
    for index in range(1, 51):
        session.dispatch(Note(index, f"note {index}"))
    session.dispatch(
        PromptRendered("ns", "key", None, "# Rendered", ("lookup",), datetime.now(timezone.utc))
    )
"""
)

READER = (
    PRELUDE
    + """
import json
session = SessionStore(state_root).load(workspace, "written")
notes = [[n.index, n.text] for n in session.select_all(Note)]
rendered = [r.text for r in session.select_all(PromptRendered)]
tags = dict(session.tags)
print(json.dumps({"seq": session.seq, "notes": notes, "rendered": rendered, "tags": tags}))
"""
)

APPENDER = (
    PRELUDE
    + """
session = Session(session_id="killed")
store = SessionStore(state_root, fsync=FsyncPolicy.every_event())
store.attach(session, workspace)
for index in range(1, 1_000_000):
    session.dispatch(Note(index, "x" * 200))
    print(session.seq, flush=True)
"""
)


def _run(script: str, tmp_path: Path, state_root: Path, workspace: Path) -> str:
    path = tmp_path / "child.py"
    path.write_text(script, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(path), str(state_root), str(workspace)],
        capture_output=True,
        text=True,
        env=_child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _child_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }


def test_session_written_in_one_process_loads_in_another(
    tmp_path: Path, state_root: Path, workspace: Path
) -> None:
    _run(WRITER, tmp_path, state_root, workspace)
    loaded = json.loads(_run(READER, tmp_path, state_root, workspace))
    assert loaded == {
        "seq": 51,
        "notes": [[i, f"note {i}"] for i in range(1, 51)],
        "rendered": ["# Rendered"],
        "tags": {"by": "writer"},
    }


def test_kill_9_mid_append_loses_nothing_that_was_fsynced(
    tmp_path: Path, state_root: Path, workspace: Path
) -> None:
    script = tmp_path / "appender.py"
    script.write_text(APPENDER, encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, str(script), str(state_root), str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
    )
    assert child.stdout is not None
    confirmed: list[int] = []
    try:
        while len(confirmed) < 300:
            line = child.stdout.readline()
            assert line, f"appender died early: {child.stderr.read() if child.stderr else ''}"
            confirmed.append(int(line))
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
        # Read the rest through the same text wrapper: `communicate()` reads the raw pipe and
        # would drop lines this wrapper has already buffered.
        remaining = child.stdout.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        if child.stderr is not None:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    confirmed.extend(int(line) for line in remaining.split())
    assert confirmed == list(range(1, len(confirmed) + 1))

    loaded = SessionStore(state_root, fsync=FsyncPolicy.on_close()).load(workspace, "killed")
    indexes = [note.index for note in loaded.select_all(Note)]
    # Everything confirmed is there, in order; an event fsynced just before the kill but not
    # yet printed may be there too.
    assert indexes == list(range(1, len(indexes) + 1))
    assert len(indexes) >= confirmed[-1]
    assert loaded.seq == len(indexes)
