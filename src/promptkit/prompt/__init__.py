"""Prompt core: sections, prompts, rendering, tools and structured output.

Knows nothing of sessions, stores or providers; those build on it.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.prompt._deps import DepsNeed as DepsNeed
    from promptkit.prompt._hashing import content_hash as content_hash
    from promptkit.prompt._markdown import MarkdownSection as MarkdownSection
    from promptkit.prompt._override_types import (
        AuthorKind as AuthorKind,
        OverrideAuthor as OverrideAuthor,
        OverridesLookup as OverridesLookup,
        PromptOverride as PromptOverride,
        SectionOverride as SectionOverride,
        SectionPath as SectionPath,
        ToolOverride as ToolOverride,
    )
    from promptkit.prompt._params import (
        describe_validation_error as describe_validation_error,
        param_field as param_field,
        params_from_json as params_from_json,
        read_params_argument as read_params_argument,
        type_adapter as type_adapter,
    )
    from promptkit.prompt._prompt import Prompt as Prompt
    from promptkit.prompt._rendered import (
        PromptDescriptor as PromptDescriptor,
        RenderedPrompt as RenderedPrompt,
        SectionDescriptor as SectionDescriptor,
        ToolDescriptor as ToolDescriptor,
    )
    from promptkit.prompt._section import (
        RenderContext as RenderContext,
        Section as Section,
        TextSection as TextSection,
        normalize_body as normalize_body,
    )
    from promptkit.prompt._structured import (
        output_schema as output_schema,
        parse_structured_output as parse_structured_output,
        schema_for_model as schema_for_model,
    )
    from promptkit.prompt._tool import (
        TOOL_NAME_PATTERN as TOOL_NAME_PATTERN,
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
            "promptkit.prompt._deps": ("DepsNeed",),
            "promptkit.prompt._hashing": ("content_hash",),
            "promptkit.prompt._markdown": ("MarkdownSection",),
            "promptkit.prompt._override_types": (
                "AuthorKind",
                "OverrideAuthor",
                "OverridesLookup",
                "PromptOverride",
                "SectionOverride",
                "SectionPath",
                "ToolOverride",
            ),
            "promptkit.prompt._params": (
                "describe_validation_error",
                "param_field",
                "params_from_json",
                "read_params_argument",
                "type_adapter",
            ),
            "promptkit.prompt._prompt": ("Prompt",),
            "promptkit.prompt._rendered": (
                "PromptDescriptor",
                "RenderedPrompt",
                "SectionDescriptor",
                "ToolDescriptor",
            ),
            "promptkit.prompt._section": (
                "RenderContext",
                "Section",
                "TextSection",
                "normalize_body",
            ),
            "promptkit.prompt._structured": (
                "output_schema",
                "parse_structured_output",
                "schema_for_model",
            ),
            "promptkit.prompt._tool": (
                "TOOL_NAME_PATTERN",
                "Tool",
                "ToolContext",
                "ToolResult",
                "mask_tool_result",
            ),
        },
    )
