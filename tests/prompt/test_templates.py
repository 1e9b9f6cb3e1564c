"""MarkdownSection templates: names checked at build time, errors located, sections isolated.

Sections of one prompt are rendered through one combined template; these tests pin that each
section still behaves as if it were rendered on its own.
"""

import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from jinja2 import TemplateSyntaxError, meta
from pydantic import BaseModel, computed_field

from promptkit import (
    MarkdownSection,
    Prompt,
    PromptRenderError,
    PromptValidationError,
    RenderContext,
    TextSection,
)
from promptkit.prompt._markdown import plain_substitutions, template_environment


@dataclass(frozen=True)
class Topic:
    topic: str = "digests"


@dataclass(frozen=True)
class OtherTopic:
    topic: str = "sessions"


@dataclass(frozen=True)
class Ratio:
    total: int = 10
    count: int = 0


@dataclass(frozen=True)
class Holder:
    item: object = None


@dataclass(frozen=True)
class Pair:
    first: str = ""
    second: str = ""


class Reader(BaseModel):
    name: str = "Ada"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shout(self) -> str:
        return self.name.upper()


def _prompt(*sections: MarkdownSection | TextSection) -> Prompt[None]:
    return Prompt(ns="tests", key="templates", sections=sections)


def test_unknown_template_name_is_refused_when_the_prompt_is_built_naming_the_path() -> None:
    child = MarkdownSection(
        title="Inner",
        key="inner",
        template="About {{ topic }} for {{ audience }}.",
        params_type=Topic,
    )
    parent = TextSection(title="Outer", key="outer", text="Intro.", children=(child,))

    with pytest.raises(PromptValidationError) as raised:
        _prompt(parent)

    message = str(raised.value)
    assert "outer/inner" in message
    assert "audience" in message
    assert "Topic" in message


def test_template_names_without_a_params_type_are_refused_when_the_prompt_is_built() -> None:
    section = MarkdownSection(title="Task", key="task", template="Explain {{ topic }}.")

    with pytest.raises(PromptValidationError, match=r"task.*topic"):
        _prompt(section)


def test_template_may_read_properties_and_computed_fields_of_its_params() -> None:
    section = MarkdownSection(
        title="Greet", key="greet", template="Hi {{ name }} / {{ shout }}", params_type=Reader
    )

    assert _prompt(section).render(Reader(name="Grace")).text.endswith("Hi Grace / GRACE")


def test_names_declared_inside_the_template_need_no_params_field() -> None:
    template = (
        "{% set greeting = 'Hello' %}{{ greeting }} {{ topic }}\n"
        "{% for word in topic.split() %}- {{ word }} ({{ loop.index }})\n{% endfor %}"
    )
    section = MarkdownSection(title="Task", key="task", template=template, params_type=Topic)

    text = _prompt(section).render(Topic(topic="workspace digests")).text

    assert text == "## 1. Task\n\nHello workspace digests\n- workspace (1)\n- digests (2)"


def test_template_syntax_error_names_the_section_and_line() -> None:
    template = "First line is fine.\nSecond too.\n{% if topic %}never closed"

    with pytest.raises(PromptValidationError) as raised:
        MarkdownSection(title="Task", key="broken-task", template=template, params_type=Topic)

    message = str(raised.value)
    assert "broken-task" in message
    assert "line 3" in message


def test_missing_attribute_at_render_raises_render_error_naming_the_section_path() -> None:
    failing = MarkdownSection(
        title="Item", key="item", template="Name: {{ item.name }}", params_type=Holder
    )
    prompt = _prompt(
        MarkdownSection(title="Before", key="before", template="{{ topic }}", params_type=Topic),
        TextSection(title="Parent", key="parent", text="Parent text.", children=(failing,)),
    )

    with pytest.raises(PromptRenderError) as raised:
        prompt.render(Holder(item=object()))

    message = str(raised.value)
    assert "parent/item" in message
    assert "name" in message


def test_arithmetic_error_at_render_raises_render_error_naming_the_section_path() -> None:
    failing = MarkdownSection(
        title="Share", key="share", template="Each gets {{ total / count }}.", params_type=Ratio
    )
    prompt = _prompt(TextSection(title="Parent", key="parent", text="Text.", children=(failing,)))

    with pytest.raises(PromptRenderError, match="parent/share"):
        prompt.render(Ratio(total=10, count=0))


