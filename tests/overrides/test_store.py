"""LocalPromptOverridesStore: writes are checked against the prompt and never drop entries."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from promptkit import Prompt, TextSection
from promptkit.errors import OverridesError
from promptkit.overrides import LocalPromptOverridesStore, PromptOverridesStore
from promptkit.prompt import OverrideAuthor, PromptOverride, SectionOverride, ToolOverride

from ..conftest import git
from .conftest import TaskParams, rendered_tool, review_prompt, section_hash, stored

OLD_HASH = "0" * 64


def _entry(expected_hash: str, body: str) -> SectionOverride:
    return SectionOverride(
        expected_hash, body, datetime(2025, 1, 1, tzinfo=UTC), OverrideAuthor("operator")
    )


def test_local_store_satisfies_the_protocol(store: LocalPromptOverridesStore) -> None:
    assert isinstance(store, PromptOverridesStore)


def test_round_trip_keeps_every_field(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    written = store.set_section_override(
        prompt,
        path="intro/tone",
        body="Be direct.\nName the file and line.\n",
        source=OverrideAuthor("optimizer", "gpt-test"),
    )

    read = stored(store, prompt)

    assert read == written
    entry = read.sections[("intro", "tone")]
    assert entry.body == "Be direct.\nName the file and line.\n"
    assert entry.source == OverrideAuthor("optimizer", "gpt-test")
    assert entry.expected_hash == section_hash(prompt, "intro/tone")
    assert entry.updated_at.tzinfo is not None


def test_render_applies_the_body_exactly_as_stored_and_never_evaluates_it(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="task", body="Review {{ change }} line by line.")

    text = prompt.render(TaskParams("PR 7"), overrides_store=store).text

    assert "Review {{ change }} line by line." in text
    assert "PR 7" not in text


def test_file_lives_at_ns_key_and_tag(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, tag="canary", path="intro", body="Hello.")

    assert (store.root / "reviewer" / "code-review" / "canary.toml").is_file()
    assert store.resolve(prompt.descriptor, "latest") is None
    assert stored(store, prompt, "canary").sections[("intro",)].body == "Hello."


def test_stale_entry_is_ignored_with_a_warning_naming_file_path_and_both_hashes(
    store: LocalPromptOverridesStore,
) -> None:
    store.set_section_override(review_prompt(), path="intro", body="Old tuned intro.")
    changed = review_prompt(intro="A rewritten intro.")

    with capture_logs() as logs:
        text = changed.render(overrides_store=store).text

    assert "A rewritten intro." in text
    assert "Old tuned intro." not in text
    [warning] = [log for log in logs if log["event"] == "override_stale"]
    assert warning["path"] == "intro"
    assert warning["location"] == str(store.prompt_file("reviewer", "code-review"))
    assert warning["override_hash"] == section_hash(review_prompt(), "intro")
    assert warning["code_hash"] == section_hash(changed, "intro")


def test_upsert_with_a_wrong_hash_is_refused_and_writes_nothing(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    override = PromptOverride(
        "reviewer", "code-review", "latest", sections={("intro",): _entry(OLD_HASH, "x")}
    )

    with pytest.raises(OverridesError, match="does not match the section's current hash"):
        store.upsert(prompt.descriptor, override)

    assert not store.prompt_file("reviewer", "code-review").exists()


def test_upsert_with_the_current_hash_merges_into_the_file(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="task", body="Task body.")
    intro_hash = section_hash(prompt, "intro")
    override = PromptOverride(
        "reviewer", "code-review", "latest", sections={("intro",): _entry(intro_hash, "Intro.")}
    )

    result = store.upsert(prompt.descriptor, override)

    assert {path: e.body for path, e in result.sections.items()} == {
        ("intro",): "Intro.",
        ("task",): "Task body.",
    }


def test_write_keeps_stale_entries_of_other_paths(store: LocalPromptOverridesStore) -> None:
    store.set_section_override(review_prompt(), path="intro", body="Tuned for the old intro.")
    newer = review_prompt(intro="The intro after a code change.")

    store.set_section_override(newer, path="task", body="New task text.")

    override = stored(store, newer)
    assert override.sections[("intro",)].body == "Tuned for the old intro."
    assert override.sections[("intro",)].expected_hash != section_hash(newer, "intro")
    assert override.sections[("task",)].body == "New task text."


def test_write_keeps_entries_of_paths_this_code_does_not_have(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = store.prompt_file("reviewer", "code-review")
    store.set_section_override(prompt, path="intro", body="Intro.")
    text = file.read_text(encoding="utf-8")
    file.write_text(
        text + f'\n[sections."retired/part"]\nexpected_hash = "{OLD_HASH}"\n'
        'updated_at = 2024-01-01T00:00:00Z\nsource = "operator"\nbody = "still used elsewhere"\n',
        encoding="utf-8",
    )

    store.set_section_override(prompt, path="task", body="Task.")

    assert stored(store, prompt).sections[("retired", "part")].body == ("still used elsewhere")


def test_write_to_an_unknown_path_is_refused(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    with pytest.raises(OverridesError, match=r"no section at 'intro/missing'.*intro/tone"):
        store.set_section_override(prompt, path="intro/missing", body="x")

    assert not store.root.exists()


def test_write_to_a_section_that_does_not_accept_overrides_is_refused(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    with pytest.raises(OverridesError, match="rules does not accept overrides"):
        store.set_section_override(prompt, path="rules", body="x")


def test_body_with_a_credential_is_refused_naming_the_rule_and_never_the_value(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    key = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7" * 2
    with pytest.raises(OverridesError) as raised:
        store.set_section_override(prompt, path="intro", body=f"Use the key {key} when asked.")

    assert "openai-project-key" in str(raised.value)
    assert key not in str(raised.value)
    assert not store.prompt_file("reviewer", "code-review").exists()


def test_crlf_line_endings_are_stored_as_lf(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="one\r\ntwo\r\n")

    assert stored(store, prompt).sections[("intro",)].body == "one\ntwo\n"


def test_seed_writes_default_bodies_only_of_sections_that_can_be_seeded(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    seeded = store.seed(prompt)

    assert {path: entry.body for path, entry in seeded.sections.items()} == {
        ("intro",): "Review the change like a careful colleague.",
        ("intro", "tone"): "Be kind and specific.",
        ("search",): "Use the search tool.",
    }
    assert {entry.source.kind for entry in seeded.sections.values()} == {"seed"}


def test_seed_leaves_out_digest_sections_so_the_missing_digest_warning_stays(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    seeded = store.seed(prompt)

    assert ("workspace-digest",) not in seeded.sections


def test_seed_leaves_out_templates_that_read_params(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    seeded = store.seed(prompt)

    assert ("task",) not in seeded.sections
    assert prompt.render(TaskParams("PR 9"), overrides_store=store).text.count("PR 9") == 1


def test_seed_writes_tool_descriptions(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    seeded = store.seed(prompt)

    search = rendered_tool(prompt, "search")
    assert seeded.tools == {"search": ToolOverride(search.contract_hash, "Search the code base.")}


def test_seed_never_overwrites_existing_entries(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Operator's intro.")

    seeded = store.seed(prompt)

    assert seeded.sections[("intro",)].body == "Operator's intro."
    assert seeded.sections[("intro",)].source.kind == "operator"


def test_tool_override_changes_the_rendered_tool_description(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_tool_override(
        prompt,
        tool="search",
        description="Search files by text.",
        param_descriptions={"query": "words to look for"},
    )

    tool = rendered_tool(prompt, "search", store)

    assert tool.description == "Search files by text."
    assert tool.parameters_schema["properties"]["query"]["description"] == "words to look for"


def test_tool_override_for_an_unknown_parameter_is_refused(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    with pytest.raises(OverridesError, match="no parameters named"):
        store.set_tool_override(prompt, tool="search", param_descriptions={"limit": "how many"})


def test_delete_section_override_keeps_the_other_entries(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Intro.")
    store.set_section_override(prompt, path="task", body="Task.")

    assert store.delete_section_override(
        ns="reviewer", prompt_key="code-review", tag="latest", path="intro"
    )

    assert set(stored(store, prompt).sections) == {("task",)}


def test_delete_removes_the_file(store: LocalPromptOverridesStore, prompt: Prompt[None]) -> None:
    store.set_section_override(prompt, path="intro", body="Intro.")

    assert store.delete(ns="reviewer", prompt_key="code-review", tag="latest")
    assert store.resolve(prompt.descriptor) is None
    assert not store.delete(ns="reviewer", prompt_key="code-review", tag="latest")


def test_resolve_reuses_the_parsed_file_until_the_file_changes(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="First.")
    first = store.resolve(prompt.descriptor)

    assert store.resolve(prompt.descriptor) is first

    other_writer = LocalPromptOverridesStore(store.root)
    other_writer.set_section_override(prompt, path="intro", body="Second, and longer.")

    refreshed = store.resolve(prompt.descriptor)
    assert refreshed is not None
    assert refreshed.sections[("intro",)].body == "Second, and longer."


def test_list_overrides_returns_every_file(
    store: LocalPromptOverridesStore, prompt: Prompt[None], tmp_path: Path
) -> None:
    store.set_section_override(prompt, path="intro", body="Latest.")
    store.set_section_override(prompt, tag="canary", path="intro", body="Canary.")

    listed = store.list_overrides()

    assert [(o.ns, o.prompt_key, o.tag) for o in listed if isinstance(o, PromptOverride)] == [
        ("reviewer", "code-review", "canary"),
        ("reviewer", "code-review", "latest"),
    ]


def test_list_overrides_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    assert LocalPromptOverridesStore(tmp_path / "nowhere").list_overrides() == ()


def test_seed_skips_a_default_text_that_looks_like_a_credential(
    store: LocalPromptOverridesStore,
) -> None:
    leaky: Prompt[None] = Prompt(
        ns="reviewer",
        key="leaky",
        sections=(
            TextSection(title="Setup", key="setup", text="export AWS_KEY=AKIAABCDEFGHIJKLMNOP"),
            TextSection(title="Task", key="task", text="Review."),
        ),
    )

    with capture_logs() as logs:
        seeded = store.seed(leaky)

    assert set(seeded.sections) == {("task",)}
    [warning] = [log for log in logs if log["event"] == "seed_section_skipped"]
    assert warning["path"] == "setup"
    assert "AKIA" not in repr(warning)


def test_writes_in_a_git_repository_leave_no_untracked_lock_or_temp_file(
    tmp_path: Path, prompt: Prompt[None]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    store = LocalPromptOverridesStore(repo / "overrides")

    store.set_section_override(prompt, path="intro", body="First.")
    store.set_section_override(prompt, path="intro", body="Second.")

    assert (repo / "overrides" / "reviewer" / "code-review" / "latest.toml.lock").exists()
    status = git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert status == [
        "?? overrides/.gitignore",
        "?? overrides/reviewer/code-review/latest.toml",
    ]


def test_an_existing_gitignore_of_the_root_is_left_as_it_is(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    ignore = store.root / ".gitignore"
    ignore.parent.mkdir()
    ignore.write_text("# the team's own rules\n*.bak\n", encoding="utf-8")

    store.set_section_override(prompt, path="intro", body="Intro.")

    assert ignore.read_text(encoding="utf-8") == "# the team's own rules\n*.bak\n"
    assert [path.name for path in store.root.iterdir() if path.is_file()] == [".gitignore"]


def test_a_refused_write_creates_no_gitignore(tmp_path: Path, prompt: Prompt[None]) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    with pytest.raises(OverridesError):
        store.set_section_override(prompt, path="nowhere", body="x")

    assert not store.root.exists()
