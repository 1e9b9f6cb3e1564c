"""PostgresSessionStore against a real PostgreSQL server: the file store's sequence, checksums
and refusal of a stale copy; conversation turns appended by several processes at once, ordered,
whole and none lost; a worker killed mid-turn leaves whole turns."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from promptkit.adapters import ConversationMessage, Message, conversation_messages
from promptkit.adapters._conversation import keep_messages
from promptkit.errors import SessionCorruptError, SessionError, SessionStaleError
from promptkit.session import PostgresSessionStore, Session, register_slice_type


@dataclass(frozen=True)
class Note:
    index: int
    text: str


register_slice_type("test-postgres.note", Note)

AT = datetime(2026, 1, 1, tzinfo=UTC)

# A worker process: `turns` conversation turns on one shared session, each a user message and
# the answer naming it; a refused append (another worker moved the head) loads and tries again.
WORKER = """
import sys
from datetime import datetime, timezone
from promptkit.adapters import Message
from promptkit.adapters._conversation import keep_messages
from promptkit.errors import SessionStaleError
from promptkit.session import PostgresSessionStore

url, workspace, name, turns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with PostgresSessionStore(url) as store:
    for turn in range(turns):
        while True:
            session = store.load(workspace, "shared")
            try:
                with store.attach(session, workspace):
                    keep_messages(session, "chat", [Message.user(f"{name}-{turn}"),
                        Message.assistant(f"answer {name}-{turn}")],
                        added_at=datetime.now(timezone.utc))
                break
            except SessionStaleError:
                continue
        print(turn, flush=True)
