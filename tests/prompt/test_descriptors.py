"""Prompt introspection: descriptors (paths, content hashes, tool contract hashes), clone and
find_section.
"""

import hashlib
from dataclasses import dataclass

import pytest

from promptkit import (
    MarkdownSection,
    Prompt,
    PromptValidationError,
    Section,
    TextSection,
    Tool,
    ToolContext,
    ToolResult,
)
from promptkit.prompt import PromptDescriptor, SectionDescriptor, ToolDescriptor, content_hash


@dataclass(frozen=True)
class Topic:
    topic: str = "digests"


@dataclass(frozen=True)
class Lookup:
    term: str


def lookup(params: Lookup, context: ToolContext) -> ToolResult:
    return ToolResult(message=params.term)


LOOKUP = Tool(name="lookup", description="Look a term up.", params_type=Lookup, handler=lookup)
TASK_TEMPLATE = "Explain {{ topic }}.\n"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _prompt() -> Prompt[None]:
    return Prompt(
        ns="tests/intro",
        key="descriptors",
        sections=(
            TextSection(
                title="Role",
                key="role",
                text="You are brief.",
                children=(
                    MarkdownSection(
                        title="Task",
                        key="task",
                        template=TASK_TEMPLATE,
                        params_type=Topic,
                        tools=(LOOKUP,),
                    ),
                ),
            ),
            TextSection(title="Rules", key="rules", text="No guessing.", accepts_overrides=False),
        ),
    )


def test_descriptor_lists_every_section_path_with_its_content_hash_in_render_order() -> None:
    assert _prompt().descriptor == PromptDescriptor(
        ns="tests/intro",
        key="descriptors",
        sections=(
            SectionDescriptor(("role",), _sha256("You are brief."), True),
            SectionDescriptor(("role", "task"), _sha256(TASK_TEMPLATE), True),
            SectionDescriptor(("rules",), _sha256("No guessing."), False),
        ),
        tools=(ToolDescriptor("lookup", LOOKUP.contract_hash),),
    )


def test_content_hash_is_sha256_of_the_original_body_template_not_the_rendered_body() -> None:
    task = _prompt().section_at(("role", "task"))
    assert task is not None

    assert task.original_body_template() == TASK_TEMPLATE
    assert task.content_hash == _sha256(TASK_TEMPLATE) == content_hash(TASK_TEMPLATE)


def test_descriptor_does_not_depend_on_params_or_enabled() -> None:
    prompt = _prompt()
    hidden: Prompt[None] = Prompt(
        ns="tests/intro",
        key="descriptors",
        sections=tuple(section.clone(enabled=lambda params: False) for section in prompt.sections),
    )

    assert prompt.render(Topic(topic="a")).descriptor == prompt.descriptor
    assert prompt.render(Topic(topic="b")).descriptor == prompt.descriptor
    assert hidden.render().descriptor == prompt.descriptor


def test_descriptor_looks_up_sections_and_tools() -> None:
    descriptor = _prompt().descriptor

    task = descriptor.section(("role", "task"))
    assert task is not None
    assert task.content_hash == _sha256(TASK_TEMPLATE)
    assert descriptor.section(("task",)) is None
    assert descriptor.tool("lookup") == ToolDescriptor("lookup", LOOKUP.contract_hash)
    assert descriptor.tool("missing") is None


def test_clone_returns_a_changed_copy_and_leaves_the_original_alone() -> None:
    original = TextSection(title="Role", key="role", text="Old text.")

    copy = original.clone(text="New text.", key="role-v2")

    assert (copy.key, copy.title, copy.text) == ("role-v2", "Role", "New text.")
    assert (original.key, original.text) == ("role", "Old text.")
    assert copy.content_hash == _sha256("New text.")
    assert original.content_hash == _sha256("Old text.")


def test_clone_of_a_markdown_section_recompiles_its_new_template() -> None:
    original = MarkdownSection(
        title="Task", key="task", template="A {{ topic }}", params_type=Topic
    )

    copy = original.clone(template="B {{ topic }}!")
    prompt: Prompt[None] = Prompt(ns="tests", key="clone", sections=(original, copy.clone(key="b")))

    assert prompt.render(Topic(topic="x")).text == "## 1. Task\n\nA x\n\n## 2. Task\n\nB x!"
    assert copy.content_hash == _sha256("B {{ topic }}!")


def test_clone_validates_its_changes() -> None:
    section = TextSection(title="Role", key="role", text="x")

    with pytest.raises(PromptValidationError, match="'Bad Key'"):
        section.clone(key="Bad Key")


def test_clone_with_a_template_using_unknown_names_is_refused_when_the_prompt_is_built() -> None:
    copy = MarkdownSection(title="Task", key="task", template="{{ topic }}", params_type=Topic)
    broken = copy.clone(template="{{ subject }}")

    with pytest.raises(PromptValidationError, match="subject"):
        Prompt(ns="tests", key="clone", sections=(broken,))


def test_find_section_returns_the_first_section_of_a_type_in_render_order() -> None:
    prompt = _prompt()

    found = prompt.find_section(MarkdownSection)

    assert found is prompt.section_at(("role", "task"))
    assert prompt.find_section(TextSection) is prompt.sections[0]


def test_find_section_returns_none_when_no_section_has_the_type() -> None:
    class OtherSection(TextSection):
        pass

    assert _prompt().find_section(OtherSection) is None


def test_find_section_skips_the_response_format_section() -> None:
    @dataclass(frozen=True)
    class Answer:
        text: str

    prompt: Prompt[Answer] = Prompt(ns="tests", key="find", output_type=Answer)

    assert "Response Format" in prompt.render().text
    assert prompt.find_section(Section) is None
