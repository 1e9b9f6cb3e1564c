"""The provider wire APIs as facts, read by both sides: the adapters, which speak them, and
`FakeProviderServer`, which imitates them.

`WireFormat` describes one API (OpenAI Responses, OpenAI Chat Completions, Anthropic Messages):
its names, endpoint path, request-id header, the SDK's request type and its provider's strict
structured-output rules (`StrictDialect`). `strict_schema_problems` and `request_type_problems`
say where a request breaks them; `declared_only` cuts a value down to a request type, so a reply
replayed as input carries only what a request accepts. Adapters decide from these rules how to
shape a schema; the fake server refuses what breaks them, as the real API would.

This package imports no prompt, session or SDK code when imported (SDK types load when asked
for), so `promptkit.testing` can read it and stay importable without the prompt core.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.wire._formats import (
        CHAT_COMPLETIONS as CHAT_COMPLETIONS,
        MESSAGES as MESSAGES,
        RESPONSES as RESPONSES,
        WIRE_FORMATS as WIRE_FORMATS,
        Endpoint as Endpoint,
        WireFormat as WireFormat,
    )
    from promptkit.wire._request_types import (
        declared_only as declared_only,
        request_type_problems as request_type_problems,
    )
    from promptkit.wire._strict import (
        ANTHROPIC_STRICT as ANTHROPIC_STRICT,
        OPENAI_STRICT as OPENAI_STRICT,
        StrictDialect as StrictDialect,
        check_tool_names as check_tool_names,
        strict_schema_problems as strict_schema_problems,
        walk_schema as walk_schema,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.wire._formats": (
                "CHAT_COMPLETIONS",
                "MESSAGES",
                "RESPONSES",
                "WIRE_FORMATS",
                "Endpoint",
                "WireFormat",
            ),
            "promptkit.wire._request_types": ("declared_only", "request_type_problems"),
            "promptkit.wire._strict": (
                "ANTHROPIC_STRICT",
                "OPENAI_STRICT",
                "StrictDialect",
                "check_tool_names",
                "strict_schema_problems",
                "walk_schema",
            ),
        },
    )
