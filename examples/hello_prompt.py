"""A first promptkit prompt: typed sections, a tool, structured output, rendered to markdown.

Run: python examples/hello_prompt.py
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from promptkit import MarkdownSection, Prompt, TextSection, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class Task:
    """What the assistant is asked to do."""

    audience: str
    topic: str
    word_limit: int = 120


class LookupParams(BaseModel):
    term: str = Field(description="The glossary term to look up.")


class Answer(BaseModel):
    summary: str
    sources: list[str]


GLOSSARY = {"digest": "A bounded, task-agnostic summary of a repository."}


def look_up(params: LookupParams, context: ToolContext) -> ToolResult:
    definition = GLOSSARY.get(params.term.lower())
    if definition is None:
        return ToolResult(message=f"No entry for {params.term!r}.", success=False)
    return ToolResult(message=definition, value={"term": params.term})


HELLO_PROMPT: Prompt[Answer] = Prompt(
    ns="examples",
    key="hello",
    name="Hello promptkit",
    sections=(
        TextSection(
            title="Role",
            key="role",
            text="You are a patient technical writer who explains one idea at a time.",
        ),
        MarkdownSection(
            title="Task",
            key="task",
            params_type=Task,
            template=(
                "Explain {{ topic }} to {{ audience }} in at most {{ word_limit }} words.\n"
                "Use the glossary tool for any term you are unsure of."
            ),
            tools=(
                Tool(
                    name="glossary_lookup",
                    description="Look up a term in the project glossary.",
                    params_type=LookupParams,
                    handler=look_up,
                ),
            ),
        ),
    ),
    output_type=Answer,
)


def main() -> None:
    rendered = HELLO_PROMPT.render(Task(audience="new contributors", topic="workspace digests"))
    print(rendered.text)
    print()
    print("tools:", ", ".join(tool.name for tool in rendered.tools))


if __name__ == "__main__":
    main()
