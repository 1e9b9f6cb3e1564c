"""check_overrides: every invalid file and every entry that will not apply, one problem each."""

from pathlib import Path

from promptkit import Prompt
from promptkit.overrides import LocalPromptOverridesStore, check_overrides
from promptkit.prompt import OverrideAuthor

from .conftest import review_prompt, section_hash


def _append(file: Path, text: str) -> None:
    file.write_text(file.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_clean_store_has_no_problems(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.seed(prompt)

    assert check_overrides(store.root, [prompt]) == ()


def test_entry_for_a_path_the_prompt_does_not_have_is_reported_at_its_line(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Intro.")
    file = store.prompt_file("reviewer", "code-review")
    _append(
        file,
        f'\n[sections."retired"]\nexpected_hash = "{"0" * 64}"\n'
        'updated_at = 2024-01-01T00:00:00Z\nsource = "operator"\nbody = "old"\n',
    )

    [problem] = check_overrides(store.root, [prompt])

    assert problem.line == file.read_text().splitlines().index('[sections."retired"]') + 1
    assert "reviewer/code-review has no section 'retired'" in str(problem)


def test_tool_description_naming_an_unknown_parameter_is_reported(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.seed(prompt)
    file = store.prompt_file("reviewer", "code-review")
    _append(file, '\n[tools.search.param_descriptions]\nlimit = "how many"\n')

    [problem] = check_overrides(store.root, [prompt])

    assert "tool search of reviewer/code-review has no parameters named ['limit']" in str(problem)


def test_a_file_whose_prompt_was_not_given_is_reported_as_unchecked(
    store: LocalPromptOverridesStore,
) -> None:
    store.set_section_override(review_prompt(), path="intro", body="Intro.")

    [problem] = check_overrides(store.root)

    assert problem.kind == "unchecked"
    assert "prompt reviewer/code-review was not found" in problem.message


def test_syntax_only_checks_files_without_prompts(store: LocalPromptOverridesStore) -> None:
    store.set_section_override(review_prompt(), path="intro", body="Intro.")

    assert check_overrides(store.root, syntax_only=True) == ()


def test_shared_entry_for_another_version_of_a_section_is_reported_per_prompt(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_shared_section(
        section_key="intro",
        tag="latest",
        body="Shared intro.",
        expected_hash=section_hash(review_prompt("Old intro."), "intro"),
        source=OverrideAuthor("operator"),
    )

    [problem] = check_overrides(store.root, [prompt])

    assert problem.file == str(store.shared_file("intro"))
    assert "shared intro (used by reviewer/code-review intro): stale" in str(problem)


def test_every_invalid_file_is_reported_not_only_the_first(tmp_path: Path) -> None:
    root = tmp_path / "overrides"
    for name in ("a", "b"):
        file = root / name / "prompt" / "latest.toml"
        file.parent.mkdir(parents=True)
        file.write_text("version = \n", encoding="utf-8")

    problems = check_overrides(root)

    assert [(Path(p.file).parts[-3], p.line) for p in problems] == [("a", 1), ("b", 1)]
    assert all(p.message.startswith("malformed TOML") for p in problems)
