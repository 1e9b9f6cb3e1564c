"""Test support for code that calls model providers: `FakeProviderServer`, a local HTTP server
speaking the OpenAI Responses, OpenAI Chat Completions and Anthropic Messages wire formats to the
real SDK clients, with scripted `Reply` values and a record of every request; reply scripts
(`load_reply_script`: which request gets which reply, from a YAML or JSON file); and `FakeClock`,
which an adapter or a digest section takes as `clock=` so a test moves time instead of sleeping.

Every module of this package is private; the names below are its surface. It imports no prompt,
session or adapter code, so users' tests can use it with any of them.
"""

from promptkit.clock import FakeClock
from promptkit.testing._fake_server import FakeProviderServer, RecordedRequest, Responder
from promptkit.testing._replies import Finish, Reply, ReplyKind, ToolCall, Usage
from promptkit.testing._script import (
    ReplyScript,
    ReplyScriptError,
    ScriptRule,
    load_reply_script,
    reply_script_from,
)
from promptkit.wire import Endpoint

__all__ = [
    "Endpoint",
    "FakeClock",
    "FakeProviderServer",
    "Finish",
    "RecordedRequest",
    "Reply",
    "ReplyKind",
    "ReplyScript",
    "ReplyScriptError",
    "Responder",
    "ScriptRule",
    "ToolCall",
    "Usage",
    "load_reply_script",
    "reply_script_from",
]
