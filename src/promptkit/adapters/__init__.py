"""Provider adapters: run a prompt on a model with its tools, structured output and a deadline.

`OpenAIAdapter` (Responses or Chat Completions) and `AnthropicAdapter` (Messages) share one tool
loop; `evaluate` returns a `PromptResponse` and records `PromptRendered`, `ToolInvoked` and
`PromptExecuted` in the session. The provider SDKs are imported only when a client is built.
"""

from promptkit.adapters.anthropic import AnthropicAdapter
from promptkit.adapters.base import ProviderAdapter, WireAdapter
from promptkit.adapters.loop import DEFAULT_USER_MESSAGE
from promptkit.adapters.openai import OpenAIAdapter
from promptkit.adapters.record import ExecutionRecord, write_atomically, write_manifest
from promptkit.adapters.response import PromptResponse, TokenUsage, ToolCallRecord
from promptkit.adapters.wire import (
    ModelTurn,
    RequestedToolCall,
    ToolReply,
    WireCodec,
    WireConversation,
)

__all__ = [
    "DEFAULT_USER_MESSAGE",
    "AnthropicAdapter",
    "ExecutionRecord",
    "ModelTurn",
    "OpenAIAdapter",
    "PromptResponse",
    "ProviderAdapter",
    "RequestedToolCall",
    "TokenUsage",
    "ToolCallRecord",
    "ToolReply",
    "WireAdapter",
    "WireCodec",
    "WireConversation",
    "write_atomically",
    "write_manifest",
]
