"""`replace_entries`: a tag's entries and their promotion evidence replaced in one write, only
when the stored entries are still those the caller read; the evidence stays through later
writes, and `check` names what changed since."""

import dataclasses

import pytest

from promptkit import Prompt
from promptkit.errors import OverridesConflictError
from promptkit.overrides import (
    LocalPromptOverridesStore,
    OverridesSnapshot,
    bind_promotion,
    check_overrides,
)
from promptkit.prompt import PromptOverride

EVIDENCE = {"from_tag": "candidate", "promoted_at": "2026-01-31T09:30:00+00:00", "cases": 3}


def _promoted(store: LocalPromptOverridesStore, prompt: Prompt[None]) -> PromptOverride:
    candidate = store.set_section_override(prompt, tag="candidate", path="intro", body="New.")
    return dataclasses.replace(
        candidate,
        tag="latest",
        promotion=bind_promotion(candidate, EVIDENCE, replaced=OverridesSnapshot()),
    )


def test_replace_entries_writes_the_entries_with_their_evidence(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    promoted = _promoted(store, prompt)

    store.replace_entries(prompt.descriptor, promoted, expected=OverridesSnapshot())

    stored = store.resolve(prompt.descriptor, "latest")
    assert stored is not None
    assert OverridesSnapshot.of(stored) == OverridesSnapshot.of(promoted)
    assert stored.promotion == promoted.promotion
    assert check_overrides(store.root, [prompt]) == ()


def test_replace_entries_refuses_when_the_entries_changed_and_writes_nothing(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    read = OverridesSnapshot.of(store.resolve(prompt.descriptor, "latest"))
    store.set_section_override(prompt, path="intro/tone", body="Written meanwhile.")
    file = store.prompt_file(prompt.ns, prompt.key, "latest")
    before = file.read_bytes()

    with pytest.raises(OverridesConflictError, match=r"section intro/tone added") as refused:
        store.replace_entries(prompt.descriptor, _promoted(store, prompt), expected=read)

    assert refused.value.changes == ("section intro/tone added",)
    assert file.read_bytes() == before


def test_later_writes_keep_the_evidence_and_check_names_the_change(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    promoted = _promoted(store, prompt)
    store.replace_entries(prompt.descriptor, promoted, expected=OverridesSnapshot())

    store.set_section_override(prompt, path="intro", body="Edited after the promotion.")

    stored = store.resolve(prompt.descriptor, "latest")
    assert stored is not None and stored.promotion == promoted.promotion
    [problem] = check_overrides(store.root, [prompt])
    assert problem.kind == "evidence"
    assert problem.message.startswith(
        "section intro edited since it was promoted from candidate at 2026-01-31T09:30:00+00:00"
    )
