"""A session's files that are not regular files (a FIFO, a directory, a device) are refused with
SessionCorruptError naming the file, before a byte is read or written: loading never waits for
a FIFO's writer, attaching never waits for its reader. A disk that fills before a session is
closed is a SessionError caused by the OS's error, and the session still loads as recorded."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from promptkit.errors import SessionCorruptError
from promptkit.session import Session, SessionStore, register_slice_type


@dataclass(frozen=True)
class Note:
    text: str


register_slice_type("test-special-files.note", Note)


def _stored(store: SessionStore, workspace: Path) -> Path:
    session = Session(session_id="s1")
    with store.attach(session, workspace):
        session.dispatch(Note("kept"))
    return store.session_dir(workspace, "s1")


def _replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _replace_with_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize("name", ["events.jsonl", "base.jsonl", "metadata.json"])
@pytest.mark.parametrize(
    ("kind", "replace"), [("FIFO", _replace_with_fifo), ("directory", _replace_with_directory)]
)
def test_a_session_file_that_is_not_a_regular_file_is_refused_unread(
    store: SessionStore, workspace: Path, name: str, kind: str, replace
) -> None:
    replace(_stored(store, workspace) / name)

    with pytest.raises(
        SessionCorruptError, match=re.escape(f"{name}: a {kind}, not a regular file")
    ):
        store.load(workspace, "s1")


def test_attaching_over_an_event_log_that_is_a_fifo_is_refused_without_waiting(
    store: SessionStore, workspace: Path
) -> None:
    session_dir = store.session_dir(workspace, "s2")
    session_dir.mkdir(parents=True)
    os.mkfifo(session_dir / "events.jsonl")

    with pytest.raises(SessionCorruptError, match=r"events\.jsonl: a FIFO, not a regular file"):
        store.attach(Session(session_id="s2"), workspace)


CHILD = """
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from promptkit.errors import SessionError
from promptkit.session import Session, SessionStore, register_slice_type


@dataclass(frozen=True)
class Note:
    text: str


register_slice_type("test-special-files.note", Note)
state, workspace = Path(sys.argv[1]), Path(sys.argv[2])
store = SessionStore(state)
session = Session(session_id="full")
attachment = store.attach(session, workspace)
session.dispatch(Note("recorded before the disk filled"))
filler = state / "filler"
fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"x" * 4096)
except OSError:
    os.close(fd)
try:
    attachment.close()
    outcome = {"closed": True}
except SessionError as error:
    outcome = {"error": str(error), "cause": type(error.__cause__).__name__}
filler.unlink()
with SessionStore(state) as reader:
    loaded = reader.load(workspace, "full")
outcome["notes"] = [note.text for note in loaded.select_all(Note)]
print(json.dumps(outcome))
"""


def _small_filesystems_available() -> bool:
    """Whether an unprivileged process may mount a small tmpfs in a namespace of its own."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run(
        [unshare, "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _small_filesystems_available(), reason="no user mount namespaces here")
def test_a_disk_full_at_close_is_a_session_error_and_the_session_still_loads(
    tmp_path: Path,
) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    state, workspace = tmp_path / "state", tmp_path / "workspace"
    state.mkdir()
    workspace.mkdir()
    # A 256 KiB filesystem of its own, mounted over the state folder for the child only.
    command = (
        f"mount -t tmpfs -o size=256k tmpfs {state} && "
        f"{sys.executable} {script} {state} {workspace}"
    )

    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", command], capture_output=True, text=True, check=False
    )

    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert "No space left on device" in outcome["error"]
    assert outcome["error"].startswith("could not close session 'full'")
    assert outcome["cause"] == "OSError"
    assert outcome["notes"] == ["recorded before the disk filled"]
