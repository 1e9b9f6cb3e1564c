"""Provider adapters: run a prompt on a model with its tools, structured output and a deadline.

`OpenAIAdapter` (Responses or Chat Completions) and `AnthropicAdapter` (Messages) share one tool
loop; `evaluate` returns a `PromptResponse` and records `PromptRendered`, `ToolInvoked` and
`PromptExecuted` in the session. The provider SDKs are imported only when a client is built.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.adapters._anthropic import AnthropicAdapter as AnthropicAdapter
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
    from promptkit.adapters._tools import MAX_TOOL_RESULT_BYTES as MAX_TOOL_RESULT_BYTES
    from promptkit.adapters._wire_adapter import WireAdapter as WireAdapter
    from promptkit.adapters._wire_api import (
        ModelTurn as ModelTurn,
        RequestedToolCall as RequestedToolCall,
        ToolReply as ToolReply,
        WireApi as WireApi,
        WireConversation as WireConversation,
    )
    from promptkit.adapters.base import ProviderAdapter as ProviderAdapter
    from promptkit.adapters.conversation import (
        ConversationMessage as ConversationMessage,
        Message as Message,
        MessageToolCall as MessageToolCall,
        conversation_messages as conversation_messages,
    )
    from promptkit.adapters.cost import (
        DEFAULT_PRICES as DEFAULT_PRICES,
        ModelPrice as ModelPrice,
        PriceTable as PriceTable,
    )
    from promptkit.adapters.record import (
        ExecutionRecord as ExecutionRecord,
        write_manifest as write_manifest,
    )
    from promptkit.adapters.response import (
        PromptResponse as PromptResponse,
        TokenUsage as TokenUsage,
        ToolCallRecord as ToolCallRecord,
    )
    from promptkit.adapters.selection import (
        AdapterChoice as AdapterChoice,
        choose_adapter as choose_adapter,
        model_configured as model_configured,
    )
    from promptkit.adapters.settings import (
        ModelSettings as ModelSettings,
        UnsupportedSettingError as UnsupportedSettingError,
    )
    from promptkit.durable import write_atomically as write_atomically
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.adapters._anthropic": ("AnthropicAdapter",),
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
            "promptkit.adapters._tools": ("MAX_TOOL_RESULT_BYTES",),
            "promptkit.adapters._wire_adapter": ("WireAdapter",),
            "promptkit.adapters._wire_api": (
                "ModelTurn",
                "RequestedToolCall",
                "ToolReply",
                "WireApi",
                "WireConversation",
            ),
            "promptkit.adapters.base": ("ProviderAdapter",),
            "promptkit.adapters.conversation": (
                "ConversationMessage",
                "Message",
                "MessageToolCall",
                "conversation_messages",
            ),
            "promptkit.adapters.cost": ("DEFAULT_PRICES", "ModelPrice", "PriceTable"),
            "promptkit.adapters.record": ("ExecutionRecord", "write_manifest"),
            "promptkit.adapters.response": ("PromptResponse", "TokenUsage", "ToolCallRecord"),
            "promptkit.adapters.selection": ("AdapterChoice", "choose_adapter", "model_configured"),
            "promptkit.adapters.settings": ("ModelSettings", "UnsupportedSettingError"),
            "promptkit.durable": ("write_atomically",),
        },
    )
