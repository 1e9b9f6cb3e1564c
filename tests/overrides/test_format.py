"""The TOML files: readable, hand-editable, and every problem reported with file and line."""

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from promptkit import Prompt
from promptkit.errors import OverridesError
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.secrets import find_secrets

from .conftest import review_prompt, stored


def _written_file(store: LocalPromptOverridesStore, prompt: Prompt[None]) -> Path:
    store.set_section_override(prompt, path="intro/tone", body="Be direct.\nName the line.\n")
    return store.prompt_file("reviewer", "code-review")


def _line_of(text: str, fragment: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_file_has_version_header_and_multiline_bodies(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    text = _written_file(store, prompt).read_text(encoding="utf-8")

    assert re.search(
        r'^version = 1\nns = "reviewer"\nprompt_key = "code-review"\ntag = "latest"$',
        text,
        re.MULTILINE,
    )
    assert '[sections."intro/tone"]' in text
    assert 'body = """\nBe direct.\nName the line.\n"""' in text


def test_hand_edited_body_is_applied_at_render(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    text = file.read_text(encoding="utf-8")
    file.write_text(text.replace("Name the line.", "Name the file and line."), encoding="utf-8")

    assert "Name the file and line." in prompt.render(overrides_store=store).text


def test_malformed_toml_is_reported_with_file_and_line(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    lines = file.read_text(encoding="utf-8").splitlines()
    broken_line = _line_of("\n".join(lines), "source =")
    lines[broken_line - 1] = "source operator"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with pytest.raises(OverridesError) as raised:
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)

    assert f"{file} line {broken_line}: malformed TOML" in str(raised.value)
    assert "promptkit overrides check" in str(raised.value)


def test_unterminated_body_is_reported_at_the_last_line(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    text = file.read_text(encoding="utf-8").rstrip('"\n') + "\n"
    file.write_text(text, encoding="utf-8")

    with pytest.raises(OverridesError, match=rf"line {text.count(chr(10)) + 1}: malformed TOML"):
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)


@pytest.mark.parametrize(
    ("key", "wrong"), [("ns", '"other"'), ("prompt_key", '"other-key"'), ("tag", '"canary"')]
)
def test_header_that_does_not_match_the_files_place_is_reported_with_its_line(
    store: LocalPromptOverridesStore, prompt: Prompt[None], key: str, wrong: str
) -> None:
    file = _written_file(store, prompt)
    text = re.sub(
        rf"^{key} = .*$", f"{key} = {wrong}", file.read_text(encoding="utf-8"), flags=re.MULTILINE
    )
    file.write_text(text, encoding="utf-8")

    with pytest.raises(OverridesError) as raised:
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)

    assert f"{file} line {_line_of(text, f'{key} = ')}: header {key}" in str(raised.value)
    assert "does not match the file's place" in str(raised.value)


def test_file_copied_to_another_place_is_refused(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    file.with_name("canary.toml").write_bytes(file.read_bytes())

    with pytest.raises(OverridesError, match="header tag = 'latest' does not match"):
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(
            prompt.descriptor, "canary"
        )


def test_newer_format_version_asks_for_an_upgrade(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    file.write_text(file.read_text().replace("version = 1", "version = 2"), encoding="utf-8")

    with pytest.raises(OverridesError, match="newer promptkit; upgrade"):
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)


def test_misspelled_entry_key_is_reported_at_its_table(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    text = file.read_text(encoding="utf-8").replace("body = ", "boddy = ")
    file.write_text(text, encoding="utf-8")

    with pytest.raises(OverridesError) as raised:
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)

    table_line = _line_of(text, '[sections."intro/tone"]')
    assert f"line {table_line}: sections.\"intro/tone\": unknown key 'boddy'" in str(raised.value)


def test_nested_table_instead_of_a_quoted_path_gets_a_hint(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    text = file.read_text(encoding="utf-8").replace(
        '[sections."intro/tone"]', "[sections.intro.tone]"
    )
    file.write_text(text, encoding="utf-8")

    with pytest.raises(OverridesError, match=r'quoted key: \[sections."parent/child"\]'):
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)


def test_traversal_path_inside_a_file_is_refused(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    text = file.read_text(encoding="utf-8").replace('"intro/tone"', '"../escape"')
    file.write_text(text, encoding="utf-8")

    with pytest.raises(OverridesError, match=r'sections."../escape": a section path is keys'):
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)


def test_write_over_a_malformed_file_is_refused_and_leaves_it_intact(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    file.write_text(file.read_text(encoding="utf-8") + "\n[broken\n", encoding="utf-8")
    before = file.read_bytes()

    with pytest.raises(OverridesError, match="malformed TOML"):
        store.set_section_override(prompt, path="intro", body="x")

    assert file.read_bytes() == before


def test_file_that_is_not_utf8_is_reported_with_its_line(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    file = _written_file(store, prompt)
    file.write_bytes(file.read_bytes() + b"\n# caf\xe9\n")

    with pytest.raises(OverridesError, match=r"line \d+: not UTF-8"):
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve(prompt.descriptor)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300))
def test_any_body_reads_back_as_written_with_lf_line_endings(tmp_path_factory, body: str) -> None:
    if find_secrets(body.replace("\r\n", "\n")):
        return
    store = LocalPromptOverridesStore(tmp_path_factory.mktemp("bodies"))
    prompt = review_prompt()
    store.set_section_override(prompt, path="intro", body=body)

    assert stored(store, prompt).sections[("intro",)].body == body.replace("\r\n", "\n")


def test_a_body_holding_bytes_that_were_not_utf8_is_refused_and_nothing_written(
    store: LocalPromptOverridesStore, prompt: Prompt[None]
) -> None:
    with pytest.raises(OverridesError, match="lone surrogate at character 3"):
        store.set_section_override(prompt, path="intro/tone", body="caf\udce9 au lait")

    assert not store.prompt_file("reviewer", "code-review").exists()
