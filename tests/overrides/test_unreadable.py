"""A render never fails because of an override file: the last good text (or the defaults), and one
error record per file."""

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from promptkit import Prompt, Session, WorkspaceDigestSection
from promptkit.errors import OverridesError
from promptkit.overrides import LocalPromptOverridesStore, check_overrides

from .conftest import INTRO, review_prompt


def _break(file: Path) -> None:
    file.write_text(file.read_text(encoding="utf-8") + "\nbody = \n", encoding="utf-8")


def test_a_malformed_override_renders_the_default_and_logs_once(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Overridden intro.")
    file = store.prompt_file("reviewer", "code-review")
    _break(file)
    reader = LocalPromptOverridesStore(store.root)

    with capture_logs() as logs:
        texts = [prompt.render(overrides_store=reader).text for _ in range(3)]

    assert all(INTRO in text and "Overridden intro." not in text for text in texts)
    [record] = [log for log in logs if log["event"] == "override_unreadable"]
    assert record["log_level"] == "error"
    assert record["file"] == str(file)
    assert record["line"] == len(file.read_text(encoding="utf-8").splitlines())


def test_strict_overrides_makes_the_render_raise(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Overridden intro.")
    _break(store.prompt_file("reviewer", "code-review"))

    with pytest.raises(OverridesError, match=r"latest\.toml line \d+: malformed TOML"):
        prompt.render(overrides_store=LocalPromptOverridesStore(store.root, strict_overrides=True))


def test_check_still_fails_on_the_file_a_render_skips(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Overridden intro.")
    _break(store.prompt_file("reviewer", "code-review"))
    prompt.render(overrides_store=store)

    [problem] = check_overrides(store.root, [prompt])

    assert problem.kind == "invalid" and problem.line is not None


def test_a_store_that_read_a_file_keeps_its_last_good_text_while_it_is_broken(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Overridden intro.")
    file = store.prompt_file("reviewer", "code-review")
    reader = LocalPromptOverridesStore(store.root)
    assert "Overridden intro." in prompt.render(overrides_store=reader).text
    _break(file)

    with capture_logs() as logs:
        text = prompt.render(overrides_store=reader).text

    assert "Overridden intro." in text
    [record] = [log for log in logs if log["event"] == "override_unreadable"]
    assert record["fallback"] == "the last good text read from the file is rendered instead"


def test_a_fixed_file_applies_again_at_the_next_render(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = store.prompt_file("reviewer", "code-review")
    store.set_section_override(prompt, path="intro", body="Fixed intro.")
    fixed = file.read_text(encoding="utf-8")
    store.set_section_override(prompt, path="intro", body="Overridden intro.")
    prompt.render(overrides_store=store)
    _break(file)
    prompt.render(overrides_store=store)

    file.write_text(fixed, encoding="utf-8")

    assert "Fixed intro." in prompt.render(overrides_store=store).text


def test_a_removed_file_is_not_served_from_memory(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Overridden intro.")
    assert "Overridden intro." in prompt.render(overrides_store=store).text

    store.delete(ns="reviewer", prompt_key="code-review", tag="latest")

    assert "Overridden intro." not in prompt.render(overrides_store=store).text


def test_a_broken_shared_digest_renders_the_placeholder_instead_of_failing(
    store: LocalPromptOverridesStore,
) -> None:
    session = Session()
    section = WorkspaceDigestSection(session=session)
    digest_prompt: Prompt[None] = Prompt(ns="demo", key="digest", sections=(section,))
    file = store.shared_file("workspace-digest")
    file.parent.mkdir(parents=True)
    file.write_text('version = 1\nsection_key = "workspace-digest"\ntag = \n', encoding="utf-8")

    with capture_logs() as logs:
        text = digest_prompt.render(overrides_store=store).text

    assert section.placeholder in text
    assert [log["line"] for log in logs if log["event"] == "override_unreadable"] == [3]


def test_an_unreadable_file_of_one_prompt_leaves_other_prompts_overrides_applied(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    other: Prompt[None] = Prompt(ns="other", key="code-review", sections=review_prompt().sections)
    store.set_section_override(other, path="intro", body="Other intro.")
    store.set_section_override(prompt, path="intro", body="Overridden intro.")
    _break(store.prompt_file("reviewer", "code-review"))

    assert "Other intro." in other.render(overrides_store=store).text
