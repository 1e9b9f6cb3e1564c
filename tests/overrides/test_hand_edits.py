"""A body edited by hand is recognised by its hash and credited to the operator, with a date."""

import os
from datetime import UTC, datetime
from pathlib import Path

from promptkit import Prompt
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor

from .conftest import stored

EDITED_AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def _edit_by_hand(file: Path, old: str, new: str) -> None:
    file.write_text(file.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(file, (EDITED_AT.timestamp(), EDITED_AT.timestamp()))


def _table(file: Path, header: str) -> str:
    """The lines of the `header` table of `file`, up to the next table."""
    after = file.read_text(encoding="utf-8").split(header + "\n", 1)[1]
    return after.split("\n[", 1)[0]


def test_a_hand_edit_becomes_source_operator_with_its_date_at_the_next_write(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(
        prompt, path="intro", body="Seeded intro.", source=OverrideAuthor("optimizer", "gpt-x")
    )
    file = store.prompt_file("reviewer", "code-review")
    _edit_by_hand(file, "Seeded intro.", "Intro a person wrote.")

    store.set_section_override(prompt, path="intro/tone", body="Tone.")

    intro = _table(file, "[sections.intro]")
    assert 'source = "operator"' in intro and "model" not in intro
    assert "updated_at = 2026-03-04 05:06:07+00:00" in intro
    assert stored(store, prompt).sections[("intro",)].body == "Intro a person wrote."


def test_show_credits_a_hand_edit_to_the_operator_before_any_write(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.seed(prompt)
    _edit_by_hand(
        store.prompt_file("reviewer", "code-review"), "Be kind and specific.", "Be direct."
    )

    entry = stored(store, prompt).sections[("intro", "tone")]

    assert (entry.source, entry.updated_at) == (OverrideAuthor("operator"), EDITED_AT)


def test_an_entry_written_by_promptkit_keeps_its_author(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.seed(prompt)

    assert stored(store, prompt).sections[("intro", "tone")].source == OverrideAuthor("seed")


def test_record_hand_edits_rewrites_only_a_file_that_was_edited(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.seed(prompt)
    file = store.prompt_file("reviewer", "code-review")
    assert not store.record_hand_edits(file)

    _edit_by_hand(file, "Be kind and specific.", "Be direct.")

    assert store.record_hand_edits(file, dry_run=True)
    assert 'source = "seed"' in _table(file, '[sections."intro/tone"]')
    assert store.record_hand_edits(file)
    assert not store.record_hand_edits(file, dry_run=True)
    assert 'source = "operator"' in _table(file, '[sections."intro/tone"]')
