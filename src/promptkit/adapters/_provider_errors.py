"""SDK exceptions translated into promptkit's `ProviderError` family, with no credential inside.

Both SDKs raise the same shapes (status errors with `status_code` and `request_id`, timeouts,
connection errors, response validation errors), so one translation serves both. The provider's
own message is kept because it says what was wrong with the request, but it passes through
`redact_secrets` and has the client's own credentials cut out first: a 401 body may echo the key.

A message says how many retries were made only when the SDK really made them: the count comes
from the `x-stainless-retry-count` header both SDKs put on every attempt, read from the request
that failed last. A 400 is never retried, so its message claims no retries whatever
`max_retries` says.

The advice fits the failure: a connection error names the base URL it could not reach, a
context overflow says so rather than "check the model name", and a server's refusal of the
JSON-schema output format (`StructuredOutputUnsupportedError`) names the option that does
without it. A server's own stack trace (file paths on its machine) is cut from its message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from promptkit.adapters._local_servers import refuses_schema, shown_url
from promptkit.errors import (
    PromptkitError,
    ProviderAuthenticationError,
    ProviderBadRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderMalformedReplyError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
    StructuredOutputUnsupportedError,
)
from promptkit.secrets import redact_secrets

_MESSAGE_LIMIT = 500
_SHORTEST_SECRET = 8
RETRY_COUNT_HEADER = "x-stainless-retry-count"
# Where a server's message turns into its stack trace: Python's frames, or its header.
_SERVER_TRACE = re.compile(r'^\s*(?:File "[^"]*", line \d+|Traceback \(most recent call)', re.M)
# How servers say a request does not fit the model's context window (OpenAI and vLLM,
# llama-cpp-python, llama.cpp's llama-server, Ollama).
_CONTEXT_OVERFLOW = re.compile(
    r"context[_ ]length|context (?:size|window)|maximum context|exceed_context", re.I
)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` without any of `secrets` and without anything that looks like a credential."""
    for secret in secrets:
        if len(secret) >= _SHORTEST_SECRET:
            text = text.replace(secret, "[REDACTED]")
    return redact_secrets(text)


def client_secrets(client: Any) -> tuple[str, ...]:
    """The credentials an SDK client holds (api key, admin key, auth token), to scrub them."""
    found = (getattr(client, name, None) for name in ("api_key", "admin_api_key", "auth_token"))
    return tuple(value for value in found if isinstance(value, str))


def translate_sdk_error(
    error: BaseException,
    *,
    sdk: Any,
    base_error: type[BaseException],
    where: str,
    secrets: Iterable[str],
    base_url: str | None = None,
    schema_advice: str | None = None,
) -> PromptkitError | None:
    """The promptkit error for an SDK exception, or None when `error` is not from the SDK.

    `sdk` is the SDK module (`openai` or `anthropic`); `where` names the call, for example
    "openai responses request"; `base_url` is where the client sends requests, named when it
    cannot reach it. `schema_advice` is given when the request asked for JSON-schema output: a
    refusal of that format becomes `StructuredOutputUnsupportedError` with this advice.
    """
    secrets = tuple(secrets)
    if isinstance(error, sdk.APITimeoutError):
        return ProviderTimeoutError(
            f"{where} timed out{_retried(error)}; raise the client's timeout or the"
            " evaluation's deadline, or check the provider's status"
        )
    if isinstance(error, sdk.APIConnectionError):
        server = "the provider"
        if base_url:
            shown = shown_url(base_url)
            # `where` already names a server other than the provider's own.
            server = "the server" if shown in where else f"the server at {shown}"
        return ProviderConnectionError(
            f"{where} could not reach {server}{_retried(error)} ({type(error).__name__});"
            " check that the server is running there, that the base URL is right, and the"
            " network and any proxy settings"
        )
    if isinstance(error, sdk.APIResponseValidationError):
        return _validation_error(error, where=where, secrets=secrets)
    if isinstance(error, sdk.APIStatusError):
        return _status_error(error, where=where, secrets=secrets, schema_advice=schema_advice)
    if isinstance(error, base_error):
        detail = scrub(str(error), secrets)[:_MESSAGE_LIMIT]
        return ProviderError(f"{where} failed in the SDK: {type(error).__name__}: {detail}")
    return None


