"""What local and other OpenAI-compatible servers need from an adapter: no real key, and a
pointer to `structured_output="prompt"` when the server cannot constrain output to a schema.

A server at a custom base URL (vLLM, Ollama, llama.cpp server, LM Studio) ignores the API key,
but the OpenAI SDK refuses to build a client without one; an adapter that builds its own client
with a base URL and no key gets a placeholder, never a key from elsewhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from promptkit.errors import PromptkitError, ProviderBadRequestError

LOCAL_SERVER_KEY = "not-needed"
"""The key sent to a server at a custom base URL when none is set; such servers ignore it."""

# How servers word "I cannot do JSON-schema output": vLLM, Ollama, llama.cpp and LM Studio
# each name the request field or the format they refused.
_SCHEMA_REFUSAL = re.compile(
    r"json[_ ]?schema|response_format|structured output|text\.format", re.I
)


def with_local_server_key(
    kwargs: Mapping[str, Any], *, key_variable: str, url_variable: str
) -> dict[str, Any]:
    """`kwargs` for an SDK client, with the placeholder key added when a base URL is set (in
    `kwargs` or `url_variable`) and no key is (in `kwargs` or `key_variable`)."""
    built = dict(kwargs)
    has_url = bool(built.get("base_url") or os.environ.get(url_variable))
    has_key = bool(built.get("api_key") or os.environ.get(key_variable))
    if has_url and not has_key:
        built["api_key"] = LOCAL_SERVER_KEY
    return built


def with_schema_hint(
    translated: PromptkitError | None, *, asks_for_schema: bool, adapter: str
) -> PromptkitError | None:
    """`translated`, or when it is a 400 refusing the JSON-schema output format a request asked
    for, the same error saying how to do without it."""
    if (
        not asks_for_schema
        or not isinstance(translated, ProviderBadRequestError)
        or not _SCHEMA_REFUSAL.search(str(translated))
    ):
        return translated
    return ProviderBadRequestError(
        f"{translated}. The server seems not to support JSON-schema output: create the adapter"
        f' with {adapter}(..., structured_output="prompt") so the prompt\'s Response Format'
        " section asks for the JSON instead",
        status=translated.status,
        request_id=translated.request_id,
    )
