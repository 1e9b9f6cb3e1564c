"""Key rule for section keys, prompt keys and namespace segments, and section titles.

The rule is written out here on its own (not imported from promptkit) so the tests pin the
documented contract rather than whatever the code happens to do.
"""

import re

import pytest
from hypothesis import given, strategies as st

from promptkit import MarkdownSection, Prompt, PromptValidationError, TextSection

KEY_RULE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")

valid_keys = st.from_regex(KEY_RULE, fullmatch=True)
invalid_keys = st.text(max_size=80).filter(lambda key: KEY_RULE.fullmatch(key) is None)
invalid_segments = invalid_keys.filter(lambda segment: "/" not in segment)


def _section(key: str) -> TextSection:
    return TextSection(title="Title", key=key, text="body")


@given(valid_keys)
def test_keys_following_the_rule_are_accepted_everywhere(key: str) -> None:
    prompt: Prompt[None] = Prompt(ns=f"{key}/{key}", key=key, sections=(_section(key),))

    assert prompt.key == key
    assert [path for path, _ in prompt.iter_sections()] == [(key,)]


@given(invalid_keys)
def test_section_key_outside_the_rule_is_refused_naming_the_key(key: str) -> None:
    with pytest.raises(PromptValidationError) as raised:
        _section(key)

    assert repr(key) in str(raised.value)


@given(invalid_keys)
def test_prompt_key_outside_the_rule_is_refused_naming_the_key(key: str) -> None:
    with pytest.raises(PromptValidationError) as raised:
        Prompt(ns="demo", key=key)

    assert repr(key) in str(raised.value)


@given(st.lists(valid_keys, max_size=3), invalid_segments, st.lists(valid_keys, max_size=3))
def test_ns_segment_outside_the_rule_is_refused_naming_the_segment(
    before: list[str], segment: str, after: list[str]
) -> None:
    ns = "/".join([*before, segment, *after])

    with pytest.raises(PromptValidationError) as raised:
        Prompt(ns=ns, key="demo")

    assert repr(segment) in str(raised.value)


@pytest.mark.parametrize(
    "key",
    ["", ".", "..", ".hidden", "-dash", "_under", "Upper", "a b", "a/b", "ü", "a" * 65, "key\n"],
)
def test_typical_bad_keys_are_refused(key: str) -> None:
    with pytest.raises(PromptValidationError, match=re.escape(repr(key))):
        _section(key)


@pytest.mark.parametrize("key", ["a", "0", "a" * 64, "v1.2_beta-3", "9lives"])
def test_boundary_keys_are_accepted(key: str) -> None:
    assert _section(key).key == key


def test_non_string_key_is_refused() -> None:
    with pytest.raises(PromptValidationError, match="section key"):
        TextSection(title="Title", key=7, text="body")  # type: ignore[arg-type]


@pytest.mark.parametrize("ns", ["", "/", "demo/", "/demo", "demo//inner"])
def test_ns_with_an_empty_segment_is_refused(ns: str) -> None:
    with pytest.raises(PromptValidationError):
        Prompt(ns=ns, key="demo")


def test_sibling_sections_sharing_a_key_are_refused_naming_the_key() -> None:
    with pytest.raises(PromptValidationError, match="'twin'"):
        Prompt(ns="demo", key="p", sections=(_section("twin"), _section("twin")))


def test_child_sections_sharing_a_key_are_refused_naming_the_key() -> None:
    with pytest.raises(PromptValidationError, match="'twin'"):
        TextSection(title="Parent", key="parent", children=(_section("twin"), _section("twin")))


def test_same_key_under_different_parents_is_accepted() -> None:
    prompt: Prompt[None] = Prompt(
        ns="demo",
        key="p",
        sections=(
            TextSection(title="A", key="a", children=(_section("shared"),)),
            TextSection(title="B", key="b", children=(_section("shared"),)),
        ),
    )

    assert [path for path, _ in prompt.iter_sections()] == [
        ("a",),
        ("a", "shared"),
        ("b",),
        ("b", "shared"),
    ]


@pytest.mark.parametrize("title", ["", "   ", "two\nlines"])
def test_title_must_be_one_non_empty_line(title: str) -> None:
    with pytest.raises(PromptValidationError, match="'intro'"):
        MarkdownSection(title=title, key="intro", template="text")
