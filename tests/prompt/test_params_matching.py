"""Params matching: objects are matched to sections by type, with a default chain, and
`enabled` decides whether a section (and its whole subtree) is rendered.

Default chain: the object passed to `render` > the section's `default_params` > `params_type()`
when it constructs without arguments > `PromptRenderError` naming the section path and type.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from promptkit import (
    MarkdownSection,
    Prompt,
    PromptRenderError,
    PromptValidationError,
    Section,
    TextSection,
    Tool,
    ToolContext,
    ToolResult,
)


@dataclass(frozen=True)
class Audience:
    who: str = "everyone"


class Style(BaseModel):
    tone: str = "plain"


@dataclass(frozen=True)
class Required:
    value: str


class RequiredModel(BaseModel):
    value: str


@dataclass(frozen=True)
class Switch:
    on: bool = True


@dataclass(frozen=True)
class Unused:
    anything: int = 0


def _prompt(*sections: Section) -> Prompt[None]:
    return Prompt(ns="tests", key="params", sections=sections)


def _body(prompt: Prompt[None], *params: Any) -> str:
    return prompt.render(*params).text.split("\n\n", 1)[1]


def _who_section(**options: Any) -> MarkdownSection:
    return MarkdownSection(
        title="Who", key="who", template="For {{ who }}.", params_type=Audience, **options
    )


def test_passed_params_win_over_default_params() -> None:
    prompt = _prompt(_who_section(default_params=Audience(who="defaults")))

    assert _body(prompt, Audience(who="passed")) == "For passed."


def test_default_params_win_over_the_no_argument_constructor() -> None:
    prompt = _prompt(_who_section(default_params=Audience(who="defaults")))

    assert _body(prompt) == "For defaults."


def test_no_argument_constructor_is_used_when_nothing_else_is_given() -> None:
    assert _body(_prompt(_who_section())) == "For everyone."


def test_pydantic_params_follow_the_same_chain() -> None:
    section = MarkdownSection(
        title="Style", key="style", template="Tone: {{ tone }}.", params_type=Style
    )
    with_default = section.clone(default_params=Style(tone="warm"))

    assert _body(_prompt(section)) == "Tone: plain."
    assert _body(_prompt(with_default)) == "Tone: warm."
    assert _body(_prompt(with_default), Style(tone="dry")) == "Tone: dry."


@pytest.mark.parametrize("params_type", [Required, RequiredModel])
def test_missing_params_without_any_default_raise_naming_the_section_path_and_type(
    params_type: type[Any],
) -> None:
    child = MarkdownSection(
        title="Needs", key="needs", template="{{ value }}", params_type=params_type
    )
    prompt = _prompt(TextSection(title="Parent", key="parent", text="Text.", children=(child,)))

    with pytest.raises(PromptRenderError) as raised:
        prompt.render()

    message = str(raised.value)
    assert "parent/needs" in message
    assert params_type.__name__ in message


def test_params_without_a_default_are_only_needed_when_rendered() -> None:
    prompt = _prompt(
        MarkdownSection(title="Needs", key="needs", template="{{ value }}", params_type=Required)
    )

    assert _body(prompt, Required(value="given")) == "given"


def test_one_params_object_feeds_every_section_of_its_type() -> None:
    prompt = _prompt(
        MarkdownSection(title="A", key="a", template="A {{ who }}", params_type=Audience),
        MarkdownSection(title="B", key="b", template="B {{ who }}", params_type=Audience),
    )

    assert prompt.render(Audience(who="x")).text == "## 1. A\n\nA x\n\n## 2. B\n\nB x"


def test_params_order_does_not_matter() -> None:
    prompt = _prompt(
        _who_section(),
        MarkdownSection(title="Style", key="style", template="{{ tone }}", params_type=Style),
    )

    first = prompt.render(Audience(who="x"), Style(tone="y")).text
    second = prompt.render(Style(tone="y"), Audience(who="x")).text

    assert first == second


def test_two_params_objects_of_one_type_raise_naming_the_type() -> None:
    prompt = _prompt(_who_section())

    with pytest.raises(PromptRenderError, match="Audience"):
        prompt.render(Audience(who="a"), Audience(who="b"))


def test_params_of_a_type_no_section_uses_raise_naming_the_type() -> None:
    prompt = _prompt(_who_section())

    with pytest.raises(PromptRenderError, match="Unused"):
        prompt.render(Unused())


def test_a_subclass_instance_does_not_match_its_parents_params_type() -> None:
    @dataclass(frozen=True)
    class LoudAudience(Audience):
        volume: int = 11

    prompt = _prompt(_who_section())

    with pytest.raises(PromptRenderError, match="LoudAudience"):
        prompt.render(LoudAudience(who="x"))


def test_default_params_of_the_wrong_type_are_refused_when_the_section_is_built() -> None:
    with pytest.raises(PromptValidationError, match=r"'who'.*Style"):
        _who_section(default_params=Style())


def test_params_type_that_is_neither_model_nor_dataclass_is_refused() -> None:
    with pytest.raises(PromptValidationError, match="'who'"):
        MarkdownSection(title="Who", key="who", template="x", params_type=dict)


# -- enabled ----------------------------------------------------------------------------------


def _switched(title: str, key: str, *children: Section) -> MarkdownSection:
    return MarkdownSection(
        title=title,
        key=key,
        template=f"{title} body.",
        params_type=Switch,
        enabled=lambda params: params.on,
        children=children,
    )


def _text(title: str, key: str, *children: Section) -> TextSection:
    return TextSection(title=title, key=key, text=f"{title} body.", children=children)


def test_disabled_section_skips_itself_and_its_children() -> None:
    prompt = _prompt(
        _text("First", "first"),
        _switched("Optional", "optional", _text("Nested", "nested", _text("Deep", "deep"))),
        _text("Last", "last"),
    )

    text = prompt.render(Switch(on=False)).text

    assert text == "## 1. First\n\nFirst body.\n\n## 2. Last\n\nLast body."


def test_enabled_section_renders_with_its_children() -> None:
    prompt = _prompt(
        _switched("Optional", "optional", _text("Nested", "nested")), _text("Last", "last")
    )

    text = prompt.render(Switch(on=True)).text

    assert text == (
        "## 1. Optional\n\nOptional body.\n\n### 1.1. Nested\n\nNested body.\n\n"
        "## 2. Last\n\nLast body."
    )


def test_numbering_continues_over_a_disabled_child() -> None:
    prompt = _prompt(
        _text(
            "Parent",
            "parent",
            _switched("Skipped", "skipped", _text("Gone", "gone")),
            _text("Kept", "kept", _text("Grandchild", "grandchild")),
        ),
        _text("Next", "next"),
    )

    headings = [
        line for line in prompt.render(Switch(on=False)).text.splitlines() if line[:1] == "#"
    ]

    assert headings == [
        "## 1. Parent",
        "### 1.1. Kept",
        "#### 1.1.1. Grandchild",
        "## 2. Next",
    ]


def test_enabled_receives_the_sections_params_after_the_default_chain() -> None:
    seen: list[Any] = []

    def record(params: Any) -> bool:
        seen.append(params)
        return True

    prompt = _prompt(
        _who_section(enabled=record, default_params=Audience(who="defaulted")),
        TextSection(title="Plain", key="plain", text="x", enabled=record),
    )

    prompt.render()
    prompt.render(Audience(who="passed"))

    assert seen == [Audience(who="defaulted"), None, Audience(who="passed"), None]


def test_tools_of_a_disabled_section_are_not_offered() -> None:
    def handler(params: Unused, context: ToolContext) -> ToolResult:
        return ToolResult(message="ok")

    tool = Tool(name="probe", description="Probe.", params_type=Unused, handler=handler)
    section = MarkdownSection(
        title="Tools",
        key="tools",
        template="Use the probe.",
        params_type=Switch,
        enabled=lambda params: params.on,
        tools=(tool,),
    )
    prompt = _prompt(section)

    assert prompt.render(Switch(on=True)).tools == (tool,)
    assert prompt.render(Switch(on=False)).tools == ()
