"""promptkit: typed prompt sections rendered to markdown, with a reusable workspace digest.

This namespace holds what application code uses every day; the rest lives in the public
subpackages (`promptkit.app`, `promptkit.prompt`, `promptkit.session`, `promptkit.digest`,
`promptkit.workspace`, `promptkit.hostfiles`, `promptkit.repofacts`, `promptkit.overrides`,
`promptkit.planning`, `promptkit.adapters`, `promptkit.errors`, `promptkit.testing`).

The names below are declared to type checkers in the `TYPE_CHECKING` block (a misspelt one is
an error) and to the interpreter in the table beside it, which `tests/test_exports.py` holds to
the block. At run time a name's module is imported on first use (PEP 562): `import promptkit`
never imports pydantic, jinja2 or a provider SDK by itself.
"""

from __future__ import annotations

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__version__ = "0.1.0"

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.adapters import (
        AnthropicAdapter as AnthropicAdapter,
        OpenAIAdapter as OpenAIAdapter,
        PromptResponse as PromptResponse,
        ProviderAdapter as ProviderAdapter,
        TokenUsage as TokenUsage,
    )
    from promptkit.app import App as App
    from promptkit.digest import (
        WorkspaceDigest as WorkspaceDigest,
        WorkspaceDigestSection as WorkspaceDigestSection,
        clear_workspace_digest as clear_workspace_digest,
        latest_workspace_digest as latest_workspace_digest,
        set_workspace_digest as set_workspace_digest,
    )
    from promptkit.errors import (
        OutputParseError as OutputParseError,
        PromptkitError as PromptkitError,
        PromptRenderError as PromptRenderError,
        PromptValidationError as PromptValidationError,
        ProviderError as ProviderError,
        ProviderTimeoutError as ProviderTimeoutError,
        RunError as RunError,
        ToolLoopLimitError as ToolLoopLimitError,
        UsageError as UsageError,
    )
    from promptkit.optimize import (
        OptimizationResult as OptimizationResult,
        OptimizationScope as OptimizationScope,
    )
    from promptkit.overrides import (
        LocalPromptOverridesStore as LocalPromptOverridesStore,
        PromptOverridesStore as PromptOverridesStore,
    )
    from promptkit.planning import (
        PlanningStrategy as PlanningStrategy,
        PlanningToolsSection as PlanningToolsSection,
    )
    from promptkit.prompt import (
        MarkdownSection as MarkdownSection,
        Prompt as Prompt,
        RenderContext as RenderContext,
        RenderedPrompt as RenderedPrompt,
        Section as Section,
        TextSection as TextSection,
        Tool as Tool,
        ToolContext as ToolContext,
        ToolResult as ToolResult,
    )
    from promptkit.session import (
        Session as Session,
        SessionProtocol as SessionProtocol,
        SessionStore as SessionStore,
    )
    from promptkit.workspace import (
        HostMount as HostMount,
        PodmanWorkspaceSection as PodmanWorkspaceSection,
        VfsWorkspaceSection as VfsWorkspaceSection,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.adapters": (
                "AnthropicAdapter",
                "OpenAIAdapter",
                "PromptResponse",
                "ProviderAdapter",
                "TokenUsage",
            ),
            "promptkit.app": ("App",),
            "promptkit.digest": (
                "WorkspaceDigest",
                "WorkspaceDigestSection",
                "clear_workspace_digest",
                "latest_workspace_digest",
                "set_workspace_digest",
            ),
            "promptkit.errors": (
                "OutputParseError",
                "PromptRenderError",
                "PromptValidationError",
                "PromptkitError",
                "ProviderError",
                "ProviderTimeoutError",
                "RunError",
                "ToolLoopLimitError",
                "UsageError",
            ),
            "promptkit.optimize": ("OptimizationResult", "OptimizationScope"),
            "promptkit.overrides": ("LocalPromptOverridesStore", "PromptOverridesStore"),
            "promptkit.planning": ("PlanningStrategy", "PlanningToolsSection"),
            "promptkit.prompt": (
                "MarkdownSection",
                "Prompt",
                "RenderContext",
                "RenderedPrompt",
                "Section",
                "TextSection",
                "Tool",
                "ToolContext",
                "ToolResult",
            ),
            "promptkit.session": ("Session", "SessionProtocol", "SessionStore"),
            "promptkit.workspace": ("HostMount", "PodmanWorkspaceSection", "VfsWorkspaceSection"),
        },
    )
