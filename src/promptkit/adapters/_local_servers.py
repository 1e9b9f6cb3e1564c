"""What local and other OpenAI-compatible servers need from an adapter: no real key, where
requests go (the base URL, shown without credentials), and what to do when such a server
cannot constrain output to a JSON schema.

A server at a custom base URL (vLLM, Ollama, llama.cpp's `llama-server`, llama-cpp-python's
server, LM Studio) ignores the API key, but the OpenAI SDK refuses to build a client without
one; an adapter that builds its own client with a base URL and no key gets a placeholder, never
a key from elsewhere.

Servers word "I cannot do JSON-schema output" differently: vLLM and Ollama answer 400,
llama-cpp-python answers 500 with a request-validation error that names `response_format`. Such
a refusal is a `StructuredOutputUnsupportedError`; at a custom base URL the adapter then falls
back once to prompt-mode structured output (`SchemaFallback`), and elsewhere the error names the
option that does without the schema.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from promptkit.errors import PromptkitError, StructuredOutputUnsupportedError

LOCAL_SERVER_KEY = "not-needed"
"""The key sent to a server at a custom base URL when none is set; such servers ignore it."""

_OWN_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}

# How servers word "I cannot do JSON-schema output": vLLM, Ollama, llama.cpp and LM Studio
# each name the request field or the format they refused.
_SCHEMA_REFUSAL = re.compile(
    r"json[_ ]?schema|response_format|structured output|text\.format|output_config", re.I
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


def is_custom_base_url(url: str | None, provider: str) -> bool:
    """Whether `url` points somewhere other than the provider's own API."""
    if not url:
        return False
    try:
        host = urllib.parse.urlsplit(url).hostname or ""
    except ValueError:
        return True
    return host != _OWN_HOSTS.get(provider)


def shown_url(url: str) -> str:
    """`url` as messages show it: without user info, query and fragment, then redacted, since
    a key in a path (`/v1/sk-...`) would otherwise still reach the terminal and the logs."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL the parser accepts (a bad port, an unclosed `[`)
        return "the given base URL"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    shown = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    # Imported here: every command's parser imports this module (for the provider names), and
    # the secret patterns would delay the listing helper `optimize` starts right after parsing.
    from promptkit.secrets import redact_secrets

    return redact_secrets(shown)


def refuses_schema(status: int, detail: str) -> bool:
    """Whether an error reply (HTTP `status`, the server's `detail`) to a request that asked
    for JSON-schema output refuses that format: a 4xx, or a 500 from a server that validates
    requests late, naming the format or its field."""
    return (400 <= status < 500 or status == 500) and bool(_SCHEMA_REFUSAL.search(detail))


def prompt_mode_advice(adapter: str) -> str:
    """What to do when a server cannot constrain output to a schema, in every form the option
    takes."""
    return (
        "the server does not support JSON-schema output: use prompt-mode structured output"
        f' ({adapter}(..., structured_output="prompt") in code, --structured-output prompt on'
        ' the command line, or structured_output = "prompt" in [tool.promptkit])'
    )


class SchemaFallback:
    """One evaluation's single fallback to prompt-mode structured output, at a custom base URL.

    The first `StructuredOutputUnsupportedError` turns it on (`falls_back`), once: the request
    is sent again without the output format, and so is every later request of the evaluation;
    `on_refused` tells the adapter, so its next evaluations ask in prompt mode from the start.
    The prompt's Response Format section asks for the JSON either way, and the reply is
    validated the same way.
    """

    def __init__(self, on_refused: Callable[[StructuredOutputUnsupportedError], None]) -> None:
        self.is_active = False
        self._on_refused = on_refused

    def falls_back(self, error: PromptkitError) -> bool:
        """Whether `error` turns the fallback on now (it does once, for a refused format)."""
        if self.is_active or not isinstance(error, StructuredOutputUnsupportedError):
            return False
        self.is_active = True
        self._on_refused(error)
        return True
