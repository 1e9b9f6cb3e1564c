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

from promptkit.wire._formats import (
    CHAT_COMPLETIONS,
    MESSAGES,
    RESPONSES,
    WIRE_FORMATS,
    Endpoint,
    WireFormat,
)
from promptkit.wire._request_types import declared_only, request_type_problems
from promptkit.wire._strict import (
    ANTHROPIC_STRICT,
    OPENAI_STRICT,
    StrictDialect,
    check_tool_names,
    strict_schema_problems,
    walk_schema,
)

__all__ = [
    "ANTHROPIC_STRICT",
    "CHAT_COMPLETIONS",
    "MESSAGES",
    "OPENAI_STRICT",
    "RESPONSES",
    "WIRE_FORMATS",
    "Endpoint",
    "StrictDialect",
    "WireFormat",
    "check_tool_names",
    "declared_only",
    "request_type_problems",
    "strict_schema_problems",
    "walk_schema",
]