def test_render_error_in_one_section_does_not_blame_an_earlier_section() -> None:
    prompt = _prompt(
        MarkdownSection(title="Fine", key="fine", template="{{ item }}", params_type=Holder),
        MarkdownSection(title="Bad", key="bad", template="{{ topic.missing }}", params_type=Topic),
    )

    with pytest.raises(PromptRenderError) as raised:
        prompt.render(Holder(item="ok"))

    assert "section bad" in str(raised.value)
    assert "section fine" not in str(raised.value)


def test_sections_reading_one_name_from_different_params_types_get_their_own_values() -> None:
    prompt = _prompt(
        MarkdownSection(title="One", key="one", template="Topic {{ topic }}.", params_type=Topic),
        MarkdownSection(
            title="Two", key="two", template="Topic {{ topic }}.", params_type=OtherTopic
        ),
    )

    text = prompt.render(Topic(topic="alpha"), OtherTopic(topic="beta")).text

    assert text == "## 1. One\n\nTopic alpha.\n\n## 2. Two\n\nTopic beta."


@pytest.mark.parametrize(
    "template",
    [
        "{% set topic = 'leaked' %}{% set extra = 'leaked' %}One: {{ topic }}",
        "One: {% set topic = 'leaked' %}{% set extra = 'leaked' %}{{ topic }} end",
    ],
    ids=["template-edges", "literal-edges"],
)
def test_set_in_one_section_does_not_leak_into_the_next(template: str) -> None:
    prompt = _prompt(
        MarkdownSection(title="One", key="one", template=template),
        MarkdownSection(title="Two", key="two", template="Two: {{ topic }}", params_type=Topic),
    )

    text = prompt.render(Topic(topic="own value")).text

    assert "One: leaked" in text
    assert text.endswith("## 2. Two\n\nTwo: own value")


def test_set_of_any_name_in_one_section_cannot_replace_a_later_sections_value() -> None:
    # The combined template renames each section's params; a section that happens to assign a
    # name shaped like a renamed one must still not reach into its neighbour.
    first = MarkdownSection(
        title="One",
        key="one",
        template="One {% set pk1__topic = 'hijacked' %}{% set pk1_topic = 'hijacked' %}end.",
    )
    second = MarkdownSection(title="Two", key="two", template="Two: {{ topic }}", params_type=Topic)

    text = _prompt(first, second).render(Topic(topic="own value")).text

    assert text == "## 1. One\n\nOne end.\n\n## 2. Two\n\nTwo: own value"


def test_macros_with_one_name_in_two_sections_stay_separate() -> None:
    prompt = _prompt(
        MarkdownSection(
            title="One", key="one", template="{% macro tag() %}first{% endmacro %}{{ tag() }}"
        ),
        MarkdownSection(
            title="Two", key="two", template="{% macro tag() %}second{% endmacro %}{{ tag() }}"
        ),
    )

    assert prompt.render().text == "## 1. One\n\nfirst\n\n## 2. Two\n\nsecond"


@pytest.mark.parametrize(
    ("template", "tag"),
    [
        ("{% block body %}first{% endblock %}", "{% block %}"),
        ("{% extends 'base.md' %}", "{% extends %}"),
        ("{% include 'part.md' %}", "{% include %}"),
        ("{% import 'macros.md' as m %}", "{% import %}"),
        ("{% from 'macros.md' import m %}", "{% from ... import %}"),
    ],
)
def test_loader_and_inheritance_tags_are_refused_when_the_section_is_built(
    template: str, tag: str
) -> None:
    with pytest.raises(PromptValidationError, match=re.escape(tag)):
        MarkdownSection(title="One", key="one", template=template)


def test_template_sandbox_refuses_unsafe_attribute_access_with_a_render_error() -> None:
    section = MarkdownSection(
        title="Probe", key="probe", template="{{ topic.__class__.__mro__ }}", params_type=Topic
    )

    with pytest.raises(PromptRenderError, match="probe"):
        _prompt(section).render()


_JINJA_LOOKALIKES = st.sampled_from(
    [
        "{{ second }}",
        "{{ first }}",
        "{% if true %}x{% endif %}",
        "{#",
        "#}",
        "{%",
        "%}",
        "{{",
        "}}",
        "{% raw %}",
        "{{ 7 * 7 }}",
        "{{ pk0__second }}",
        "\\n",
        "ünïcødé ✓ 字",
    ]
)
_VALUES = st.lists(st.one_of(st.text(max_size=20), _JINJA_LOOKALIKES), max_size=5).map("".join)


def _without_trailing_line_whitespace(value: str) -> str:
    # A rendered prompt never has trailing spaces on a line, values included.
    return re.sub(r"[ \t]+(?=\n)", "", value)


