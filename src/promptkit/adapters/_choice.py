"""Choosing an adapter from a provider name and the environment, as the CLI and examples do.

`auto` takes OpenAI when `OPENAI_API_KEY` is set, a base URL is given or `OPENAI_BASE_URL` is
set (a local OpenAI-compatible server needs no key), else Anthropic when `ANTHROPIC_API_KEY` or
`ANTHROPIC_BASE_URL` is set; the choice comes with a sentence saying which model answers where
(the server and the wire API) and why. When no provider is configured,
`auto` fails here; `promptkit.optimize.choose_digest_writer` falls back to the offline static
writer instead. A base
URL means an OpenAI-compatible server (vLLM, Ollama, llama.cpp server), so OpenAI is spoken
through Chat Completions there, the API those servers share. The reason shows a base URL without
its user info, query and fragment, where keys are often put; the client gets it unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from promptkit.adapters._local_servers import LOCAL_SERVER_KEY, is_custom_base_url, shown_url
from promptkit.errors import ProviderAuthenticationError, ProviderError

if TYPE_CHECKING:
    from promptkit.adapters._provider import ProviderAdapter

ProviderName = Literal["auto", "openai", "anthropic"]
PROVIDER_NAMES: tuple[str, ...] = get_args(ProviderName)

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
OPENAI_APIS = ("responses", "chat")
STRUCTURED_OUTPUT_MODES = ("native", "prompt")
_API_TITLES = {"responses": "Responses", "chat": "Chat Completions"}
_CONFIGURING_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
)


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
    api: str | None = None,
    environ: Mapping[str, str] | None = None,
    structured_output: str = "native",
) -> AdapterChoice:
    """The adapter for `provider` (`auto`, `openai` or `anthropic`).

    `model` defaults per provider, except at a custom base URL, which serves its own models
    and needs `model` named. `base_url` points the SDK client at another server; without it
    `OPENAI_BASE_URL` or `ANTHROPIC_BASE_URL` does. `api` picks OpenAI's wire API (`responses`
    or `chat`; default `chat` at a custom base URL, the API local servers share). `environ`
    (default `os.environ`) is where keys and base URLs are looked up; a server at a custom base
    URL gets a placeholder key when none is set. `structured_output` (`native` or `prompt`) is
    the adapter's structured-output mode; the reason mentions `prompt`. Keys are never put in
    the reason or in an error message.
    """
    env = os.environ if environ is None else environ
    if provider not in PROVIDER_NAMES:
        raise ProviderError(
            f"unknown provider {provider!r}: use one of {', '.join(PROVIDER_NAMES)}"
        )
    if api is not None and api not in OPENAI_APIS:
        raise ProviderError(f"unknown API {api!r}: use one of {', '.join(OPENAI_APIS)}")
    if structured_output not in STRUCTURED_OUTPUT_MODES:
        raise ProviderError(
            f"unknown structured-output mode {structured_output!r}: use one of"
            f" {', '.join(STRUCTURED_OUTPUT_MODES)}"
        )
    reason = ""
    if provider == "auto":
        if not model_configured(env, base_url):
            raise ProviderAuthenticationError(
                "no model provider is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or"
                " OPENAI_BASE_URL (or --base-url) for a local OpenAI-compatible server"
            )
        provider, reason = _auto_provider(env, base_url)
    if provider == "openai":
        choice = _openai_choice(env, model, base_url, api, reason, structured_output)
        return _with_mode(choice, structured_output)
    if api is not None:
        raise ProviderError(
            f"--api {api} chooses between OpenAI's Responses and Chat Completions APIs; Anthropic"
            " speaks only Messages, so leave --api out"
        )
    choice = _anthropic_choice(env, model, base_url, reason, structured_output)
    return _with_mode(choice, structured_output)


def model_configured(env: Mapping[str, str], base_url: str | None) -> bool:
    """Whether `auto` finds a model provider in `env` (an API key or a base URL) or a base URL
    was given."""
    return bool(base_url) or any(env.get(name) for name in _CONFIGURING_VARIABLES)


def _auto_provider(env: Mapping[str, str], base_url: str | None) -> tuple[str, str]:
    if env.get("OPENAI_API_KEY"):
        return "openai", "OPENAI_API_KEY is set"
    if base_url:
        return "openai", "a base URL was given (an OpenAI-compatible server)"
    if env.get("OPENAI_BASE_URL"):
        return "openai", "OPENAI_BASE_URL is set"
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic", "ANTHROPIC_API_KEY is set"
    return "anthropic", "ANTHROPIC_BASE_URL is set"


def _served_model(provider: str, model: str | None, url: str | None) -> str:
    if model:
        return model
    if is_custom_base_url(url, provider):
        raise ProviderError(
            f"the server at {shown_url(url or '')} serves its own models, so promptkit cannot"
            f" guess one: name the served model with --model (model= in the library), for"
            " example --model llama3.1:8b"
        )
    return DEFAULT_OPENAI_MODEL if provider == "openai" else DEFAULT_ANTHROPIC_MODEL


def _openai_choice(
    env: Mapping[str, str],
    model: str | None,
    base_url: str | None,
    api: str | None,
    auto_reason: str,
    structured_output: Any,
) -> AdapterChoice:
    url = base_url or env.get("OPENAI_BASE_URL") or None
    has_key = bool(env.get("OPENAI_API_KEY"))
    if not has_key and not url:
        raise ProviderAuthenticationError(
            "provider openai needs OPENAI_API_KEY in the environment, or the base URL of an"
            " OpenAI-compatible server (OPENAI_BASE_URL or --base-url)"
        )
    chosen = _served_model("openai", model, url)
    client_kwargs: dict[str, Any] = {}
    if url:
        client_kwargs["base_url"] = url
    client_kwargs["api_key"] = env["OPENAI_API_KEY"] if has_key else LOCAL_SERVER_KEY
    wire_api: Literal["responses", "chat"] = (
        "chat"
        if api == "chat" or (api is None and is_custom_base_url(url, "openai"))
        else "responses"
    )
    from promptkit.adapters._openai import OpenAIAdapter

    adapter = OpenAIAdapter(
        model=chosen,
        api=wire_api,
        client_kwargs=client_kwargs,
        structured_output=structured_output,
    )
    shown = shown_url(url or "https://api.openai.com/v1")
    reason = f"openai model {chosen} at {shown} ({_API_TITLES[wire_api]})"
    return AdapterChoice(
        adapter, f"auto chose {reason}, as {auto_reason}" if auto_reason else reason
    )


def _anthropic_choice(
    env: Mapping[str, str],
    model: str | None,
    base_url: str | None,
    auto_reason: str,
    structured_output: Any,
) -> AdapterChoice:
    url = base_url or env.get("ANTHROPIC_BASE_URL") or None
    has_key = bool(env.get("ANTHROPIC_API_KEY"))
    if not has_key and not url:
        raise ProviderAuthenticationError(
            "provider anthropic needs ANTHROPIC_API_KEY in the environment, or the base URL of"
            " an Anthropic-compatible server (ANTHROPIC_BASE_URL or --base-url)"
        )
    chosen = _served_model("anthropic", model, url)
    client_kwargs: dict[str, Any] = {
        "api_key": env["ANTHROPIC_API_KEY"] if has_key else LOCAL_SERVER_KEY
    }
    if url:
        client_kwargs["base_url"] = url
    from promptkit.adapters._anthropic import AnthropicAdapter

    adapter = AnthropicAdapter(
        model=chosen, client_kwargs=client_kwargs, structured_output=structured_output
    )
    reason = f"anthropic model {chosen} at {shown_url(url or 'https://api.anthropic.com')}"
    return AdapterChoice(
        adapter, f"auto chose {reason}, as {auto_reason}" if auto_reason else reason
    )


def _with_mode(choice: AdapterChoice, structured_output: str) -> AdapterChoice:
    if structured_output == "native":
        return choice
    return AdapterChoice(
        choice.adapter, f"{choice.reason}; structured output asked for in the prompt"
    )
