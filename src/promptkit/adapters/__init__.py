"""Provider adapters: run a prompt on a model with its tools, structured output and a deadline.

`OpenAIAdapter` (Responses or Chat Completions) and `AnthropicAdapter` (Messages) share one tool
loop; `evaluate` returns a `PromptResponse` and records `PromptRendered`, `ToolInvoked` and
`PromptExecuted` in the session. The provider SDKs are imported only when a client is built.
"""

from typing import TYPE_CHECKING

from promptkit._lazy import lazy_exports

# The SDK-backed adapters import a good deal of code; load each name only when it is used.
_EXPORTS: dict[str, str] = {
    "AnthropicAdapter": "promptkit.adapters.anthropic",
    "ProviderAdapter": "promptkit.adapters.base",
    "WireAdapter": "promptkit.adapters.base",
    "DEFAULT_USER_MESSAGE": "promptkit.adapters.loop",
    "OpenAIAdapter": "promptkit.adapters.openai",
    "ExecutionRecord": "promptkit.adapters.record",
    "write_atomically": "promptkit.durable",
    "write_manifest": "promptkit.adapters.record",
    "PromptResponse": "promptkit.adapters.response",
    "TokenUsage": "promptkit.adapters.response",
    "ToolCallRecord": "promptkit.adapters.response",
    "ModelTurn": "promptkit.adapters.wire",
    "RequestedToolCall": "promptkit.adapters.wire",
    "ToolReply": "promptkit.adapters.wire",
    "WireCodec": "promptkit.adapters.wire",
    "WireConversation": "promptkit.adapters.wire",
    "AdapterChoice": "promptkit.adapters.selection",
    "choose_adapter": "promptkit.adapters.selection",
    "ConversationMessage": "promptkit.adapters.conversation",
    "Message": "promptkit.adapters.conversation",
    "MessageToolCall": "promptkit.adapters.conversation",
    "conversation_messages": "promptkit.adapters.conversation",
    "ModelSettings": "promptkit.adapters.settings",
    "DEFAULT_PRICES": "promptkit.adapters.cost",
    "ModelPrice": "promptkit.adapters.cost",
    "PriceTable": "promptkit.adapters.cost",
    "ResponseCompleted": "promptkit.adapters.streaming",
    "StreamEvent": "promptkit.adapters.streaming",
    "TextDelta": "promptkit.adapters.streaming",
    "ToolCallFinished": "promptkit.adapters.streaming",
    "ToolCallStarted": "promptkit.adapters.streaming",
    "UsageReported": "promptkit.adapters.streaming",
    "UnsupportedSettingError": "promptkit.adapters.settings",
    "model_configured": "promptkit.adapters.selection",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from promptkit.adapters.anthropic import AnthropicAdapter as AnthropicAdapter
    from promptkit.adapters.base import (
        ProviderAdapter as ProviderAdapter,
        WireAdapter as WireAdapter,
    )
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
    from promptkit.adapters.loop import DEFAULT_USER_MESSAGE as DEFAULT_USER_MESSAGE
    from promptkit.adapters.openai import OpenAIAdapter as OpenAIAdapter
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
    from promptkit.adapters.streaming import (
        ResponseCompleted as ResponseCompleted,
        StreamEvent as StreamEvent,
        TextDelta as TextDelta,
        ToolCallFinished as ToolCallFinished,
        ToolCallStarted as ToolCallStarted,
        UsageReported as UsageReported,
    )
    from promptkit.adapters.wire import (
        ModelTurn as ModelTurn,
        RequestedToolCall as RequestedToolCall,
        ToolReply as ToolReply,
        WireCodec as WireCodec,
        WireConversation as WireConversation,
    )
    from promptkit.durable import write_atomically as write_atomically
