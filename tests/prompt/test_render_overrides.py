"""Overrides applied by `Prompt.render`, through a hand-written `OverridesLookup`.

A fresh entry (its hash matches the code) replaces the section body exactly as stored and is
never evaluated as a template; a stale entry is not applied and a warning names the path and
both hashes.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from structlog.testing import capture_logs

from promptkit import MarkdownSection, Prompt, TextSection, Tool, ToolContext, ToolResult
from promptkit.prompt import (
    OverrideAuthor,
    PromptDescriptor,
    PromptOverride,
    SectionOverride,
    SectionPath,
    ToolOverride,
)

NS, KEY = "tests/overrides", "reviewer"
AUTHOR = OverrideAuthor(kind="operator")
WHEN = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Task:
    topic: str = "digests"


@dataclass(frozen=True)
class Query:
    text: str


def search(params: Query, context: ToolContext) -> ToolResult:
    return ToolResult(message=params.text)


SEARCH = Tool(name="search", description="Search the notes.", params_type=Query, handler=search)


@dataclass
class InMemoryOverrides:
    """A fake for the OverridesLookup seam: overrides held in a dict by (ns, key, tag)."""

    entries: dict[tuple[str, str, str], PromptOverride] = field(default_factory=dict)
    requests: list[tuple[str, str, str]] = field(default_factory=list)

    def put(
        self,
        *,
        tag: str = "latest",
        sections: Mapping[SectionPath, SectionOverride] | None = None,
        tools: Mapping[str, ToolOverride] | None = None,
    ) -> None:
        self.entries[(NS, KEY, tag)] = PromptOverride(
            ns=NS,
            prompt_key=KEY,
            tag=tag,
            sections=dict(sections or {}),
            tools=dict(tools or {}),
            location=f"memory://{NS}/{KEY}/{tag}",
        )

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        self.requests.append((descriptor.ns, descriptor.key, tag))
        return self.entries.get((descriptor.ns, descriptor.key, tag))


def _prompt() -> Prompt[None]:
    return Prompt(
        ns=NS,
        key=KEY,
        sections=(
            TextSection(title="Role", key="role", text="You review code."),
            TextSection(
                title="Guide",
                key="guide",
                text="Read the diff.",
                children=(
                    MarkdownSection(
                        title="Task",
                        key="task",
                        template="Review {{ topic }}.",
                        params_type=Task,
                        tools=(SEARCH,),
                    ),
                ),
            ),
            TextSection(title="Rules", key="rules", text="Be kind.", accepts_overrides=False),
        ),
    )


def _entry(prompt: Prompt[Any], path: SectionPath, body: str) -> SectionOverride:
    descriptor = prompt.descriptor.section(path)
    assert descriptor is not None
    return SectionOverride(descriptor.content_hash, body, WHEN, AUTHOR)


def test_fresh_override_replaces_the_body_exactly_as_stored() -> None:
    prompt = _prompt()
    body = "Review {{ topic }} and {% if strict %}be strict{% endif %}.\n\n- {# not a comment #}"
    store = InMemoryOverrides()
    store.put(sections={("guide", "task"): _entry(prompt, ("guide", "task"), body)})

    rendered = prompt.render(Task(topic="the parser"), overrides_store=store)

    assert f"### 2.1. Task\n\n{body}\n\n## 3. Rules" in rendered.text
    assert "the parser" not in rendered.text
    assert rendered.applied_overrides == (("guide", "task"),)


def test_overrides_are_looked_up_for_the_prompt_and_tag() -> None:
    prompt = _prompt()
    store = InMemoryOverrides()
    store.put(tag="canary", sections={("role",): _entry(prompt, ("role",), "Canary role.")})

    latest = prompt.render(overrides_store=store)
    canary = prompt.render(overrides_store=store, tag="canary")

    assert "Canary role." not in latest.text
    assert "## 1. Role\n\nCanary role.\n\n" in canary.text
    assert store.requests == [(NS, KEY, "latest"), (NS, KEY, "canary")]


def test_stale_override_is_not_applied_and_warns_naming_the_path_and_both_hashes() -> None:
    prompt = _prompt()
    stale_hash = "0" * 64
    store = InMemoryOverrides()
    store.put(sections={("guide", "task"): SectionOverride(stale_hash, "Old body.", WHEN, AUTHOR)})
    task = prompt.section_at(("guide", "task"))
    assert task is not None

    with capture_logs() as logs:
        rendered = prompt.render(Task(topic="the parser"), overrides_store=store)

    assert "### 2.1. Task\n\nReview the parser." in rendered.text
    assert "Old body." not in rendered.text
    assert rendered.applied_overrides == ()
    stale = [entry for entry in logs if entry["event"] == "override_stale"]
    assert len(stale) == 1
    assert stale[0]["log_level"] == "warning"
    assert stale[0]["path"] == "guide/task"
    assert stale[0]["override_hash"] == stale_hash
    assert stale[0]["code_hash"] == task.content_hash


def test_override_for_a_section_refusing_overrides_is_not_applied() -> None:
    prompt = _prompt()
    store = InMemoryOverrides()
    store.put(sections={("rules",): _entry(prompt, ("rules",), "Anything goes.")})

    rendered = prompt.render(overrides_store=store)

    assert rendered.text.endswith("## 3. Rules\n\nBe kind.")
    assert rendered.applied_overrides == ()


def test_override_for_a_path_the_prompt_lacks_is_ignored() -> None:
    prompt = _prompt()
    entry = _entry(prompt, ("role",), "Ghost.")
    store = InMemoryOverrides()
    store.put(sections={("gone",): entry, ("guide", "gone"): entry})

    assert prompt.render(overrides_store=store).text == prompt.render().text


def test_override_of_a_disabled_section_does_not_bring_it_back() -> None:
    prompt: Prompt[None] = Prompt(
        ns=NS,
        key=KEY,
        sections=(
            TextSection(title="Hidden", key="hidden", text="x", enabled=lambda params: False),
        ),
    )
    store = InMemoryOverrides()
    store.put(sections={("hidden",): _entry(prompt, ("hidden",), "Back again.")})

    assert prompt.render(overrides_store=store).text == ""


def test_fresh_tool_override_replaces_the_description() -> None:
    prompt = _prompt()
    store = InMemoryOverrides()
    store.put(
        tools={
            "search": ToolOverride(
                expected_contract_hash=SEARCH.contract_hash,
                description="Search the review notes by keyword.",
                param_descriptions={"text": "Keywords."},
            )
        }
    )

    (tool,) = prompt.render(overrides_store=store).tools

    assert tool.name == "search"
    assert tool.description == "Search the review notes by keyword."
    assert tool.parameters_schema["properties"]["text"]["description"] == "Keywords."
    assert SEARCH.description == "Search the notes."


def test_stale_tool_override_is_not_applied_and_warns() -> None:
    prompt = _prompt()
    store = InMemoryOverrides()
    store.put(tools={"search": ToolOverride(expected_contract_hash="0" * 64, description="New.")})

    with capture_logs() as logs:
        (tool,) = prompt.render(overrides_store=store).tools

    assert tool.description == "Search the notes."
    stale = [entry for entry in logs if entry["event"] == "tool_override_stale"]
    assert [(entry["tool"], entry["code_hash"]) for entry in stale] == [
        ("search", SEARCH.contract_hash)
    ]


def test_tool_override_naming_an_unknown_parameter_applies_the_rest_and_warns() -> None:
    prompt = _prompt()
    store = InMemoryOverrides()
    store.put(
        tools={
            "search": ToolOverride(
                expected_contract_hash=SEARCH.contract_hash,
                description="Search by keyword.",
                param_descriptions={"text": "Keywords.", "nonexistent": "Ignored."},
            )
        }
    )

    with capture_logs() as logs:
        (tool,) = prompt.render(overrides_store=store).tools

    assert tool.description == "Search by keyword."
    assert tool.parameters_schema["properties"]["text"]["description"] == "Keywords."
    warnings = [entry for entry in logs if entry["event"] == "tool_override_unknown_parameters"]
    assert [entry["parameters"] for entry in warnings] == [["nonexistent"]]


def test_render_without_a_store_looks_nothing_up() -> None:
    prompt = _prompt()
    store = InMemoryOverrides()
    store.put(sections={("role",): _entry(prompt, ("role",), "Overridden.")})

    assert "Overridden." not in prompt.render().text
    assert store.requests == []
