"""Files a hostile or careless environment puts in the overrides folder: refused, never a hang,
a crash, or a write outside the root."""

import os
from pathlib import Path

import pytest

from promptkit import Prompt
from promptkit.errors import OverridesError
from promptkit.overrides import LocalPromptOverridesStore, check_overrides
from promptkit.prompt import OverrideAuthor

from .conftest import INTRO

_DIGEST_HASH = "a" * 64


def _strict(store: LocalPromptOverridesStore) -> LocalPromptOverridesStore:
    return LocalPromptOverridesStore(store.root, strict_overrides=True)


@pytest.mark.timeout(20)
def test_a_fifo_in_place_of_an_override_file_fails_fast(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = store.prompt_file("reviewer", "code-review")
    file.parent.mkdir(parents=True)
    os.mkfifo(file)

    assert INTRO in prompt.render(overrides_store=store).text
    with pytest.raises(OverridesError, match=r"is not a regular file \(a FIFO\)"):
        _strict(store).resolve(prompt.descriptor)
    [problem] = check_overrides(store.root, [prompt])
    assert "a FIFO" in problem.message


def test_a_symlink_to_a_file_outside_the_root_is_not_read(
    store: LocalPromptOverridesStore, prompt: Prompt[None], tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.toml"
    store.set_section_override(prompt, path="intro", body="From outside.")
    file = store.prompt_file("reviewer", "code-review")
    file.replace(outside)
    file.symlink_to(outside)

    with pytest.raises(OverridesError, match="outside the overrides root"):
        _strict(store).resolve(prompt.descriptor)
    fresh = LocalPromptOverridesStore(store.root)
    assert "From outside." not in prompt.render(overrides_store=fresh).text


def test_a_symlink_inside_the_root_is_followed(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Linked.", tag="canary")
    store.prompt_file("reviewer", "code-review").symlink_to("canary.toml")

    with pytest.raises(OverridesError, match="header tag = 'canary'"):
        _strict(store).resolve(prompt.descriptor)


def test_a_prompt_folder_linked_to_a_folder_inside_the_root_is_followed(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Through a linked folder.")
    folder = store.prompt_file("reviewer", "code-review").parent
    folder.rename(folder.with_name("moved"))
    folder.symlink_to("moved", target_is_directory=True)

    assert "Through a linked folder." in prompt.render(overrides_store=_strict(store)).text


def test_an_override_in_a_folder_linked_outside_the_root_is_not_read(
    store: LocalPromptOverridesStore, prompt: Prompt[None], tmp_path: Path
) -> None:
    store.set_section_override(prompt, path="intro", body="From outside.")
    folder = store.prompt_file("reviewer", "code-review").parent
    outside = tmp_path / "outside"
    folder.rename(outside)
    folder.symlink_to(outside, target_is_directory=True)

    with pytest.raises(OverridesError, match="outside the overrides root"):
        _strict(store).resolve(prompt.descriptor)
    fresh = LocalPromptOverridesStore(store.root)
    assert "From outside." not in prompt.render(overrides_store=fresh).text


def test_a_shared_folder_linking_outside_the_root_is_refused_and_nothing_is_written_there(
    store: LocalPromptOverridesStore, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    store.root.mkdir()
    (store.root / "_shared").symlink_to(outside, target_is_directory=True)

    with pytest.raises(OverridesError, match="leads outside the overrides root"):
        store.set_shared_section(
            section_key="workspace-digest",
            tag="latest",
            body="Digest.",
            expected_hash=_DIGEST_HASH,
            source=OverrideAuthor("operator"),
        )

    assert list(outside.iterdir()) == []
    [problem] = check_overrides(store.root, syntax_only=True)
    assert problem.file == str(store.root / "_shared")
    assert "outside the overrides root" in problem.message


def test_an_override_file_over_the_size_limit_is_refused_with_the_limit(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="x" * 2000)
    small = LocalPromptOverridesStore(store.root, strict_overrides=True, max_file_bytes=1024)

    with pytest.raises(OverridesError, match="over the limit of 1024 bytes"):
        small.resolve(prompt.descriptor)


def test_a_write_that_would_exceed_the_size_limit_writes_nothing(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    small = LocalPromptOverridesStore(store.root, max_file_bytes=1024)

    with pytest.raises(OverridesError, match=r"would be \d+ bytes, over the limit of 1024"):
        small.set_section_override(prompt, path="intro", body="x" * 2000)

    assert not store.prompt_file("reviewer", "code-review").exists()


def test_deeply_nested_toml_is_a_typed_error_not_a_crash(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = store.prompt_file("reviewer", "code-review")
    file.parent.mkdir(parents=True)
    file.write_text("version = 1\nx = " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")

    with pytest.raises(OverridesError, match="line 2: malformed TOML: values are nested too deep"):
        _strict(store).resolve(prompt.descriptor)
    assert INTRO in prompt.render(overrides_store=store).text


def test_the_size_limit_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(OverridesError, match="max_file_bytes must be a positive number"):
        LocalPromptOverridesStore(tmp_path, max_file_bytes=0)


def test_a_directory_named_like_an_override_file_is_reported(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    store.set_section_override(prompt, path="intro", body="Intro.")
    store.prompt_file("reviewer", "code-review").unlink()
    store.prompt_file("reviewer", "code-review").mkdir()

    with pytest.raises(OverridesError, match=r"is not a regular file \(a directory\)"):
        _strict(store).resolve(prompt.descriptor)
