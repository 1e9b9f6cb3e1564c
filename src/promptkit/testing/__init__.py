"""Test support for code that calls model providers: `FakeProviderServer`, a local HTTP server
speaking the OpenAI Responses, OpenAI Chat Completions and Anthropic Messages wire formats to the
real SDK clients, with scripted `Reply` values and a record of every request; and `FakeClock`,
which an adapter or a digest section takes as `clock=` so a test moves time instead of sleeping.
"""

from promptkit.clock import FakeClock
from promptkit.testing.fake_server import FakeProviderServer, RecordedRequest, Responder
from promptkit.testing.replies import Finish, Reply, ReplyKind, ToolCall, Usage
from promptkit.wire import Endpoint

__all__ = [
    "Endpoint",
    "FakeClock",
    "FakeProviderServer",
    "Finish",
    "RecordedRequest",
    "Reply",
    "ReplyKind",
    "Responder",
    "ToolCall",
    "Usage",
]
