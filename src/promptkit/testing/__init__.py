"""Test support for code that calls model providers: `FakeProviderServer`, a local HTTP server
speaking the OpenAI Responses, OpenAI Chat Completions and Anthropic Messages wire formats to the
real SDK clients, with scripted `Reply` values and a record of every request.
"""

from promptkit.testing.fake_server import FakeProviderServer, RecordedRequest, Responder
from promptkit.testing.replies import Finish, Reply, ReplyKind, ToolCall, Usage
from promptkit.testing.wire import Endpoint

__all__ = [
    "Endpoint",
    "FakeProviderServer",
    "Finish",
    "RecordedRequest",
    "Reply",
    "ReplyKind",
    "Responder",
    "ToolCall",
    "Usage",
]
