"""Differential test of the renderer: the combined one-template fast path against the slow path.

The slow path is written here from the documented rules alone: render each included section on
its own with `section.render_body` (or take its override body as stored), drop leading blank
lines and trailing whitespace from each body, put `## 1. Title`-style headings in front, join
with one blank line, and strip trailing spaces from every line. Any difference is a bug in the
combined template (renaming, whitespace edges, shape caching) rather than in a section.
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings, strategies as st
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, RenderContext, Section, TextSection
from promptkit.prompt import (
    OverrideAuthor,
    PromptDescriptor,
    PromptOverride,
    SectionOverride,
    SectionPath,
)

NS, KEY = "tests", "differential"


@dataclass(frozen=True)
class DataParams:
    a: str = ""
    b: str = ""
    flag: bool = False
    items: tuple[str, ...] = ()


class ModelParams(BaseModel):
    a: str = ""
    b: str = ""
    flag: bool = False
    items: list[str] = []


@dataclass
class FixedOverrides:
    """A hand-written OverridesLookup that always answers with one PromptOverride."""

    override: PromptOverride | None
    resolved: list[tuple[str, str, str]] = field(default_factory=list)

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        self.resolved.append((descriptor.ns, descriptor.key, tag))
        return self.override


_PLAIN = st.text(alphabet=" \t\n-*.,:;!?()abcxyzABC019éß字", max_size=16)
_LEAF_FRAGMENTS = st.one_of(
    _PLAIN,
    st.sampled_from(
        [
            "{{ a }}",
            "{{ b }}",
            "{{- a }}",
            "{{ b -}}",
            "{{ a ~ b }}",
            "{{ a | upper }}",
            "{{ items | join(', ') }}",
            "{{ items | length }}",
            "{% for item in items %}[{{ item }}]{% endfor %}",
            "{% for item in items %}\n- {{ loop.index }}. {{ item }}\n{% endfor %}",
            "{% raw %}{{ a }} stays{% endraw %}",
            "{# a comment #}",
            "\n\n",
            "   ",
        ]
    ),
)
_LEAVES = st.lists(_LEAF_FRAGMENTS, max_size=4).map("".join)
_TOP_FRAGMENTS = st.one_of(
    _LEAF_FRAGMENTS,
    _LEAVES.map(lambda inner: "{% if flag %}" + inner + "{% else %}-{{ b }}-{% endif %}"),
    _LEAVES.map(lambda inner: "\n{%- if not flag %}\n" + inner + "\n{% endif -%}\n"),
    _LEAVES.map(lambda inner: "{% for item in items %}" + inner + "{{ item }}{% endfor %}"),
    st.just("{% set local = a ~ '!' %}{{ local }}"),
    st.just("{% macro wrap(x) %}<{{ x }}>{% endmacro %}{{ wrap(b) }}"),
)
_TEMPLATES = st.lists(_TOP_FRAGMENTS, max_size=6).map("".join)
_VALUES = st.text(alphabet=" \t\nab{}%#é", max_size=8)
_ENABLED: list[Callable[[Any], bool] | None] = [
    None,
    lambda params: bool(params.flag),
    lambda params: not params.flag,
]


@st.composite
def _section_trees(draw: st.DrawFn, depth: int = 0) -> tuple[Section, ...]:
    sections: list[Section] = []
    for index in range(draw(st.integers(min_value=1 if depth == 0 else 0, max_value=3 - depth))):
        key = f"s{index}"
        title = f"Title {depth}.{index}"
        children = draw(_section_trees(depth + 1)) if depth < 2 else ()
        if draw(st.booleans()):
            sections.append(
                MarkdownSection(
                    title=title,
                    key=key,
                    template=draw(_TEMPLATES),
                    params_type=draw(st.sampled_from([DataParams, ModelParams])),
                    enabled=draw(st.sampled_from(_ENABLED)),
                    children=children,
                )
            )
        else:
            hidden = draw(st.booleans()) and draw(st.booleans())
            sections.append(
                TextSection(
                    title=title,
                    key=key,
                    text=draw(_PLAIN),
                    enabled=(lambda params: False) if hidden else None,
                    children=children,
                )
            )
    return tuple(sections)


@st.composite
def _params(draw: st.DrawFn) -> tuple[DataParams, ModelParams]:
    def fields() -> dict[str, Any]:
        return {
            "a": draw(_VALUES),
            "b": draw(_VALUES),
            "flag": draw(st.booleans()),
            "items": draw(st.lists(_VALUES, max_size=3)),
        }

    data_fields = fields()
    data = DataParams(**{**data_fields, "items": tuple(data_fields["items"])})
    return data, ModelParams(**fields())


def _normalise(body: str) -> str:
    return re.sub(r"\A(?:[ \t]*\n)+", "", body.rstrip())


def _slow_render(
    sections: tuple[Section, ...], params: tuple[Any, ...], bodies: Mapping[SectionPath, str]
) -> str:
    by_type = {type(value): value for value in params}
    parts: list[str] = []

    def walk(level: tuple[Section, ...], parent: SectionPath, numbers: tuple[int, ...]) -> None:
        count = 0
        for section in level:
            section_params = by_type[section.params_type] if section.params_type else None
            if section.enabled is not None and not section.enabled(section_params):
                continue
            count += 1
            number = (*numbers, count)
            path = (*parent, section.key)
            body = bodies.get(path)
            if body is None:
                body = section.render_body(section_params, RenderContext(NS, KEY, path))
            body = _normalise(body)
            heading = f"{'#' * (len(number) + 1)} {'.'.join(map(str, number))}. {section.title}"
            parts.append(heading + ("\n\n" + body if body else ""))
            walk(section.children, path, number)

    walk(sections, (), ())
    return re.sub(r"[ \t]+(?=\n|\Z)", "", "\n\n".join(parts))


def _override_for(
    prompt: Prompt[None], paths: list[SectionPath], bodies: list[str]
) -> PromptOverride:
    author = OverrideAuthor(kind="operator")
    now = datetime(2024, 1, 1, tzinfo=UTC)
    entries = {}
    for path, body in zip(paths, bodies, strict=False):
        descriptor = prompt.descriptor.section(path)
        assert descriptor is not None
        entries[path] = SectionOverride(descriptor.content_hash, body, now, author)
    return PromptOverride(ns=NS, prompt_key=KEY, tag="latest", sections=entries)


@settings(max_examples=120, deadline=None)
@given(
    sections=_section_trees(),
    param_sets=st.lists(_params(), min_size=1, max_size=3),
    data=st.data(),
)
def test_combined_template_renders_exactly_what_sections_render_alone(
    sections: tuple[Section, ...],
    param_sets: list[tuple[DataParams, ModelParams]],
    data: st.DataObject,
) -> None:
    prompt: Prompt[None] = Prompt(ns=NS, key=KEY, sections=sections)
    all_paths = [path for path, _ in prompt.iter_sections()]
    overridden = data.draw(st.lists(st.sampled_from(all_paths), unique=True, max_size=2))
    override_bodies = data.draw(
        st.lists(_PLAIN | st.just("{{ a }} {% if %}"), min_size=2, max_size=2)
    )
    override = _override_for(prompt, overridden, override_bodies)
    bodies = dict(zip(overridden, override_bodies, strict=False))
    used_types = {section.params_type for _, section in prompt.iter_sections()}

    for param_set in param_sets:
        params = tuple(value for value in param_set if type(value) in used_types)
        plain = prompt.render(*params).text
        with_overrides = prompt.render(*params, overrides_store=FixedOverrides(override)).text

        assert plain == _slow_render(sections, params, {})
        assert with_overrides == _slow_render(sections, params, bodies)
