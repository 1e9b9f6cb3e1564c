"""Shared sections: one body per (section key, tag), found by every prompt with that key.

`SharedAwareSection` is a hand-written section that resolves its body the way the workspace
digest section does: the prompt's own override, else a fresh shared entry, else a placeholder.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from promptkit import Prompt, RenderContext, Section, TextSection
from promptkit.errors import OverridesError
from promptkit.overrides import LocalPromptOverridesStore, SharedSectionOverride, SharedSectionStore
from promptkit.prompt import OverrideAuthor, SectionOverride

from .conftest import section_hash

OPTIMIZER = OverrideAuthor("optimizer", "gpt-test")


@dataclass(frozen=True, kw_only=True, eq=False)
class SharedAwareSection(Section):
    wording: str = "digest v1"

    def original_body_template(self) -> str:
        return self.wording

    def render_body(self, params: Any, context: RenderContext) -> str:
        return self.resolve_body(params, None, context)

    def resolve_body(self, params: Any, override: str | None, context: RenderContext) -> str:
        if override is not None:
            return override
        if isinstance(context.overrides, SharedSectionStore):
            entry = context.overrides.resolve_shared_section(self.key, context.tag)
            if entry is not None and entry.expected_hash == self.content_hash:
                return entry.body
        return "(placeholder)"


def _prompt(key: str, wording: str = "digest v1") -> Prompt[None]:
    return Prompt(
        ns="team",
        key=key,
        sections=(
            TextSection(title="Task", key="task", text=f"Do {key}."),
            SharedAwareSection(title="Workspace", key="workspace-digest", wording=wording),
        ),
    )


def _share(store: LocalPromptOverridesStore, body: str, tag: str = "latest") -> SectionOverride:
    return store.set_shared_section(
        section_key="workspace-digest",
        tag=tag,
        body=body,
        expected_hash=section_hash(_prompt("writer"), "workspace-digest"),
        source=OPTIMIZER,
    )


def _shared_entry(store: LocalPromptOverridesStore) -> SectionOverride:
    entry = LocalPromptOverridesStore(store.root, strict_overrides=True).resolve_shared_section(
        "workspace-digest", "latest"
    )
    assert entry is not None
    return entry


def test_local_store_keeps_shared_sections(store: LocalPromptOverridesStore) -> None:
    assert isinstance(store, SharedSectionStore)


def test_shared_section_written_for_one_prompt_is_found_by_another_with_the_same_key(
    store: LocalPromptOverridesStore,
) -> None:
    _share(store, "Python 3.11 project; run `make test`.")

    text = _prompt("other").render(overrides_store=store).text

    assert "Python 3.11 project; run `make test`." in text


def test_prompts_own_override_wins_over_the_shared_one(store: LocalPromptOverridesStore) -> None:
    _share(store, "Shared digest.")
    own = _prompt("own")
    store.set_section_override(own, path="workspace-digest", body="This prompt's own digest.")

    assert "This prompt's own digest." in own.render(overrides_store=store).text
    assert "Shared digest." in _prompt("other").render(overrides_store=store).text


def test_shared_section_is_kept_per_tag(store: LocalPromptOverridesStore) -> None:
    _share(store, "Canary digest.", tag="canary")

    assert "(placeholder)" in _prompt("other").render(overrides_store=store).text
    assert "Canary digest." in _prompt("other").render(overrides_store=store, tag="canary").text


def test_shared_entry_for_another_version_of_the_section_is_not_used(
    store: LocalPromptOverridesStore,
) -> None:
    _share(store, "Digest for v1.")

    text = _prompt("other", wording="digest v2").render(overrides_store=store).text

    assert "(placeholder)" in text


def test_shared_file_is_readable_toml_under_the_shared_folder(
    store: LocalPromptOverridesStore,
) -> None:
    _share(store, "Line one.\nLine two.\n")

    file = store.root / "_shared" / "workspace-digest" / "latest.toml"
    text = file.read_text(encoding="utf-8")
    assert 'section_key = "workspace-digest"\ntag = "latest"\n' in text
    assert 'source = "optimizer"\nmodel = "gpt-test"\n' in text
    assert 'body = """\nLine one.\nLine two.\n"""' in text


def test_shared_write_replaces_the_previous_shared_body(store: LocalPromptOverridesStore) -> None:
    _share(store, "First digest.")
    _share(store, "Second digest.")

    assert _shared_entry(store).body == "Second digest."


def test_shared_write_with_a_malformed_hash_is_refused(store: LocalPromptOverridesStore) -> None:
    with pytest.raises(OverridesError, match="64 lower-case hex digits"):
        store.set_shared_section(
            section_key="workspace-digest",
            tag="latest",
            body="x",
            expected_hash="not-a-hash",
            source=OPTIMIZER,
        )

    assert not store.root.exists()


def test_shared_write_with_a_credential_is_refused(store: LocalPromptOverridesStore) -> None:
    with pytest.raises(OverridesError, match="aws-access-key-id"):
        _share(store, "deploy with AKIAABCDEFGHIJKLMNOP")

    assert store.resolve_shared_section("workspace-digest", "latest") is None


def test_shared_header_that_does_not_match_its_place_is_reported(
    store: LocalPromptOverridesStore,
) -> None:
    _share(store, "Digest.")
    file = store.shared_file("workspace-digest")
    file.write_text(
        file.read_text().replace('section_key = "workspace-digest"', 'section_key = "other"'),
        encoding="utf-8",
    )

    with pytest.raises(OverridesError, match=r"line \d+: header section_key = 'other'"):
        LocalPromptOverridesStore(store.root, strict_overrides=True).resolve_shared_section(
            "workspace-digest", "latest"
        )


def test_list_overrides_includes_shared_files(store: LocalPromptOverridesStore) -> None:
    _share(store, "Digest.")
    store.set_section_override(_prompt("own"), path="task", body="Own task.")

    listed = store.list_overrides()

    shared = [value for value in listed if isinstance(value, SharedSectionOverride)]
    assert [(s.section_key, s.tag, s.entry.body) for s in shared] == [
        ("workspace-digest", "latest", "Digest.")
    ]
    assert len(listed) == 2


def test_shared_entry_keeps_who_wrote_it_and_when(store: LocalPromptOverridesStore) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    _share(store, "Digest.")

    entry = _shared_entry(store)

    assert entry.source == OPTIMIZER
    assert entry.updated_at >= before
