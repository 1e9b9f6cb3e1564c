"""The command line against a database as against files: `db upgrade`, `overrides push/pull`,
and `overrides set/show/list/check` given a postgresql:// URL."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from ..conftest import run_promptkit
from .conftest import write_prompt_module


def _ok(*arguments: str, cwd: Path) -> str:
    completed = run_promptkit(*arguments, cwd=cwd)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def test_db_upgrade_creates_the_tables_once_and_refuses_a_newer_schema(
    postgres_server, tmp_path: Path
) -> None:
    url = postgres_server.create_database("cli_upgrade")

    first = _ok("db", "upgrade", "--database", url, cwd=tmp_path)
    second = _ok("db", "upgrade", "--database", url, cwd=tmp_path)
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("UPDATE promptkit_schema SET version = 7")
    refused = run_promptkit("db", "upgrade", "--database", url, cwd=tmp_path)

    assert "promptkit schema 0 -> 1" in first
    assert "up to date; nothing to do" in second
    assert refused.returncode == 2
    assert "schema 7, newer than the 1 this promptkit knows" in refused.stderr


def test_push_and_pull_move_a_tag_byte_for_byte(database_url: str, tmp_path: Path) -> None:
    write_prompt_module(tmp_path)
    prompt = ("--prompt", "review_prompts:PROMPT")
    _ok("overrides", "set", *prompt, "--path", "intro", "--body", "Reviewed in git.", cwd=tmp_path)
    _ok("overrides", "seed", *prompt, cwd=tmp_path)
    reviewed = sorted((tmp_path / "overrides").rglob("*.toml"))
    before = [path.read_bytes() for path in reviewed]

    pushed = _ok("overrides", "push", "--database", database_url, cwd=tmp_path)
    for path in reviewed:
        path.unlink()
    pulled = _ok("overrides", "pull", "--database", database_url, cwd=tmp_path)

    assert "1 document(s) written, 0 removed" in pushed
    assert "1 document(s) written" in pulled
    assert [path.read_bytes() for path in reviewed] == before


def test_overrides_commands_work_on_a_database_url(database_url: str, tmp_path: Path) -> None:
    write_prompt_module(tmp_path)
    prompt = ("--prompt", "review_prompts:PROMPT")
    where = ("--overrides-dir", database_url)

    _ok(
        "overrides",
        "set",
        *where,
        *prompt,
        "--path",
        "intro",
        "--body",
        "From the CLI.",
        cwd=tmp_path,
    )
    shown = json.loads(_ok("overrides", "show", *where, *prompt, "--json", cwd=tmp_path))
    listed = json.loads(_ok("overrides", "list", *where, *prompt, "--json", cwd=tmp_path))
    checked = run_promptkit("overrides", "check", *where, *prompt, cwd=tmp_path)

    assert shown["file"].startswith("reviewer/code-review/latest.toml in postgresql://")
    assert [e["body"] for e in shown["entries"] if e["name"] == "intro"] == ["From the CLI."]
    assert [(f["ns"], f["name"], f["stale"]) for f in listed["files"]] == [
        ("reviewer", "code-review", 0)
    ]
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 problem(s) in 1 file(s)" in checked.stdout


def test_optimize_and_digest_status_keep_the_session_in_the_database(
    database_url: str, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "shop"\n\n[tool.promptkit]\noverrides = "{database_url}"\n'
        f'state = "{database_url}"\n',
        encoding="utf-8",
    )
    (tmp_path / "README.md").write_text("# Shop\n\nRun `make test`.\n", encoding="utf-8")

    _ok("optimize", ".", "--provider", "static", cwd=tmp_path)
    status = json.loads(_ok("digest", "status", ".", "--json", cwd=tmp_path))

    assert status["origin"] == "session"
    assert not (tmp_path / ".promptkit").exists()
    with psycopg.connect(database_url) as connection:
        assert connection.execute("SELECT count(*) FROM promptkit_sessions").fetchone() == (1,)


def test_check_notes_a_hand_edit_pushed_to_the_database_and_fix_records_it(
    database_url: str, tmp_path: Path
) -> None:
    write_prompt_module(tmp_path)
    prompt = ("--prompt", "review_prompts:PROMPT")
    where = ("--overrides-dir", database_url)
    _ok("overrides", "seed", *prompt, cwd=tmp_path)
    (file,) = (tmp_path / "overrides").rglob("*.toml")
    text = file.read_text(encoding="utf-8")
    file.write_text(text.replace('source = "seed"', 'source = "seed"  # reviewed'), "utf-8")
    _ok("overrides", "push", "--database", database_url, cwd=tmp_path)

    noted = run_promptkit("overrides", "check", *where, *prompt, cwd=tmp_path)
    fixed = run_promptkit("overrides", "check", *where, *prompt, "--fix", cwd=tmp_path)
    again = run_promptkit("overrides", "check", *where, *prompt, cwd=tmp_path)

    assert noted.returncode == 0, noted.stdout + noted.stderr
    assert "reviewer/code-review/latest.toml in postgresql://" in noted.stderr
    assert "not in the form promptkit writes" in noted.stderr
    assert "recorded in promptkit's form" in fixed.stderr
    assert "not in the form" not in again.stderr and "recorded" not in again.stderr
