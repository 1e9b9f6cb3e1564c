"""Provider adapters: run a prompt on a model with its tools, structured output and a deadline.

`OpenAIAdapter` (Responses or Chat Completions) and `AnthropicAdapter` (Messages) share one
`WireAdapter`: one tool loop, one driver for `evaluate`, `aevaluate`, `stream` and `astream`,
the options of a call declared once (`CallOptions`), and one private module per wire API behind
the `WireApi` protocol. `evaluate` returns a `PromptResponse` and records `PromptRendered`,
`ToolInvoked` and `PromptExecuted` in the session. The provider SDKs are imported only when a
client is built. Every module of this package is private; the names below are its surface.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    # Running prompts.
    from promptkit.adapters._anthropic import AnthropicAdapter as AnthropicAdapter
    from promptkit.adapters._choice import (
        AdapterChoice as AdapterChoice,
        choose_adapter as choose_adapter,
        model_configured as model_configured,
    )
    from promptkit.adapters._conversation import (
        ConversationMessage as ConversationMessage,
        ConversationTurnKept as ConversationTurnKept,
        Message as Message,
        MessageToolCall as MessageToolCall,
        conversation_messages as conversation_messages,
    )
    from promptkit.adapters._cost import (
        DEFAULT_PRICES as DEFAULT_PRICES,
        ModelPrice as ModelPrice,
        PriceTable as PriceTable,
    )
    from promptkit.adapters._events import (
        ResponseCompleted as ResponseCompleted,
        StreamEvent as StreamEvent,
        TextDelta as TextDelta,
        ToolCallFinished as ToolCallFinished,
        ToolCallStarted as ToolCallStarted,
        UsageReported as UsageReported,
        response_of as response_of,
    )
    from promptkit.adapters._loop import MAX_TOOL_CALLS_PER_REPLY as MAX_TOOL_CALLS_PER_REPLY
    from promptkit.adapters._openai import OpenAIAdapter as OpenAIAdapter
    from promptkit.adapters._options import (
        DEFAULT_MAX_TOOL_ROUNDS as DEFAULT_MAX_TOOL_ROUNDS,
        DEFAULT_OUTPUT_RETRIES as DEFAULT_OUTPUT_RETRIES,
        DEFAULT_OVERRIDES_TAG as DEFAULT_OVERRIDES_TAG,
        DEFAULT_TOOL_CONCURRENCY as DEFAULT_TOOL_CONCURRENCY,
        DEFAULT_USER_MESSAGE as DEFAULT_USER_MESSAGE,
        CallOptions as CallOptions,
        CallOptionsWithDeps as CallOptionsWithDeps,
    )
    from promptkit.adapters._provider import ProviderAdapter as ProviderAdapter
    from promptkit.adapters._record import (
        ExecutionRecord as ExecutionRecord,
        write_failure_record as write_failure_record,
        write_manifest as write_manifest,
    )
    from promptkit.adapters._response import (
        FinishReason as FinishReason,
        PromptResponse as PromptResponse,
        TokenUsage as TokenUsage,
        ToolCallRecord as ToolCallRecord,
        cost_text as cost_text,
        executed_token_usage as executed_token_usage,
        session_token_usage as session_token_usage,
    )
    from promptkit.adapters._settings import (
        ModelSettings as ModelSettings,
        UnsupportedSettingError as UnsupportedSettingError,
    )
    from promptkit.adapters._stream import (
        DEFAULT_STREAM_MAX_BYTES as DEFAULT_STREAM_MAX_BYTES,
        DEFAULT_STREAM_MAX_SECONDS as DEFAULT_STREAM_MAX_SECONDS,
        StreamLimits as StreamLimits,
    )
    from promptkit.adapters._tools import MAX_TOOL_RESULT_BYTES as MAX_TOOL_RESULT_BYTES
    from promptkit.adapters._tracing import OptimizeTrace as OptimizeTrace

    # Speaking a provider's SDK: what a new provider or wire API builds on.
    from promptkit.adapters._wire_adapter import (
        ProviderSdk as ProviderSdk,
        StructuredOutputMode as StructuredOutputMode,
        WireAdapter as WireAdapter,
    )
    from promptkit.adapters._wire_api import (
        ModelTurn as ModelTurn,
        ReplyShape as ReplyShape,
        RequestedToolCall as RequestedToolCall,
        StreamDecoder as StreamDecoder,
        ToolReply as ToolReply,
        WireApi as WireApi,
        WireConversation as WireConversation,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.adapters._anthropic": ("AnthropicAdapter",),
            "promptkit.adapters._conversation": (
                "ConversationMessage",
                "ConversationTurnKept",
                "Message",
                "MessageToolCall",
                "conversation_messages",
            ),
            "promptkit.adapters._cost": (
                "DEFAULT_PRICES",
                "ModelPrice",
                "PriceTable",
            ),
            "promptkit.adapters._events": (
                "ResponseCompleted",
                "StreamEvent",
                "TextDelta",
                "ToolCallFinished",
                "ToolCallStarted",
                "UsageReported",
                "response_of",
            ),
            "promptkit.adapters._loop": ("MAX_TOOL_CALLS_PER_REPLY",),
            "promptkit.adapters._openai": ("OpenAIAdapter",),
            "promptkit.adapters._options": (
                "DEFAULT_MAX_TOOL_ROUNDS",
                "DEFAULT_OUTPUT_RETRIES",
                "DEFAULT_OVERRIDES_TAG",
                "DEFAULT_TOOL_CONCURRENCY",
                "DEFAULT_USER_MESSAGE",
                "CallOptions",
                "CallOptionsWithDeps",
            ),
            "promptkit.adapters._provider": ("ProviderAdapter",),
            "promptkit.adapters._record": (
                "ExecutionRecord",
                "write_failure_record",
                "write_manifest",
            ),
            "promptkit.adapters._response": (
                "FinishReason",
                "PromptResponse",
                "TokenUsage",
                "ToolCallRecord",
                "cost_text",
                "executed_token_usage",
                "session_token_usage",
            ),
            "promptkit.adapters._choice": (
                "AdapterChoice",
                "choose_adapter",
                "model_configured",
            ),
            "promptkit.adapters._settings": (
                "ModelSettings",
                "UnsupportedSettingError",
            ),
            "promptkit.adapters._stream": (
                "DEFAULT_STREAM_MAX_BYTES",
                "DEFAULT_STREAM_MAX_SECONDS",
                "StreamLimits",
            ),
            "promptkit.adapters._tools": ("MAX_TOOL_RESULT_BYTES",),
            "promptkit.adapters._tracing": ("OptimizeTrace",),
            "promptkit.adapters._wire_adapter": (
                "ProviderSdk",
                "StructuredOutputMode",
                "WireAdapter",
            ),
            "promptkit.adapters._wire_api": (
                "ModelTurn",
                "ReplyShape",
                "RequestedToolCall",
                "StreamDecoder",
                "ToolReply",
                "WireApi",
                "WireConversation",
            ),
        },
    )
