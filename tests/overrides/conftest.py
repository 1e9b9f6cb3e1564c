"""Shared prompts and helpers for the overrides tests.

`PROMPT_MODULE` is the source of a small module the CLI tests write into tmp_path and name with
`--prompt review_prompts:PROMPT`; `review_prompt()` builds the same prompt in-process. Passing a
different `intro` text changes the intro section's hash, which is how tests make an entry
stale without touching the override file.
"""

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from promptkit import MarkdownSection, Prompt, TextSection, Tool, ToolResult
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import PromptOverride

INTRO = "Review the change like a careful colleague."

PROMPT_MODULE = """
from dataclasses import dataclass

from promptkit import MarkdownSection, Prompt, TextSection, Tool, ToolResult
from promptkit.prompt import PromptOverride


@dataclass(frozen=True)
class TaskParams:
    change: str = "the patch"


@dataclass(frozen=True)
class SearchParams:
    query: str


def _search(params, context):
    return ToolResult(message="nothing found")


PROMPT = Prompt(
    ns="reviewer",
    key="code-review",
    sections=(
        MarkdownSection(
            title="Intro",
            key="intro",
            template={intro!r},
            children=(TextSection(title="Tone", key="tone", text="Be kind and specific."),),
        ),
        MarkdownSection(
            title="Task", key="task", template="Review {{{{ change }}}}.", params_type=TaskParams
        ),
        TextSection(title="Digest", key="workspace-digest", text="(no digest yet)", seedable=False),
        TextSection(title="Rules", key="rules", text="Fixed rules.", accepts_overrides=False),
        TextSection(
            title="Search",
            key="search",
            text="Use the search tool.",
            tools=(
                Tool(
                    name="search",
                    description="Search the code base.",
                    params_type=SearchParams,
                    handler=_search,
                ),
            ),
        ),
    ),
)
"""


@dataclass(frozen=True)
class TaskParams:
    change: str = "the patch"


@dataclass(frozen=True)
class SearchParams:
    query: str


def _search(params: SearchParams, context: object) -> ToolResult:
    return ToolResult(message="nothing found")


def review_prompt(intro: str = INTRO) -> Prompt[None]:
    """The same prompt as PROMPT_MODULE defines, built in this process."""
    return Prompt(
        ns="reviewer",
        key="code-review",
        sections=(
            MarkdownSection(
                title="Intro",
                key="intro",
                template=intro,
                children=(TextSection(title="Tone", key="tone", text="Be kind and specific."),),
            ),
            MarkdownSection(
                title="Task", key="task", template="Review {{ change }}.", params_type=TaskParams
            ),
            TextSection(
                title="Digest", key="workspace-digest", text="(no digest yet)", seedable=False
            ),
            TextSection(title="Rules", key="rules", text="Fixed rules.", accepts_overrides=False),
            TextSection(
                title="Search",
                key="search",
                text="Use the search tool.",
                tools=(
                    Tool(
                        name="search",
                        description="Search the code base.",
                        params_type=SearchParams,
                        handler=_search,
                    ),
                ),
            ),
        ),
    )


@pytest.fixture
def prompt() -> Prompt[None]:
    return review_prompt()


@pytest.fixture
def store(tmp_path: Path) -> LocalPromptOverridesStore:
    return LocalPromptOverridesStore(tmp_path / "overrides")


def write_prompt_module(folder: Path, intro: str = INTRO) -> None:
    """Write `review_prompts.py` (defining PROMPT) into `folder`."""
    (folder / "review_prompts.py").write_text(PROMPT_MODULE.format(intro=intro), encoding="utf-8")


def section_hash(prompt: Prompt[None], path: str) -> str:
    """The content hash of the section at `path` (keys joined by /)."""
    section = prompt.section_at(tuple(path.split("/")))
    assert section is not None, path
    return section.content_hash


def stored(
    store: LocalPromptOverridesStore, prompt: Prompt[None], tag: str = "latest"
) -> PromptOverride:
    """What a fresh store instance reads for `prompt`: the file, not a cache."""
    override = LocalPromptOverridesStore(store.root).resolve(prompt.descriptor, tag)
    assert override is not None, f"no overrides stored for {prompt.ns}/{prompt.key} {tag}"
    return override


def rendered_tool(
    prompt: Prompt[None], name: str, store: LocalPromptOverridesStore | None = None
) -> Tool[Any]:
    tool = prompt.render(overrides_store=store).tool(name)
    assert tool is not None, name
    return tool


def editor_env(project: Path, script: str) -> dict[str, str]:
    """The environment with $EDITOR running `script` (which has `sys` and `Path` imported and
    gets the draft's path as sys.argv[1]) and no $VISUAL, which would win over it."""
    editor = project / "editor.py"
    editor.write_text(f"import sys\nfrom pathlib import Path\n{script}", encoding="utf-8")
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}"}
    env.pop("VISUAL", None)
    return env
