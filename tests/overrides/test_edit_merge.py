"""`overrides edit` on a stale entry: the operator's text and both defaults in a merge view."""

from pathlib import Path

import pytest

from promptkit.overrides import LocalPromptOverridesStore

from ..conftest import run_promptkit
from .conftest import INTRO, editor_env, review_prompt, section_hash, stored, write_prompt_module

REF = "review_prompts:PROMPT"
NEW_INTRO = "The intro after a code change."
OPERATOR_TEXT = "The operator's careful intro."

SHOW_THE_VIEW = 'Path("merge-view.txt").write_text(Path(sys.argv[1]).read_text())\n'
# Keeps the operator's block of the view and drops the rest, as a person resolving it would.
KEEP_THE_OPERATORS_TEXT = """
draft = Path(sys.argv[1])
ours = draft.read_text().split("\\n", 1)[1].split("||||||| ", 1)[0]
draft.write_text(ours.rstrip("\\n"))
"""


@pytest.fixture
def stale_project(tmp_path: Path) -> Path:
    write_prompt_module(tmp_path)
    result = run_promptkit(
        "overrides", "set", "--prompt", REF, "--path", "intro", "--body", OPERATOR_TEXT,
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    write_prompt_module(tmp_path, intro=NEW_INTRO)
    return tmp_path


def _edit(project: Path, script: str) -> tuple[int, str]:
    result = run_promptkit(
        "overrides", "edit", "--prompt", REF, "--path", "intro",
        cwd=project, env=editor_env(project, script),
    )  # fmt: skip
    return result.returncode, result.stderr


def _stored_intro(project: Path) -> tuple[str, str]:
    store = LocalPromptOverridesStore(project / "overrides")
    entry = stored(store, review_prompt(NEW_INTRO)).sections[("intro",)]
    return entry.body, entry.expected_hash


def test_edit_on_a_stale_entry_shows_the_operators_text_and_both_defaults(
    stale_project: Path,
) -> None:
    _edit(stale_project, SHOW_THE_VIEW)

    view = (stale_project / "merge-view.txt").read_text().splitlines()
    assert view == [
        "<<<<<<< your override (written for the old code)",
        OPERATOR_TEXT,
        "||||||| the code's default when the override was written",
        INTRO,
        "=======",
        NEW_INTRO,
        ">>>>>>> the code's default now",
    ]


def test_edit_on_a_stale_entry_keeps_the_operators_text(stale_project: Path) -> None:
    status, stderr = _edit(stale_project, KEEP_THE_OPERATORS_TEXT)

    assert status == 0, stderr
    assert _stored_intro(stale_project) == (
        OPERATOR_TEXT,
        section_hash(review_prompt(NEW_INTRO), "intro"),
    )


def test_edit_refuses_to_save_while_merge_markers_remain(stale_project: Path) -> None:
    status, stderr = _edit(stale_project, "")

    assert status != 0
    assert "line 1: merge markers" in stderr and "nothing was written" in stderr
    assert _stored_intro(stale_project) == (OPERATOR_TEXT, section_hash(review_prompt(), "intro"))
