"""Choosing an adapter from a provider name and the environment, as the CLI and examples do.

`auto` takes OpenAI when `OPENAI_API_KEY` is set or a base URL is given (a local
OpenAI-compatible server needs no key), else Anthropic when `ANTHROPIC_API_KEY` is set; the
choice comes with a sentence saying why, for the user to see. When no provider is configured,
`auto` fails here; `promptkit.optimize.choose_digest_writer` falls back to the offline static
writer instead. A base
URL means an OpenAI-compatible server (vLLM, Ollama, llama.cpp server), so OpenAI is spoken
through Chat Completions there, the API those servers share. The reason shows a base URL without
its user info, query and fragment, where keys are often put; the client gets it unchanged.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from promptkit.errors import ProviderAuthenticationError, ProviderError
from promptkit.secrets import redact_secrets

if TYPE_CHECKING:
    from promptkit.adapters.base import ProviderAdapter

ProviderName = Literal["auto", "openai", "anthropic"]
PROVIDER_NAMES: tuple[str, ...] = get_args(ProviderName)

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
# The OpenAI SDK refuses to build a client without a key; local servers ignore it.
_LOCAL_SERVER_KEY = "not-needed"


@dataclass(frozen=True)
class AdapterChoice:
    """The adapter to use and one sentence saying which provider it is and why."""

    adapter: ProviderAdapter
    reason: str


def choose_adapter(
    provider: str = "auto",
    *,
    model: str | None = None,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> AdapterChoice:
    """The adapter for `provider` (`auto`, `openai` or `anthropic`).

    `model` defaults per provider; `base_url` points the SDK client at another server.
    `environ` (default `os.environ`) is where API keys are looked up; keys are never put in the
    reason or in an error message.
    """
    env = os.environ if environ is None else environ
    if provider not in PROVIDER_NAMES:
        raise ProviderError(
            f"unknown provider {provider!r}: use one of {', '.join(PROVIDER_NAMES)}"
        )
    reason = ""
    if provider == "auto":
        if not model_configured(env, base_url):
            raise ProviderAuthenticationError(
                "no model provider is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or"
                " give the base URL of a local OpenAI-compatible server (--base-url)"
            )
        provider, reason = _auto_provider(env, base_url)
    if provider == "openai":
        return _openai_choice(env, model, base_url, reason)
    return _anthropic_choice(env, model, base_url, reason)


def model_configured(env: Mapping[str, str], base_url: str | None) -> bool:
    """Whether `auto` finds a model provider in `env` (an API key) or a base URL."""
    return bool(env.get("OPENAI_API_KEY") or base_url or env.get("ANTHROPIC_API_KEY"))


def _auto_provider(env: Mapping[str, str], base_url: str | None) -> tuple[str, str]:
    if env.get("OPENAI_API_KEY"):
        return "openai", "OPENAI_API_KEY is set"
    if base_url:
        return "openai", "a base URL was given (an OpenAI-compatible server)"
    return "anthropic", "ANTHROPIC_API_KEY is set"


def _openai_choice(
    env: Mapping[str, str], model: str | None, base_url: str | None, auto_reason: str
) -> AdapterChoice:
    has_key = bool(env.get("OPENAI_API_KEY"))
    if not has_key and not base_url:
        raise ProviderAuthenticationError(
            "provider openai needs OPENAI_API_KEY in the environment, or a base URL of an"
            " OpenAI-compatible server (--base-url)"
        )
    chosen = model or DEFAULT_OPENAI_MODEL
    client_kwargs: dict[str, Any] = {}
    if base_url:
        client_kwargs["base_url"] = base_url
    if has_key:
        client_kwargs["api_key"] = env["OPENAI_API_KEY"]
    elif base_url:
        client_kwargs["api_key"] = _LOCAL_SERVER_KEY
    api: Literal["responses", "chat"] = "chat" if base_url else "responses"
    from promptkit.adapters.openai import OpenAIAdapter

    adapter = OpenAIAdapter(model=chosen, api=api, client_kwargs=client_kwargs)
    where = f" at {_shown_url(base_url)} (Chat Completions)" if base_url else ""
    reason = f"openai model {chosen}{where}"
    return AdapterChoice(
        adapter, f"auto chose {reason}, as {auto_reason}" if auto_reason else reason
    )


def _anthropic_choice(
    env: Mapping[str, str], model: str | None, base_url: str | None, auto_reason: str
) -> AdapterChoice:
    if not env.get("ANTHROPIC_API_KEY"):
        raise ProviderAuthenticationError(
            "provider anthropic needs ANTHROPIC_API_KEY in the environment"
        )
    chosen = model or DEFAULT_ANTHROPIC_MODEL
    client_kwargs: dict[str, Any] = {"api_key": env["ANTHROPIC_API_KEY"]}
    if base_url:
        client_kwargs["base_url"] = base_url
    from promptkit.adapters.anthropic import AnthropicAdapter

    adapter = AnthropicAdapter(model=chosen, client_kwargs=client_kwargs)
    where = f" at {_shown_url(base_url)}" if base_url else ""
    reason = f"anthropic model {chosen}{where}"
    return AdapterChoice(
        adapter, f"auto chose {reason}, as {auto_reason}" if auto_reason else reason
    )


def _shown_url(url: str) -> str:
    """`url` as the reason shows it: without user info, query and fragment, then redacted, since
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
    shown = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return redact_secrets(shown)