"""


@pytest.fixture
def pg_store(database_url: str) -> Iterator[PostgresSessionStore]:
    with PostgresSessionStore(database_url) as store:
        yield store


def _start_worker(
    store: PostgresSessionStore, url: str, workspace: Path, name: str, turns: int, **options: Any
) -> subprocess.Popen[str]:
    """A WORKER process keeping `turns` turns in the session "shared" (stored first if new)."""
    script = workspace / "worker.py"
    if not script.exists():
        with store.attach(Session(session_id="shared"), workspace):
            pass
        script.write_text(WORKER, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), url, str(workspace), name, str(turns)], text=True, **options
    )


def _shared_texts(store: PostgresSessionStore, workspace: Path) -> list[str]:
    return [m.text for m in conversation_messages(store.load(workspace, "shared"), "chat")]


def _notes(count: int, session_id: str = "notes") -> Session:
    session = Session(session_id=session_id, tags={"user": "ada"})
    for index in range(count):
        session.dispatch(Note(index, f"note {index}"))
    return session


def test_a_stored_session_loads_with_its_slices_seq_and_tags(
    pg_store: PostgresSessionStore, database_url: str, tmp_path: Path
) -> None:
    session = _notes(2)
    with pg_store.attach(session, tmp_path):
        session.dispatch(Note(2, "after attach"))

    with PostgresSessionStore(database_url) as other:
        loaded = other.load(tmp_path, "notes")
        listed = other.sessions(tmp_path)

    assert loaded.select_all(Note) == session.select_all(Note)
    assert loaded.seq == session.seq == 3
    assert loaded.tags == {"user": "ada"}
    assert [(s.session_id, s.status) for s in listed] == [("notes", "closed")]


def test_a_loaded_copy_continues_the_stored_log(
    pg_store: PostgresSessionStore, tmp_path: Path
) -> None:
    with pg_store.attach(_notes(1), tmp_path):
        pass
    copy = pg_store.load(tmp_path, "notes")
    with pg_store.attach(copy, tmp_path):
        copy.dispatch(Note(1, "second"))

    assert [n.text for n in pg_store.load(tmp_path, "notes").select_all(Note)] == [
        "note 0",
        "second",
    ]


def test_a_new_session_with_a_stored_id_is_refused(
    pg_store: PostgresSessionStore, tmp_path: Path
) -> None:
    with pg_store.attach(_notes(1), tmp_path):
        pass

    with pytest.raises(SessionError, match="already exists"):
        pg_store.attach(_notes(1), tmp_path)


def test_a_copy_loaded_before_another_worker_appended_is_refused(
    pg_store: PostgresSessionStore, tmp_path: Path
) -> None:
    with pg_store.attach(_notes(1), tmp_path):
        pass
    first, second = pg_store.load(tmp_path, "notes"), pg_store.load(tmp_path, "notes")
    with pg_store.attach(first, tmp_path):
        first.dispatch(Note(1, "first worker"))

    with pytest.raises(SessionStaleError, match="moved past the copy in hand"):
        pg_store.attach(second, tmp_path)


def test_an_append_over_a_head_another_worker_moved_is_refused_and_not_applied(
    pg_store: PostgresSessionStore, tmp_path: Path
) -> None:
    with pg_store.attach(_notes(1), tmp_path):
        pass
    first, second = pg_store.load(tmp_path, "notes"), pg_store.load(tmp_path, "notes")
    first_attachment = pg_store.attach(first, tmp_path)
    second_attachment = pg_store.attach(second, tmp_path)
    first.dispatch(Note(1, "first worker"))

    with pytest.raises(SessionStaleError, match="Nothing was applied"):
        second.dispatch(Note(1, "second worker"))

    first_attachment.close()
    second_attachment.close()
    assert [n.text for n in second.select_all(Note)] == ["note 0"]
    assert [n.text for n in pg_store.load(tmp_path, "notes").select_all(Note)] == [
        "note 0",
        "first worker",
    ]


def test_a_record_altered_in_the_database_fails_the_load_naming_it(
    pg_store: PostgresSessionStore, database_url: str, tmp_path: Path
) -> None:
    session = _notes(0)
    with pg_store.attach(session, tmp_path):
        session.dispatch(Note(0, "original"))
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(
            "UPDATE promptkit_session_events SET line = replace(line, 'original', 'forged')"
        )

    with pytest.raises(SessionCorruptError, match=r"notes events:1: record was altered"):
        pg_store.load(tmp_path, "notes")


def test_a_deleted_last_event_fails_the_load(
    pg_store: PostgresSessionStore, database_url: str, tmp_path: Path
) -> None:
    session = _notes(0)
    with pg_store.attach(session, tmp_path):
        session.dispatch(Note(0, "one"))
        session.dispatch(Note(1, "two"))
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("DELETE FROM promptkit_session_events WHERE seq = 2")

    with pytest.raises(SessionCorruptError, match="records at the end were deleted"):
        pg_store.load(tmp_path, "notes")


def test_a_conversation_turn_is_one_stored_event(
    pg_store: PostgresSessionStore, database_url: str, tmp_path: Path
) -> None:
    session = Session(session_id="chat")
    with pg_store.attach(session, tmp_path):
        keep_messages(
            session, "support", [Message.user("Hi"), Message.assistant("Hello!")], added_at=AT
        )
    with psycopg.connect(database_url) as connection:
        rows = connection.execute("SELECT count(*) FROM promptkit_session_events").fetchone()

    assert rows == (1,)
    loaded = pg_store.load(tmp_path, "chat")
    assert [m.text for m in conversation_messages(loaded, "support")] == ["Hi", "Hello!"]
    assert all(isinstance(m, ConversationMessage) for m in loaded.select_all(ConversationMessage))


def test_turns_appended_by_four_processes_are_ordered_whole_and_none_lost(
    pg_store: PostgresSessionStore, database_url: str, tmp_path: Path
) -> None:
    turns = 12
    workers = [
        _start_worker(pg_store, database_url, tmp_path, f"w{n}", turns, stdout=subprocess.DEVNULL)
        for n in range(4)
    ]
    assert [worker.wait(timeout=240) for worker in workers] == [0] * 4

    texts = _shared_texts(pg_store, tmp_path)
    pairs = list(zip(texts[::2], texts[1::2], strict=True))
    assert all(answer == f"answer {question}" for question, answer in pairs)
    assert sorted(question for question, _ in pairs) == sorted(
        f"w{n}-{turn}" for n in range(4) for turn in range(turns)
    )
    for n in range(4):  # each worker's turns in its own order
        mine = [q for q, _ in pairs if q.startswith(f"w{n}-")]
        assert mine == [f"w{n}-{turn}" for turn in range(turns)]


def test_a_worker_killed_mid_turn_leaves_only_whole_turns(
    pg_store: PostgresSessionStore, database_url: str, tmp_path: Path
) -> None:
    worker = _start_worker(pg_store, database_url, tmp_path, "k", 100_000, stdout=subprocess.PIPE)
    assert worker.stdout is not None
    for _ in range(3):  # a few turns acknowledged, then killed wherever it is
        worker.stdout.readline()
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=60)

    texts = _shared_texts(pg_store, tmp_path)
    assert len(texts) % 2 == 0 and len(texts) >= 6
    assert all(a == f"answer {q}" for q, a in zip(texts[::2], texts[1::2], strict=True))
