"""The repository's own curated overrides (overrides/) against the example prompt: the check
`make test` runs passes on the committed files and fails once a code change makes them stale."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..conftest import REPO_ROOT, run_promptkit
from .conftest import EXAMPLE

CHECK = [
    "overrides",
    "check",
    "--overrides-dir",
    "overrides",
    "--prompt",
    "examples.code_reviewer_example:build_review_prompt",
]


def test_the_committed_overrides_pass_the_check() -> None:
    completed = run_promptkit(*CHECK, cwd=REPO_ROOT)

    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "overrides check: 0 problem(s) in 2 file(s) under overrides" in completed.stdout


def test_the_check_fails_once_the_role_text_changes_in_the_code(tmp_path: Path) -> None:
    shutil.copytree(REPO_ROOT / "overrides", tmp_path / "overrides")
    (tmp_path / "examples").mkdir()
    source = EXAMPLE.read_text(encoding="utf-8")
    edited = source.replace("You are a senior code reviewer", "You are a careful code reviewer")
    assert edited != source
    (tmp_path / "examples" / EXAMPLE.name).write_text(edited, encoding="utf-8")

    completed = run_promptkit(*CHECK, cwd=tmp_path)

    assert completed.returncode == 1
    assert 'sections."role": stale' in completed.stdout
