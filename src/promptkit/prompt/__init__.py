"""Prompt core: sections, prompts, rendering, tools and structured output.

Knows nothing of sessions, stores or providers; those build on it.
"""

from promptkit.prompt.hashing import content_hash
from promptkit.prompt.markdown import MarkdownSection
from promptkit.prompt.override_types import (
    OverrideAuthor,
    OverridesLookup,
    PromptOverride,
    SectionOverride,
    SectionPath,
    ToolOverride,
)
from promptkit.prompt.prompt import (
    Prompt,
    PromptDescriptor,
    RenderedPrompt,
    SectionDescriptor,
    ToolDescriptor,
)
from promptkit.prompt.section import RenderContext, Section, TextSection
from promptkit.prompt.structured import output_schema, parse_structured_output
from promptkit.prompt.tool import Tool, ToolContext, ToolResult, mask_tool_result

__all__ = [
    "MarkdownSection",
    "OverrideAuthor",
    "OverridesLookup",
    "Prompt",
    "PromptDescriptor",
    "PromptOverride",
    "RenderContext",
    "RenderedPrompt",
    "Section",
    "SectionDescriptor",
    "SectionOverride",
    "SectionPath",
    "TextSection",
    "Tool",
    "ToolContext",
    "ToolDescriptor",
    "ToolOverride",
    "ToolResult",
    "content_hash",
    "mask_tool_result",
    "output_schema",
    "parse_structured_output",
]