@pytest.mark.parametrize("conditional", [False, True], ids=["static-shape", "enabled-shape"])
@settings(max_examples=60, deadline=None)
@given(first=_VALUES, second=_VALUES)
def test_params_values_appear_verbatim_and_are_never_evaluated(
    conditional: bool, first: str, second: str
) -> None:
    section = MarkdownSection(
        title="Values",
        key="values",
        template="A<<{{ first }}>>\nB<<{{ second }}>>",
        params_type=Pair,
        enabled=(lambda params: True) if conditional else None,
    )

    text = _prompt(section).render(Pair(first=first, second=second)).text

    assert f"A<<{_without_trailing_line_whitespace(first)}>>\nB<<" in text
    assert text.endswith(f"B<<{_without_trailing_line_whitespace(second)}>>")


@dataclass(frozen=True, kw_only=True, eq=False)
class ShoutingSection(MarkdownSection):
    """A MarkdownSection subclass that post-processes its own rendered body."""

    def render_body(self, params: Any, context: RenderContext) -> str:
        return super().render_body(params, context).upper()


def test_markdown_subclass_overriding_render_body_renders_through_its_override() -> None:
    section = ShoutingSection(
        title="Loud", key="loud", template="about {{ topic }}", params_type=Topic
    )
    alone = section.render_body(Topic(topic="digests"), RenderContext("tests", "t", ("loud",)))

    text = _prompt(section).render(Topic(topic="digests")).text

    assert alone == "ABOUT DIGESTS"
    assert text == "## 1. Loud\n\nABOUT DIGESTS"


# Templates made of the characters jinja's syntax is built of, names jinja reads in special ways
# among them, so generated templates hit both answers of `plain_substitutions`.
_TEMPLATE_PIECES = st.sampled_from(
    [
        *("{", "}", "{{", "}}", "{%", "%}", "{#", "#}", "-", " ", "\n", "|", ".", "(", ")"),
        *("x", "topic", "total", "count", "true", "None", "range", "loop", "not", "1", "_a", "é"),
    ]
)
_TEMPLATES = st.lists(_TEMPLATE_PIECES, max_size=12).map("".join)


def _jinja_names(template: str) -> frozenset[str] | None:
    """What jinja2 itself finds: the names read from the params, or None for a template that
    does not parse and compile."""
    environment = template_environment()
    try:
        ast = environment.parse(template)
        environment.from_string(template)
    except TemplateSyntaxError:
        return None
    names = meta.find_undeclared_variables(ast) - set(environment.globals)
    return frozenset(names - {"loop", "caller", "varargs", "kwargs", "self", "super"})


@settings(max_examples=500)
@given(template=_TEMPLATES)
def test_a_template_read_without_jinja2_reads_as_jinja2_reads_it(template: str) -> None:
    plain = plain_substitutions(template)

    assert plain is None or plain == _jinja_names(template)


@pytest.mark.parametrize(
    ("template", "names"),
    [
        ("No names at all, {braces} and }} alone.", frozenset()),
        ("About {{ topic }}: {{topic}} of {{\n total }}.", frozenset({"topic", "total"})),
        ("{{ topic | upper }}", None),
        ("{% if topic %}{{ topic }}{% endif %}", None),
        ("{# note #}{{ topic }}", None),
        ("{{ true }}", None),
        ("{{{ topic }}", None),
    ],
)
def test_plain_substitutions_reads_text_and_names_only(
    template: str, names: frozenset[str] | None
) -> None:
    assert plain_substitutions(template) == names


def test_a_section_of_text_and_substitutions_is_built_without_importing_jinja2() -> None:
    statement = (
        "from dataclasses import dataclass\n"
        "from promptkit import MarkdownSection, Prompt\n"
        "@dataclass(frozen=True)\nclass Topic:\n    topic: str = 'digests'\n"
        "section = MarkdownSection(title='T', key='t', template='On {{ topic }}.',"
        " params_type=Topic)\n"
        "Prompt(ns='tests', key='plain', sections=(section,))\n"
        "import sys\nprint('jinja2' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", statement], capture_output=True, text=True, timeout=60
    )

    assert completed.stdout.strip() == "False", completed.stderr


def test_a_section_of_text_and_substitutions_renders_as_jinja2_renders_it() -> None:
    section = MarkdownSection(
        title="T", key="t", template="On {{ topic }}, {{topic}}.", params_type=Topic
    )
    prompt = Prompt(ns="tests", key="plain", sections=(section,))

    assert prompt.render(Topic("maps")).text == "## 1. T\n\nOn maps, maps."
