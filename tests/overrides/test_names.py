"""Names become paths only when they follow the key rule; anything else is refused first."""

from pathlib import Path

import pytest
from hypothesis import assume, given, settings, strategies as st

from promptkit import Prompt, TextSection
from promptkit._names import is_valid_key
from promptkit.errors import OverridesError
from promptkit.overrides import LocalPromptOverridesStore

from .conftest import review_prompt, stored

BAD_NAMES = [
    "..",
    ".",
    "",
    "a/b",
    "../x",
    "/abs",
    "Upper",
    "a\0b",
    "a b",
    "-lead",
    "_shared",
    "x" * 65,
]
NAME_TEXT = st.text(
    st.sampled_from("abz09._-/\\A\0 é~") | st.characters(codec="utf-8", exclude_categories=["Cs"]),
    max_size=70,
)


def _files_under(root: Path) -> list[Path]:
    return sorted(root.rglob("*")) if root.exists() else []


@pytest.mark.parametrize("name", BAD_NAMES)
def test_traversal_and_invalid_tags_are_refused_with_nothing_written(
    tmp_path: Path, name: str
) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    with pytest.raises(OverridesError, match="invalid tag"):
        store.set_section_override(review_prompt(), tag=name, path="intro", body="x")

    assert _files_under(tmp_path) == []


@pytest.mark.parametrize("name", BAD_NAMES)
def test_invalid_section_paths_are_refused_with_nothing_written(tmp_path: Path, name: str) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    with pytest.raises(OverridesError, match="section path"):
        store.set_section_override(review_prompt(), path=("intro", name), body="x")

    assert _files_under(tmp_path) == []


@pytest.mark.parametrize("name", BAD_NAMES)
def test_invalid_names_are_refused_by_delete_and_shared_writes(tmp_path: Path, name: str) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    with pytest.raises(OverridesError):
        store.delete(ns="reviewer", prompt_key=name, tag="latest")
    with pytest.raises(OverridesError):
        store.delete(ns="reviewer", prompt_key="code-review", tag=name)
    with pytest.raises(OverridesError):
        store.resolve_shared_section(name, "latest")

    assert _files_under(tmp_path) == []


@pytest.mark.parametrize("ns", ["..", "", "a//b", "a/../b", "/abs", "a/", "Upper/x", "a\0b"])
def test_invalid_namespaces_are_refused_with_nothing_written(tmp_path: Path, ns: str) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    with pytest.raises(OverridesError, match="prompt ns"):
        store.delete(ns=ns, prompt_key="code-review", tag="latest")

    assert _files_under(tmp_path) == []


def test_deleting_what_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    assert not store.delete(ns="a/b", prompt_key="c", tag="latest")
    assert not store.delete_section_override(ns="a", prompt_key="c", tag="latest", path="x")
    assert not store.delete_shared_section(section_key="workspace-digest", tag="latest")

    assert _files_under(tmp_path) == []


@settings(max_examples=200, deadline=None)
@given(tag=NAME_TEXT)
def test_a_tag_is_written_inside_the_root_exactly_when_it_follows_the_key_rule(
    tmp_path_factory, tag: str
) -> None:
    base = tmp_path_factory.mktemp("names")
    store = LocalPromptOverridesStore(base / "overrides")

    if is_valid_key(tag):
        store.set_section_override(review_prompt(), tag=tag, path="intro", body="x")
        written = [path for path in _files_under(base) if path.suffix == ".toml"]
        assert written == [base / "overrides" / "reviewer" / "code-review" / f"{tag}.toml"]
    else:
        with pytest.raises(OverridesError):
            store.set_section_override(review_prompt(), tag=tag, path="intro", body="x")
        assert _files_under(base) == []


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(NAME_TEXT, min_size=1, max_size=3))
def test_a_section_path_is_accepted_exactly_when_every_part_follows_the_key_rule(
    tmp_path_factory, parts: list[str]
) -> None:
    # A path the prompt has (`task`, which the text can happen to spell) is not what is asked.
    assume(review_prompt().section_at(tuple(parts)) is None)
    base = tmp_path_factory.mktemp("paths")
    store = LocalPromptOverridesStore(base / "overrides")

    if all(is_valid_key(part) for part in parts):
        # A valid path this prompt lacks is refused for that reason, not for its name.
        with pytest.raises(OverridesError, match="no section at"):
            store.set_section_override(review_prompt(), path=tuple(parts), body="x")
    else:
        with pytest.raises(OverridesError, match="invalid section path"):
            store.set_section_override(review_prompt(), path=tuple(parts), body="x")
    assert _files_under(base) == []


def test_nested_namespaces_become_nested_folders(tmp_path: Path) -> None:
    prompt: Prompt[None] = Prompt(
        ns="acme/review.v2",
        key="code-review",
        sections=(TextSection(title="Intro", key="intro", text="Hi."),),
    )
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    store.set_section_override(prompt, path="intro", body="Hello.")

    expected = tmp_path / "overrides" / "acme" / "review.v2" / "code-review" / "latest.toml"
    assert expected.is_file()
    assert stored(store, prompt).sections[("intro",)].body == "Hello."
