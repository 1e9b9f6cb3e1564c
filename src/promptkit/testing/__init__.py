"""Test support for code that calls model providers: `FakeProviderServer`, a local HTTP server
speaking the OpenAI Responses, OpenAI Chat Completions and Anthropic Messages wire formats to the
real SDK clients, with scripted `Reply` values and a record of every request, whose Chat
Completions can behave like an OpenAI-compatible local server (`ServerProfile`); reply scripts
(`load_reply_script`: which request gets which reply, from a YAML or JSON file); and `FakeClock`,
which an adapter or a digest section takes as `clock=` so a test moves time instead of sleeping;
and `PostgresServer`, a throwaway PostgreSQL server in a temporary folder for the database
stores.

Every module of this package is private; the names below are its surface. It imports no prompt,
session or adapter code, so users' tests can use it with any of them.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.clock import FakeClock as FakeClock
    from promptkit.testing._fake_server import (
        FakeProviderServer as FakeProviderServer,
        RecordedRequest as RecordedRequest,
        Responder as Responder,
    )
    from promptkit.testing._postgres import (
        PostgresServer as PostgresServer,
        PostgresServerError as PostgresServerError,
    )
    from promptkit.testing._profile import ServerProfile as ServerProfile
    from promptkit.testing._replies import (
        Finish as Finish,
        Reply as Reply,
        ReplyKind as ReplyKind,
        StreamFault as StreamFault,
        ToolCall as ToolCall,
        Usage as Usage,
    )
    from promptkit.testing._script import (
        ReplyScript as ReplyScript,
        ReplyScriptError as ReplyScriptError,
        ScriptRule as ScriptRule,
        load_reply_script as load_reply_script,
        reply_script_from as reply_script_from,
    )
    from promptkit.wire import Endpoint as Endpoint
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.clock": ("FakeClock",),
            "promptkit.testing._fake_server": (
                "FakeProviderServer",
                "RecordedRequest",
                "Responder",
            ),
            "promptkit.testing._postgres": ("PostgresServer", "PostgresServerError"),
            "promptkit.testing._profile": ("ServerProfile",),
            "promptkit.testing._replies": (
                "Finish",
                "Reply",
                "ReplyKind",
                "StreamFault",
                "ToolCall",
                "Usage",
            ),
            "promptkit.testing._script": (
                "ReplyScript",
                "ReplyScriptError",
                "ScriptRule",
                "load_reply_script",
                "reply_script_from",
            ),
            "promptkit.wire": ("Endpoint",),
        },
    )
