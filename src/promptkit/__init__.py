"""promptkit: typed prompt sections rendered to markdown, with a reusable workspace digest.

Every public name is importable from here. Names are loaded on first use (PEP 562), so
`import promptkit` stays fast and never imports pydantic, jinja2 or a provider SDK until a
name that needs them is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptkit._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "PromptkitError",
            "PromptValidationError",
            "PromptRenderError",
            "OutputParseError",
            "ToolValidationError",
            "SessionError",
            "SessionCorruptError",
            "SessionStaleError",
            "OverridesError",
            "WorkspaceError",
            "WorkspaceUnavailableError",
            "ProviderError",
            "ProviderAuthenticationError",
            "ProviderRateLimitError",
            "ProviderTimeoutError",
            "ProviderBadRequestError",
            "ProviderServerError",
            "ProviderConnectionError",
            "ProviderMalformedReplyError",
            "ModelOutputError",
            "OutputTruncatedError",
            "ModelRefusalError",
            "ToolLoopLimitError",
            "OptimizationError",
            "DatasetError",
            "PromotionRefusedError",
        ),
        "promptkit.errors",
    ),
    **dict.fromkeys(
        (
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
            "output_schema",
            "parse_structured_output",
        ),
        "promptkit.prompt",
    ),
    **dict.fromkeys(
        (
            "FsyncPolicy",
            "PromptExecuted",
            "PromptRendered",
            "Session",
            "SessionProtocol",
            "SessionSnapshot",
            "SessionStore",
            "ToolInvoked",
            "append",
            "register_in_memory_slice_type",
            "register_slice_type",
            "replace_latest",
            "upsert_by",
        ),
        "promptkit.session",
    ),
    **dict.fromkeys(
        (
            "DigestFreshness",
            "DigestResolution",
            "WorkspaceDigest",
            "WorkspaceDigestSection",
            "clear_workspace_digest",
            "latest_workspace_digest",
            "resolve_workspace_digest",
            "set_workspace_digest",
        ),
        "promptkit.digest",
    ),
    **dict.fromkeys(("SecretFinding", "find_secrets", "redact_secrets"), "promptkit.secrets"),
    **dict.fromkeys(
        (
            "FileSelection",
            "HostMount",
            "PodmanWorkspaceSection",
            "VfsWorkspaceSection",
            "WorkspaceFacts",
            "WorkspaceFile",
            "WorkspaceManifest",
            "WorkspaceSection",
            "describe_workspace",
            "render_static_digest",
            "scan_workspace",
            "select_files",
            "workspace_fingerprint",
        ),
        "promptkit.workspace",
    ),
    **dict.fromkeys(
        (
            "AnthropicAdapter",
            "OpenAIAdapter",
            "PromptResponse",
            "ProviderAdapter",
            "TokenUsage",
            "ToolCallRecord",
        ),
        "promptkit.adapters",
    ),
    **dict.fromkeys(("AdapterChoice", "choose_adapter"), "promptkit.adapters.selection"),
    **dict.fromkeys(
        (
            "DigestDraft",
            "DigestWriter",
            "ModelDigestWriter",
            "OptimizationResult",
            "OptimizationScope",
            "OptimizationTarget",
            "StaticDigestWriter",
            "WriterChoice",
            "choose_digest_writer",
            "optimize_workspace_digest",
        ),
        "promptkit.optimize",
    ),
    **dict.fromkeys(
        (
            "LocalPromptOverridesStore",
            "OverrideProblem",
            "PromptOverridesStore",
            "SharedSectionOverride",
            "SharedSectionStore",
            "check_overrides",
        ),
        "promptkit.overrides",
    ),
    **dict.fromkeys(
        ("Plan", "PlanStep", "PlanningStrategy", "PlanningToolsSection", "StepStatus"),
        "promptkit.planning",
    ),
    **dict.fromkeys(
        ("Case", "Dataset", "EvaluationReport", "load_dataset", "run_evaluation"),
        "promptkit.evals",
    ),
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from promptkit.adapters import (
        AnthropicAdapter as AnthropicAdapter,
        OpenAIAdapter as OpenAIAdapter,
        PromptResponse as PromptResponse,
        ProviderAdapter as ProviderAdapter,
        TokenUsage as TokenUsage,
        ToolCallRecord as ToolCallRecord,
    )
    from promptkit.adapters.selection import (
        AdapterChoice as AdapterChoice,
        choose_adapter as choose_adapter,
    )
    from promptkit.digest import (
        DigestFreshness as DigestFreshness,
        DigestResolution as DigestResolution,
        WorkspaceDigest as WorkspaceDigest,
        WorkspaceDigestSection as WorkspaceDigestSection,
        clear_workspace_digest as clear_workspace_digest,
        latest_workspace_digest as latest_workspace_digest,
        resolve_workspace_digest as resolve_workspace_digest,
        set_workspace_digest as set_workspace_digest,
    )
    from promptkit.errors import (
        DatasetError as DatasetError,
        ModelOutputError as ModelOutputError,
        ModelRefusalError as ModelRefusalError,
        OptimizationError as OptimizationError,
        OutputParseError as OutputParseError,
        OutputTruncatedError as OutputTruncatedError,
        OverridesError as OverridesError,
        PromotionRefusedError as PromotionRefusedError,
        PromptkitError as PromptkitError,
        PromptRenderError as PromptRenderError,
        PromptValidationError as PromptValidationError,
        ProviderAuthenticationError as ProviderAuthenticationError,
        ProviderBadRequestError as ProviderBadRequestError,
        ProviderConnectionError as ProviderConnectionError,
        ProviderError as ProviderError,
        ProviderMalformedReplyError as ProviderMalformedReplyError,
        ProviderRateLimitError as ProviderRateLimitError,
        ProviderServerError as ProviderServerError,
        ProviderTimeoutError as ProviderTimeoutError,
        SessionCorruptError as SessionCorruptError,
        SessionError as SessionError,
        SessionStaleError as SessionStaleError,
        ToolLoopLimitError as ToolLoopLimitError,
        ToolValidationError as ToolValidationError,
        WorkspaceError as WorkspaceError,
        WorkspaceUnavailableError as WorkspaceUnavailableError,
    )
    from promptkit.evals import (
        Case as Case,
        Dataset as Dataset,
        EvaluationReport as EvaluationReport,
        load_dataset as load_dataset,
        run_evaluation as run_evaluation,
    )
    from promptkit.optimize import (
        DigestDraft as DigestDraft,
        DigestWriter as DigestWriter,
        ModelDigestWriter as ModelDigestWriter,
        OperatorOverrideError as OperatorOverrideError,
        OptimizationResult as OptimizationResult,
        OptimizationScope as OptimizationScope,
        OptimizationTarget as OptimizationTarget,
        StaticDigestWriter as StaticDigestWriter,
        WriterChoice as WriterChoice,
        choose_digest_writer as choose_digest_writer,
        optimize_workspace_digest as optimize_workspace_digest,
    )
    from promptkit.overrides import (
        LocalPromptOverridesStore as LocalPromptOverridesStore,
        OverrideProblem as OverrideProblem,
        PromptOverridesStore as PromptOverridesStore,
        SharedSectionOverride as SharedSectionOverride,
        SharedSectionStore as SharedSectionStore,
        check_overrides as check_overrides,
    )
    from promptkit.planning import (
        Plan as Plan,
        PlanningStrategy as PlanningStrategy,
        PlanningToolsSection as PlanningToolsSection,
        PlanStep as PlanStep,
        StepStatus as StepStatus,
    )
    from promptkit.prompt import (
        MarkdownSection as MarkdownSection,
        OverrideAuthor as OverrideAuthor,
        OverridesLookup as OverridesLookup,
        Prompt as Prompt,
        PromptDescriptor as PromptDescriptor,
        PromptOverride as PromptOverride,
        RenderContext as RenderContext,
        RenderedPrompt as RenderedPrompt,
        Section as Section,
        SectionDescriptor as SectionDescriptor,
        SectionOverride as SectionOverride,
        SectionPath as SectionPath,
        TextSection as TextSection,
        Tool as Tool,
        ToolContext as ToolContext,
        ToolDescriptor as ToolDescriptor,
        ToolOverride as ToolOverride,
        ToolResult as ToolResult,
        content_hash as content_hash,
        output_schema as output_schema,
        parse_structured_output as parse_structured_output,
    )
    from promptkit.secrets import (
        SecretFinding as SecretFinding,
        find_secrets as find_secrets,
        redact_secrets as redact_secrets,
    )
    from promptkit.session import (
        FsyncPolicy as FsyncPolicy,
        PromptExecuted as PromptExecuted,
        PromptRendered as PromptRendered,
        Session as Session,
        SessionProtocol as SessionProtocol,
        SessionSnapshot as SessionSnapshot,
        SessionStore as SessionStore,
        ToolInvoked as ToolInvoked,
        append as append,
        register_in_memory_slice_type as register_in_memory_slice_type,
        register_slice_type as register_slice_type,
        replace_latest as replace_latest,
        upsert_by as upsert_by,
    )
    from promptkit.workspace import (
        FileSelection as FileSelection,
        HostMount as HostMount,
        PodmanWorkspaceSection as PodmanWorkspaceSection,
        VfsWorkspaceSection as VfsWorkspaceSection,
        WorkspaceFacts as WorkspaceFacts,
        WorkspaceFile as WorkspaceFile,
        WorkspaceManifest as WorkspaceManifest,
        WorkspaceSection as WorkspaceSection,
        describe_workspace as describe_workspace,
        render_static_digest as render_static_digest,
        scan_workspace as scan_workspace,
        select_files as select_files,
        workspace_fingerprint as workspace_fingerprint,
    )
