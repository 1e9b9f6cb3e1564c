"""WorkspaceDigestSection: resolution order, overrides (own and shared), clone rules, seeding."""

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from promptkit.digest import (
    DEFAULT_PLACEHOLDER,
    WorkspaceDigestSection,
    resolve_workspace_digest,
    set_workspace_digest,
)
from promptkit.errors import PromptValidationError
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import MarkdownSection, OverrideAuthor, Prompt
from promptkit.session import Session


def digest_prompt(section: WorkspaceDigestSection, key: str = "review") -> Prompt[None]:
    intro = MarkdownSection(title="Task", key="task", template="Review the change.")
    return Prompt(ns="tests/digest", key=key, sections=(intro, section))


def body_of(text: str) -> str:
    return text.split("Workspace Digest\n\n", 1)[1]


def events(logs: list[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["event"] == name]


def share(
    store: LocalPromptOverridesStore,
    section: WorkspaceDigestSection,
    body: str,
    tag: str = "latest",
) -> None:
    store.set_shared_section(
        section_key=section.key,
        tag=tag,
        body=body,
        expected_hash=section.content_hash,
        source=OverrideAuthor("optimizer", "test-model"),
    )


def test_placeholder_is_rendered_with_a_missing_warning(session: Session) -> None:
    prompt = digest_prompt(WorkspaceDigestSection(session=session))

    with capture_logs() as logs:
        text = prompt.render().text

    assert body_of(text) == DEFAULT_PLACEHOLDER
    (warning,) = events(logs, "workspace_digest_missing")
    assert warning["log_level"] == "warning"
    assert warning["prompt_ns"] == "tests/digest"
    assert warning["prompt_key"] == "review"
    assert warning["section_key"] == "workspace-digest"


def test_placeholder_is_rendered_silently_when_warn_when_missing_is_false(
    session: Session,
) -> None:
    prompt = digest_prompt(WorkspaceDigestSection(session=session, warn_when_missing=False))

    with capture_logs() as logs:
        text = prompt.render().text

    assert body_of(text) == DEFAULT_PLACEHOLDER
    assert events(logs, "workspace_digest_missing") == []


def test_clone_keeps_warn_when_missing_unless_changed(session: Session) -> None:
    silent = WorkspaceDigestSection(session=session, warn_when_missing=False)

    assert silent.clone(session=Session()).warn_when_missing is False
    assert silent.clone(session=Session(), warn_when_missing=True).warn_when_missing is True


def test_session_digest_is_rendered_without_warnings(session: Session) -> None:
    prompt = digest_prompt(WorkspaceDigestSection(session=session))
    set_workspace_digest(session, "workspace-digest", "Layout: src/ and tests/.")

    with capture_logs() as logs:
        text = prompt.render().text

    assert body_of(text) == "Layout: src/ and tests/."
    assert [entry for entry in logs if entry["log_level"] == "warning"] == []


def test_own_override_is_used_exactly_as_stored(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    prompt = digest_prompt(WorkspaceDigestSection(session=session))
    stored = "Curated digest.\n\n- run `make test`\n- {{ not a template }}"
    store.set_section_override(prompt, path="workspace-digest", body=stored)

    with capture_logs() as logs:
        text = prompt.render(overrides_store=store).text

    assert body_of(text) == stored
    assert events(logs, "workspace_digest_missing") == []


def test_session_digest_wins_over_stored_override(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    prompt = digest_prompt(WorkspaceDigestSection(session=session))
    store.set_section_override(prompt, path="workspace-digest", body="From the override.")
    set_workspace_digest(session, "workspace-digest", "From the session.")

    assert body_of(prompt.render(overrides_store=store).text) == "From the session."


def test_shared_override_is_found_by_a_second_prompt(
    store: LocalPromptOverridesStore,
) -> None:
    first = WorkspaceDigestSection(session=Session())
    share(store, first, "Shared digest written while optimizing another prompt.")
    other = digest_prompt(
        WorkspaceDigestSection(session=Session(), title="Repository", placeholder="none yet"),
        key="planner",
    )

    with capture_logs() as logs:
        text = other.render(overrides_store=store).text

    assert text.endswith("Shared digest written while optimizing another prompt.")
    assert events(logs, "workspace_digest_missing") == []


def test_prompt_own_override_beats_the_shared_one(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    prompt = digest_prompt(WorkspaceDigestSection(session=session))
    share(store, WorkspaceDigestSection(session=session), "Shared.")
    store.set_section_override(prompt, path="workspace-digest", body="Own.")

    assert body_of(prompt.render(overrides_store=store).text) == "Own."


def test_session_digest_beats_the_shared_override(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    share(store, section, "Shared.")
    set_workspace_digest(session, section.key, "Session.")

    assert body_of(digest_prompt(section).render(overrides_store=store).text) == "Session."


def test_shared_override_for_another_hash_is_ignored_with_a_warning(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    store.set_shared_section(
        section_key=section.key,
        tag="latest",
        body="Written against other code.",
        expected_hash="0" * 64,
        source=OverrideAuthor("operator"),
    )

    with capture_logs() as logs:
        text = digest_prompt(section).render(overrides_store=store).text

    assert body_of(text) == DEFAULT_PLACEHOLDER
    (stale,) = events(logs, "shared_override_stale")
    assert stale["section_key"] == "workspace-digest"
    assert events(logs, "workspace_digest_missing") != []


def test_a_tag_without_a_shared_digest_renders_the_project_tags_and_says_so(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    share(store, section, "Shared under latest.")
    prompt = digest_prompt(section, key="fallback-logged")

    with capture_logs() as logs:
        text = prompt.render(overrides_store=store, tag="candidate").text

    assert body_of(text) == "Shared under latest."
    (fallback,) = events(logs, "workspace_digest_from_project_tag")
    assert (fallback["tag"], fallback["project_tag"]) == ("candidate", "latest")
    assert events(logs, "workspace_digest_missing") == []
    resolution = resolve_workspace_digest(prompt, overrides_store=store, tag="candidate")
    assert (resolution.tag, resolution.fallback_from) == ("latest", "candidate")
    assert resolution.source == "shared-override of tag 'latest' (tag 'candidate' has none)"


def test_a_tags_own_shared_digest_wins_over_the_project_tags(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    share(store, section, "Shared under latest.")
    share(store, section, "Shared under candidate.", tag="candidate")

    resolution = resolve_workspace_digest(
        digest_prompt(section), overrides_store=store, tag="candidate"
    )

    assert (resolution.body, resolution.tag, resolution.fallback_from) == (
        "Shared under candidate.",
        "candidate",
        None,
    )


def test_the_project_tag_is_the_stores_default_tag(session: Session, tmp_path: Path) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides", default_tag="prod")
    section = WorkspaceDigestSection(session=session)
    share(store, section, "Shared under prod.", tag="prod")
    share(store, section, "Shared under stable.", tag="stable")

    text = digest_prompt(section).render(overrides_store=store, tag="candidate").text

    assert body_of(text) == "Shared under prod."


def test_stored_override_survives_a_placeholder_and_title_change(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    before = digest_prompt(WorkspaceDigestSection(session=session, placeholder="Old text."))
    store.set_section_override(before, path="workspace-digest", body="Stored digest.")
    after = digest_prompt(
        WorkspaceDigestSection(session=session, placeholder="Reworded text.", title="Repo")
    )

    assert after.descriptor.sections == before.descriptor.sections
    assert after.render(overrides_store=store).text.endswith("Stored digest.")


def test_content_hash_depends_on_the_key() -> None:
    session = Session()
    default = WorkspaceDigestSection(session=session)
    other = WorkspaceDigestSection(session=session, key="docs-digest")

    assert default.content_hash != other.content_hash
    assert DEFAULT_PLACEHOLDER not in default.original_body_template()


def test_section_accepts_overrides_and_is_never_seeded(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    prompt = digest_prompt(section)

    seeded = store.seed(prompt)

    assert section.accepts_overrides is True
    assert section.seedable is False
    assert ("workspace-digest",) not in seeded.sections


def test_seedable_cannot_be_turned_on(session: Session) -> None:
    with pytest.raises(TypeError):
        WorkspaceDigestSection(session=session, seedable=True)  # type: ignore[call-arg]


@pytest.mark.parametrize("value", [None, "session", object()])
def test_construction_requires_a_session(value: object) -> None:
    with pytest.raises(TypeError, match="Session"):
        WorkspaceDigestSection(session=value)  # type: ignore[arg-type]


def test_empty_placeholder_is_refused(session: Session) -> None:
    with pytest.raises(PromptValidationError, match="placeholder"):
        WorkspaceDigestSection(session=session, placeholder="  ")


@pytest.mark.parametrize("changes", [{}, {"session": None}, {"session": "not a session"}])
def test_clone_requires_a_session(session: Session, changes: dict[str, object]) -> None:
    section = WorkspaceDigestSection(session=session)
    with pytest.raises(TypeError, match="requires session"):
        section.clone(**changes)


def test_clone_keeps_title_key_and_placeholder_and_reads_the_new_session() -> None:
    original = WorkspaceDigestSection(
        session=Session(), title="Repository", key="repo-digest", placeholder="Nothing yet."
    )
    other = Session()
    set_workspace_digest(other, "repo-digest", "Digest in the other session.")

    clone = original.clone(session=other)

    assert (clone.title, clone.key, clone.placeholder) == (
        "Repository",
        "repo-digest",
        "Nothing yet.",
    )
    assert clone.session is other
    assert clone.content_hash == original.content_hash
    assert resolve_workspace_digest(clone).body == "Digest in the other session."
    assert resolve_workspace_digest(original).origin == "placeholder"


def test_resolution_reports_each_origin_in_order(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    prompt = digest_prompt(section)
    origins = [resolve_workspace_digest(prompt, overrides_store=store).origin]
    share(store, section, "Shared.")
    origins.append(resolve_workspace_digest(prompt, overrides_store=store).origin)
    store.set_section_override(prompt, path="workspace-digest", body="Own.")
    origins.append(resolve_workspace_digest(prompt, overrides_store=store).origin)
    set_workspace_digest(session, section.key, "Session.")
    origins.append(resolve_workspace_digest(prompt, overrides_store=store).origin)

    assert origins == ["placeholder", "shared-override", "override", "session"]


def test_resolution_reports_override_time_and_author(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    share(store, section, "Shared.")

    resolution = resolve_workspace_digest(section, overrides_store=store)

    assert resolution.origin == "shared-override"
    assert resolution.author == "optimizer:test-model"
    assert resolution.updated_at is not None
    assert resolution.is_stale is None


def test_resolution_of_a_bare_section_ignores_prompt_overrides(
    session: Session, store: LocalPromptOverridesStore
) -> None:
    section = WorkspaceDigestSection(session=session)
    store.set_section_override(digest_prompt(section), path="workspace-digest", body="Own.")

    assert resolve_workspace_digest(section, overrides_store=store).origin == "placeholder"


def test_resolution_uses_the_given_session(session: Session) -> None:
    section = WorkspaceDigestSection(session=session)
    loaded = Session()
    set_workspace_digest(loaded, section.key, "From the loaded session.")

    resolution = resolve_workspace_digest(section, session=loaded)

    assert (resolution.origin, resolution.body) == ("session", "From the loaded session.")


def test_resolving_a_prompt_without_a_digest_section_is_refused() -> None:
    prompt: Prompt[None] = Prompt(
        ns="tests", key="plain", sections=(MarkdownSection(title="T", key="t", template="x"),)
    )
    with pytest.raises(PromptValidationError, match="no WorkspaceDigestSection"):
        resolve_workspace_digest(prompt)


def test_resolution_logs_nothing(session: Session) -> None:
    with capture_logs() as logs:
        resolve_workspace_digest(WorkspaceDigestSection(session=session))
    assert logs == []


def test_custom_key_reads_its_own_digest(session: Session) -> None:
    section = WorkspaceDigestSection(session=session, key="docs-digest")
    set_workspace_digest(session, "workspace-digest", "Not this one.")
    set_workspace_digest(session, "docs-digest", "Docs digest.")

    assert digest_prompt(section).render().text.endswith("Docs digest.")