def transport_failure(error: BaseException) -> Literal["timeout", "connection"] | None:
    """What an exception of the HTTP library both SDKs send through (httpx2) says failed, or
    None when it is not one. The SDKs wrap these when sending, but the Anthropic SDK lets one
    raised while a stream is read through as it is."""
    import httpx2

    if isinstance(error, httpx2.TimeoutException):
        return "timeout"
    if isinstance(error, httpx2.TransportError):
        return "connection"
    return None


def _validation_error(
    error: Any, *, where: str, secrets: tuple[str, ...]
) -> ProviderMalformedReplyError:
    status: int = error.status_code
    sent_id = request_id(error_headers(error))
    ident = f" (request id {sent_id})" if sent_id else ""
    detail = scrub(_provider_message(error), secrets)[:_MESSAGE_LIMIT]
    return ProviderMalformedReplyError(
        f"{where}: the reply (HTTP {status}){ident} does not match the SDK's response schema:"
        f" {detail}; is the base URL an API of the right kind?",
        status=status,
        request_id=sent_id,
    )


def _status_error(
    error: Any, *, where: str, secrets: tuple[str, ...], schema_advice: str | None
) -> ProviderError:
    status: int = error.status_code
    sent_id: str | None = getattr(error, "request_id", None) or request_id(error_headers(error))
    detail = scrub(_without_server_trace(_provider_message(error)), secrets)[:_MESSAGE_LIMIT]
    tried = _retried(error)
    ident = f" (request id {sent_id})" if sent_id else ""
    kind: type[ProviderError]
    if schema_advice is not None and refuses_schema(status, detail):
        kind, advice = StructuredOutputUnsupportedError, schema_advice
    elif status in (401, 403):
        kind, advice = ProviderAuthenticationError, "check the API key and its permissions"
    elif status == 429:
        kind, advice = ProviderRateLimitError, "wait, lower the request rate or raise max_retries"
    elif status == 408:
        kind, advice = ProviderTimeoutError, "retry later or raise the timeout"
    elif status in (400, 413) and _CONTEXT_OVERFLOW.search(detail):
        kind, advice = (
            ProviderBadRequestError,
            "the prompt and its conversation do not fit the model's context window; shorten"
            " them (fewer or smaller tool results), or use a model or server with a larger"
            " context",
        )
    elif status in (400, 404, 409, 413, 422):
        kind, advice = ProviderBadRequestError, "check the model name and the request options"
    elif status >= 500:
        kind, advice = ProviderServerError, "the provider failed; retry later"
    else:
        kind, advice = ProviderError, "see the provider's message"
    return kind(
        f"{where} failed with HTTP {status}{tried}{ident}: {detail}; {advice}",
        status=status,
        request_id=sent_id,
    )


def _without_server_trace(message: str) -> str:
    """`message` up to the server's stack trace, if it quoted one, on one line: the trace only
    names files on the server's machine."""
    found = _SERVER_TRACE.search(message)
    head = message[: found.start()] if found is not None else message
    return " ".join(head.split()) or message.strip()


def _retried(error: Any) -> str:
    """`" after N retries"` when the SDK retried the failed request N > 0 times, else `""`.

    The SDK numbers each attempt in a request header; the failed request is the last attempt.
    When the header is missing (a caller may set it to something else), no count is claimed.
    """
    headers = getattr(getattr(error, "request", None), "headers", None)
    value = headers.get(RETRY_COUNT_HEADER) if headers is not None else None
    if not isinstance(value, str) or not value.isdigit() or int(value) == 0:
        return ""
    count = int(value)
    return f" after {count} {'retry' if count == 1 else 'retries'}"


def error_headers(error: BaseException) -> Any:
    """The headers of the HTTP response an SDK exception carries, or None."""
    return getattr(getattr(error, "response", None), "headers", None)


def request_id(headers: Any) -> str | None:
    """The provider's id of a request, from its response's headers (OpenAI's `x-request-id`,
    Anthropic's `request-id`), or None."""
    if headers is None:
        return None
    value = headers.get("x-request-id") or headers.get("request-id")
    return value if isinstance(value, str) else None


def _provider_message(error: Any) -> str:
    """The provider's own explanation from the error body, else the SDK's message."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        nested = body.get("error")
        inner = nested.get("message") if isinstance(nested, dict) else None
        for candidate in (body.get("message"), inner):
            if isinstance(candidate, str) and candidate:
                return candidate
    message = getattr(error, "message", None)
    return message if isinstance(message, str) else type(error).__name__
