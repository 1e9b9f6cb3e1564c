"""PostgresOverridesStore against a real PostgreSQL server: the guarantees of the file store
(hash guard, no lost update, all-or-nothing promotion), a cache kept fresh across processes by
LISTEN/NOTIFY, the last good text when the database is down, and push/pull byte for byte."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from structlog.testing import capture_logs

from promptkit import Prompt, TextSection
from promptkit.clock import FakeClock
from promptkit.database import upgrade_database
from promptkit.errors import (
    DatabaseSchemaError,
    DatabaseUnavailableError,
    OverridesConflictError,
    OverridesError,
)
from promptkit.overrides import (
    LocalPromptOverridesStore,
    OverridesSnapshot,
    PostgresOverridesStore,
)
from promptkit.prompt import OverrideAuthor, PromptOverride, SectionOverride
from promptkit.testing import PostgresServer

from .conftest import INTRO, review_prompt, section_hash, write_prompt_module

SECTIONS = 40


@pytest.fixture
def db_store(database_url: str) -> Iterator[PostgresOverridesStore]:
    with PostgresOverridesStore(database_url) as store:
        yield store


def _many_sections() -> Prompt[None]:
    return Prompt(
        ns="stress",
        key="many",
        sections=tuple(
            TextSection(title=f"Part {i}", key=f"part-{i}", text=f"default {i}")
            for i in range(SECTIONS)
        ),
    )


def test_an_entry_written_through_one_store_is_read_through_another(
    db_store: PostgresOverridesStore, database_url: str, prompt: Prompt[None]
) -> None:
    db_store.set_section_override(prompt, path="intro", body="Be brief.")

    with PostgresOverridesStore(database_url) as other:
        stored = other.resolve(prompt.descriptor)

    assert stored is not None
    assert stored.sections[("intro",)].body == "Be brief."
    assert stored.location == f"reviewer/code-review/latest.toml in {db_store.database}"
    assert "Be brief." in prompt.render(overrides_store=db_store).text


def test_an_entry_written_against_a_stale_hash_is_refused(
    db_store: PostgresOverridesStore, prompt: Prompt[None]
) -> None:
    stale = review_prompt(intro="An older intro.")
    entry = SectionOverride(
        expected_hash=section_hash(stale, "intro"),
        body="Old text.",
        updated_at=FakeClock().now(),
        source=OverrideAuthor("operator"),
    )
    override = PromptOverride("reviewer", "code-review", "latest", sections={("intro",): entry})

    with pytest.raises(OverridesError, match="does not match the section's current hash"):
        db_store.upsert(prompt.descriptor, override)

    assert db_store.resolve(prompt.descriptor) is None


def test_writers_in_many_processes_lose_no_entry(database_url: str, tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(
        "import sys\n"
        "from promptkit import Prompt, TextSection\n"
        "from promptkit.overrides import PostgresOverridesStore\n"
        "prompt = Prompt(ns='stress', key='many', sections=tuple(TextSection(title=f'Part {i}',"
        f" key=f'part-{{i}}', text=f'default {{i}}') for i in range({SECTIONS})))\n"
        "url, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
        "with PostgresOverridesStore(url) as store:\n"
        "    for number in range(first, first + count):\n"
        "        store.set_section_override(prompt, path=f'part-{number}',"
        " body=f'body {number}')\n",
        encoding="utf-8",
    )
    share = SECTIONS // 4
    writers = [
        subprocess.Popen([sys.executable, str(script), database_url, str(first), str(share)])
        for first in range(0, SECTIONS, share)
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0] * 4

    with PostgresOverridesStore(database_url) as store:
        stored = store.resolve(_many_sections().descriptor)
    assert stored is not None
    assert {path[0]: entry.body for path, entry in stored.sections.items()} == {
        f"part-{i}": f"body {i}" for i in range(SECTIONS)
    }


def test_a_promotion_replaces_entries_only_while_they_are_what_was_evaluated(
    db_store: PostgresOverridesStore, prompt: Prompt[None]
) -> None:
    evaluated = db_store.set_section_override(prompt, path="intro", body="Evaluated text.")
    snapshot = OverridesSnapshot.of(evaluated)
    db_store.set_section_override(prompt, path="intro", body="Edited meanwhile.")
    candidate = PromptOverride(
        "reviewer", "code-review", "latest", sections=dict(evaluated.sections), promotion={}
    )

    with pytest.raises(OverridesConflictError, match="section intro edited"):
        db_store.replace_entries(prompt.descriptor, candidate, expected=snapshot)

    stored = db_store.resolve(prompt.descriptor)
    assert stored is not None and stored.sections[("intro",)].body == "Edited meanwhile."


def test_a_change_made_by_another_process_reaches_this_store_cache(
    db_store: PostgresOverridesStore, database_url: str, tmp_path: Path, prompt: Prompt[None]
) -> None:
    db_store.set_section_override(prompt, path="intro", body="First text.")
    assert "First text." in prompt.render(overrides_store=db_store).text  # now cached
    write_prompt_module(tmp_path)

    completed = subprocess.run(
        [sys.executable, "-m", "promptkit", "overrides", "set", "--overrides-dir", database_url,
         "--prompt", "review_prompts:PROMPT", "--path", "intro", "--body", "Second text."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr

    # The listener drops the cached value when the notification arrives (milliseconds after the
    # commit); this loop only waits for that thread, it asserts no time.
    for _ in range(10_000):
        if "Second text." in prompt.render(overrides_store=db_store).text:
            break
        db_store.wait_for_change(timeout=0.01)
    assert "Second text." in prompt.render(overrides_store=db_store).text


def test_a_stopped_database_leaves_renders_on_the_last_good_text_and_fails_writes_by_name(
    prompt: Prompt[None],
) -> None:
    if PostgresServer.binaries() is None:
        pytest.skip("no PostgreSQL server binaries on this machine")
    with PostgresServer.start() as server:
        url = server.create_database("outage")
        upgrade_database(url)
        store = PostgresOverridesStore(url, pool_timeout=1.0, clock=FakeClock())
        store.set_section_override(prompt, path="intro", body="Served while down.")
        assert "Served while down." in prompt.render(overrides_store=store).text
        server.stop_server()
        # Waits for the listener thread to see the server go; no time is asserted.
        while store.listening:
            store.wait_for_change(timeout=0.05)

        with capture_logs() as logs:
            texts = [prompt.render(overrides_store=store).text for _ in range(5)]
        with pytest.raises(DatabaseUnavailableError) as raised:
            store.set_section_override(prompt, path="intro", body="Not written.")
        store.close()

    assert all("Served while down." in text for text in texts)
    warnings = [log for log in logs if log["event"] == "overrides_database_unreachable"]
    assert len(warnings) == 1
    assert raised.value.database == store.database
    assert store.database in str(raised.value)
    assert "nothing was written" in str(raised.value)


def test_migration_creates_the_tables_of_an_empty_database_once(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database("empty_once")

    first, second = upgrade_database(url), upgrade_database(url)

    assert (first.before, first.after, first.changed) == (0, 1, True)
    assert (second.before, second.after, second.changed) == (1, 1, False)


def test_a_store_refuses_a_database_without_the_tables(
    postgres_server: PostgresServer, prompt: Prompt[None]
) -> None:
    url = postgres_server.create_database("no_tables")

    with (
        PostgresOverridesStore(url) as store,
        pytest.raises(DatabaseSchemaError, match="promptkit db upgrade"),
    ):
        store.set_section_override(prompt, path="intro", body="x")


def test_a_store_and_an_upgrade_refuse_a_newer_schema(
    database_url: str, prompt: Prompt[None]
) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("UPDATE promptkit_schema SET version = 99")

    with (
        PostgresOverridesStore(database_url) as store,
        pytest.raises(DatabaseSchemaError, match="newer than the 1 this promptkit knows"),
    ):
        store.set_section_override(prompt, path="intro", body="x")
    with pytest.raises(DatabaseSchemaError, match="schema 99"):
        upgrade_database(database_url)


def test_push_then_pull_leaves_the_files_byte_identical(
    db_store: PostgresOverridesStore, tmp_path: Path, prompt: Prompt[None]
) -> None:
    files = LocalPromptOverridesStore(tmp_path / "reviewed")
    files.set_section_override(prompt, path="intro", body="Line one\r\nline two\n\ttabbed ✓")
    files.set_tool_override(prompt, tool="search", description="Search carefully.")
    files.set_shared_section(
        section_key="workspace-digest",
        tag="latest",
        body="A digest.",
        expected_hash=section_hash(prompt, "workspace-digest"),
        source=OverrideAuthor("optimizer", "gpt"),
        provenance={"commit": "abc", "dirty": False, "notes": ("one", "two")},
        workspace=tmp_path,
    )
    hand_edited = files.prompt_file("reviewer", "code-review")
    hand_edited.write_bytes(hand_edited.read_bytes().replace(b"Line one", b"Line 1"))
    files.set_section_override(prompt, tag="candidate", path="intro", body="Other tag.")
    before = {path: path.read_bytes() for path in (tmp_path / "reviewed").rglob("*.toml")}

    db_store.replace_documents(files.tag_documents("latest"), tag="latest")
    pulled = LocalPromptOverridesStore(tmp_path / "pulled")
    pulled.replace_documents(db_store.tag_documents("latest"), tag="latest")

    after = {
        tmp_path / "reviewed" / path.relative_to(tmp_path / "pulled"): path.read_bytes()
        for path in (tmp_path / "pulled").rglob("*.toml")
    }
    latest = {path: data for path, data in before.items() if path.name == "latest.toml"}
    assert after == latest
    assert len(after) == 2


def test_push_refuses_a_tag_whose_file_is_broken_and_writes_nothing(
    db_store: PostgresOverridesStore, tmp_path: Path, prompt: Prompt[None]
) -> None:
    files = LocalPromptOverridesStore(tmp_path / "reviewed")
    files.set_section_override(prompt, path="intro", body=INTRO + " More.")
    files.prompt_file("reviewer", "other").parent.mkdir(parents=True)
    files.prompt_file("reviewer", "other").write_text("version = [unclosed\n", encoding="utf-8")

    with pytest.raises(OverridesError, match="malformed TOML"):
        db_store.replace_documents(files.tag_documents("latest"), tag="latest")

    assert db_store.tag_documents("latest") == {}
