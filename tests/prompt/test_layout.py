"""Rendered layout: numbered headings, one blank line between sections, no trailing
whitespace, and byte-identical text in separate processes.
"""

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings, strategies as st

from promptkit import MarkdownSection, Prompt, TextSection


@dataclass(frozen=True)
class Words:
    first: str = ""
    second: str = ""


def test_headings_are_numbered_at_three_depths() -> None:
    prompt: Prompt[None] = Prompt(
        ns="tests",
        key="layout",
        sections=(
            TextSection(
                title="Top",
                key="top",
                text="Top text.",
                children=(
                    TextSection(
                        title="Child",
                        key="child",
                        text="Child text.",
                        children=(
                            TextSection(title="Leaf", key="leaf", text="Leaf one."),
                            TextSection(title="Leaf two", key="leaf-two", text="Leaf two."),
                        ),
                    ),
                    TextSection(title="Second child", key="second-child", text="More."),
                ),
            ),
            TextSection(title="Another", key="another", text="Last."),
        ),
    )

    assert prompt.render().text == (
        "## 1. Top\n\nTop text.\n\n"
        "### 1.1. Child\n\nChild text.\n\n"
        "#### 1.1.1. Leaf\n\nLeaf one.\n\n"
        "#### 1.1.2. Leaf two\n\nLeaf two.\n\n"
        "### 1.2. Second child\n\nMore.\n\n"
        "## 2. Another\n\nLast."
    )


def test_section_with_an_empty_body_renders_its_heading_alone() -> None:
    prompt: Prompt[None] = Prompt(
        ns="tests",
        key="layout",
        sections=(
            TextSection(title="Empty", key="empty", text="  \n\t\n"),
            TextSection(title="Full", key="full", text="Text."),
        ),
    )

    assert prompt.render().text == "## 1. Empty\n\n## 2. Full\n\nText."


def test_title_ending_in_whitespace_leaves_no_trailing_whitespace() -> None:
    prompt: Prompt[None] = Prompt(
        ns="tests", key="layout", sections=(TextSection(title="Notes ", key="notes", text=""),)
    )

    text = prompt.render().text

    assert text.rstrip(" \t") == text


def test_titles_are_never_evaluated_as_templates() -> None:
    prompt: Prompt[None] = Prompt(
        ns="tests",
        key="layout",
        sections=(
            MarkdownSection(
                title="Use {{ first }} {% raw %}",
                key="a",
                template="{{ first }} body",
                params_type=Words,
            ),
            TextSection(title="{# note #}", key="b", text="Text."),
        ),
    )

    text = prompt.render(Words(first="x")).text

    assert text == "## 1. Use {{ first }} {% raw %}\n\nx body\n\n## 2. {# note #}\n\nText."


# Body text never contains '#', so every heading in the output is one of ours.
_TEXT = st.text(alphabet=" \t\n\r-*.,:;!?()[]abcxyzABC019éß字✓", max_size=30)
_FRAGMENTS = st.one_of(
    _TEXT,
    st.sampled_from(
        [
            "{{ first }}",
            "{{ second }}",
            "{{- first }}",
            "{{ second -}}",
            "{% if first %}",
            "{% endif %}",
            "\n{% for c in first %}{{ c }}{% endfor %}\n",
            "  {% for c in second %}\n{{ c }}  {% endfor %}\n",
        ]
    ),
)


def _balanced(fragments: list[str]) -> str:
    # Close every `{% if %}` the fragments opened; drop `{% endif %}`s that close nothing.
    out: list[str] = []
    depth = 0
    for fragment in fragments:
        if fragment == "{% endif %}":
            if depth == 0:
                continue
            depth -= 1
        elif fragment == "{% if first %}":
            depth += 1
        out.append(fragment)
    out.extend(["{% endif %}"] * depth)
    return "".join(out)


_TEMPLATES = st.lists(_FRAGMENTS, max_size=8).map(_balanced)
_VALUE = st.text(alphabet=" \t\nab{}%#\\é", max_size=12)


def _trailing_whitespace_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line != line.rstrip(" \t")]


@settings(max_examples=80, deadline=None)
@given(st.lists(_TEMPLATES, min_size=1, max_size=5), _VALUE, _VALUE)
def test_sections_are_separated_by_one_blank_line_and_no_line_ends_in_whitespace(
    templates: list[str], first: str, second: str
) -> None:
    sections = tuple(
        MarkdownSection(title=f"S{i}", key=f"s{i}", template=template, params_type=Words)
        for i, template in enumerate(templates)
    )
    prompt: Prompt[None] = Prompt(ns="tests", key="layout", sections=sections)

    text = prompt.render(Words(first=first, second=second)).text

    assert _trailing_whitespace_lines(text) == []
    assert text.startswith("## 1. S0")
    assert not text[-1].isspace()
    for i in range(len(templates)):
        heading = f"## {i + 1}. S{i}"
        at = text.index(heading)
        if i:
            assert text[at - 2 : at] == "\n\n"
            assert not text[at - 3].isspace(), "more than one blank line before a heading"
        after = text[at + len(heading) :]
        assert after == "" or (after[:2] == "\n\n" and after[2] != "\n")


_RENDER_SCRIPT = textwrap.dedent(
    """
    import sys
    from dataclasses import dataclass

    from pydantic import BaseModel

    from promptkit import MarkdownSection, Prompt, TextSection, Tool, ToolContext, ToolResult


    class Query(BaseModel):
        text: str
        limit: int = 5
        tags: list[str] = []


    @dataclass(frozen=True)
    class Facts:
        names: tuple[str, ...]
        scores: dict[str, int]


    class Verdict(BaseModel):
        ok: bool
        reasons: list[str]
        detail: dict[str, float] = {}


    def search(params: Query, context: ToolContext) -> ToolResult:
        return ToolResult(message=params.text)


    prompt = Prompt(
        ns="tests/layout",
        key="identical",
        sections=(
            TextSection(title="Role", key="role", text="You review things. ✓"),
            MarkdownSection(
                title="Facts",
                key="facts",
                params_type=Facts,
                template=(
                    "{% for name in names %}- {{ name }}\\n{% endfor %}"
                    "{% for key, value in scores.items() %}{{ key }}={{ value }} {% endfor %}"
                ),
                tools=(Tool(name="search", description="Search.", params_type=Query,
                            handler=search),),
                children=(TextSection(title="Note", key="note", text="Nested."),),
            ),
        ),
        output_type=Verdict,
    )
    rendered = prompt.render(Facts(names=("b", "a", "字"), scores={"z": 1, "a": 2}))
    out = [rendered.text, repr(rendered.descriptor)]
    out += [repr(sorted(tool.parameters_schema.items())) for tool in rendered.tools]
    sys.stdout.buffer.write("\\n---\\n".join(out).encode("utf-8"))
    """
)


def _render_in_fresh_process(script: Path, hash_seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    completed = subprocess.run(
        [sys.executable, str(script)],
        cwd=script.parent,
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr.decode()
    return completed.stdout


def test_same_inputs_render_byte_identical_text_in_two_processes(tmp_path: Path) -> None:
    script = tmp_path / "render_once.py"
    script.write_text(_RENDER_SCRIPT, encoding="utf-8")

    first = _render_in_fresh_process(script, "1")
    second = _render_in_fresh_process(script, "4242")

    assert first.startswith(b"## 1. Role")
    assert b"## 3. Response Format" in first
    assert first == second
