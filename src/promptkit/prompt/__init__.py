"""Prompt core: sections, prompts, rendering, tools and structured output.

Knows nothing of sessions, stores or providers; those build on it.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.prompt.hashing import content_hash as content_hash
    from promptkit.prompt.markdown import MarkdownSection as MarkdownSection
    from promptkit.prompt.override_types import (
        OverrideAuthor as OverrideAuthor,
        OverridesLookup as OverridesLookup,
        PromptOverride as PromptOverride,
        SectionOverride as SectionOverride,
        SectionPath as SectionPath,
        ToolOverride as ToolOverride,
    )
    from promptkit.prompt.params import (
        params_from_json as params_from_json,
        read_params_argument as read_params_argument,
    )
    from promptkit.prompt.prompt import Prompt as Prompt
    from promptkit.prompt.rendered import (
        PromptDescriptor as PromptDescriptor,
        RenderedPrompt as RenderedPrompt,
        SectionDescriptor as SectionDescriptor,
        ToolDescriptor as ToolDescriptor,
    )
    from promptkit.prompt.section import (
        RenderContext as RenderContext,
        Section as Section,
        TextSection as TextSection,
    )
    from promptkit.prompt.structured import (
        output_schema as output_schema,
        parse_structured_output as parse_structured_output,
    )
    from promptkit.prompt.tool import (
        Tool as Tool,
        ToolContext as ToolContext,
        ToolResult as ToolResult,
        mask_tool_result as mask_tool_result,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.prompt.hashing": ("content_hash",),
            "promptkit.prompt.markdown": ("MarkdownSection",),
            "promptkit.prompt.override_types": (
                "OverrideAuthor",
                "OverridesLookup",
                "PromptOverride",
                "SectionOverride",
                "SectionPath",
                "ToolOverride",
            ),
            "promptkit.prompt.params": ("params_from_json", "read_params_argument"),
            "promptkit.prompt.prompt": ("Prompt",),
            "promptkit.prompt.rendered": (
                "PromptDescriptor",
                "RenderedPrompt",
                "SectionDescriptor",
                "ToolDescriptor",
            ),
            "promptkit.prompt.section": ("RenderContext", "Section", "TextSection"),
            "promptkit.prompt.structured": ("output_schema", "parse_structured_output"),
            "promptkit.prompt.tool": ("Tool", "ToolContext", "ToolResult", "mask_tool_result"),
        },
    )
