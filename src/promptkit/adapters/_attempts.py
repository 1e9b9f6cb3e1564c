"""The attempts of one request under a deadline, with the SDKs' retry policy applied here.

Without a deadline the SDK retries on its own. With one, a blocking request runs on a worker
thread the caller stops waiting for when the deadline passes; if the SDK kept retrying there,
requests would still reach the provider after the deadline. So each attempt is sent with the
SDK's retries off, and this loop retries what the SDK would (408, 409, 429, 5xx, timeouts and
connection errors, unless the provider says `x-should-retry: false`), with the SDK's backoff or
the provider's `retry-after`, up to the client's `max_retries`, and never starts an attempt
once the deadline has passed.
"""

from __future__ import annotations

import contextvars
import random
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from promptkit.adapters._deadline import Deadline
from promptkit.adapters._provider_errors import RETRY_COUNT_HEADER, error_headers
from promptkit.logging import get_logger

T = TypeVar("T")

_log = get_logger("promptkit.adapters")

_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_LONGEST_RETRY_AFTER_S = 60.0


# The two deadline signals never reach a caller: the transport turns each into the
# evaluation's ProviderTimeoutError, so they stay outside the error hierarchy and private.
class _DeadlinePassedError(Exception):
    """The deadline passed before the request could be answered or attempted again."""


Send = Callable[[Any, Mapping[str, Any], float | None], Any]
"""`send(client, request, timeout)`: one attempt (a wire API's `create`, or opening a stream)."""


def send_until_deadline(
    send: Send,
    client: Any,
    request: Mapping[str, Any],
    deadline: Deadline,
    *,
    is_connection_error: Callable[[BaseException], bool],
    is_refusal: Callable[[BaseException], bool] = lambda error: False,
) -> Any:
    """The reply to `request`, retried like the SDK would while the deadline allows; an error
    `is_refusal` recognises (a refused request, whatever its status) is never retried."""
    max_retries = int(getattr(client, "max_retries", 0) or 0)
    attempt = 0
    while True:
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0.0:
            raise _DeadlinePassedError
        # The retry-count header carries the SDK's own count on, which error messages report.
        counted = {**request, "extra_headers": {RETRY_COUNT_HEADER: str(attempt)}}
        try:
            return send(client.with_options(max_retries=0), counted, remaining)
        except Exception as error:
            if (
                attempt >= max_retries
                or not _is_retryable(error, is_connection_error)
                or is_refusal(error)
            ):
                raise
            remaining = deadline.remaining()
            pause = retry_pause(error, attempt)
            if remaining is not None and pause >= remaining:
                raise
            # Said, not silent: a model that timed out is about to be asked again from the start.
            _log.warning(
                "provider_request_retried",
                attempt=attempt + 1,
                of=max_retries,
                pause_s=round(pause, 3),
                remaining_s=None if remaining is None else round(remaining, 1),
                error_type=type(error).__name__,
            )
            deadline.clock.sleep(pause)
            attempt += 1


def retry_pause(error: BaseException, attempt: int) -> float:
    """Seconds to wait before attempt `attempt + 1`: the provider's `retry-after`, or backoff."""
    headers = error_headers(error)
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        try:
            seconds = float(value) * scale if value is not None else 0.0
        except ValueError:
            continue
        if 0.0 < seconds <= _LONGEST_RETRY_AFTER_S:
            return seconds
    # The SDKs' own policy: 0.5 s doubling per retry, capped at 8 s, minus up to 25% jitter.
    return min(0.5 * 2.0**attempt, 8.0) * (1.0 - 0.25 * random.random())


def _is_retryable(
    error: BaseException, is_connection_error: Callable[[BaseException], bool]
) -> bool:
    headers = error_headers(error)
    should_retry = headers.get("x-should-retry") if headers is not None else None
    if should_retry in ("true", "false"):
        return bool(should_retry == "true")
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status in _RETRYABLE_STATUSES or status >= 500
    return is_connection_error(error)


class _DeadlineReachedError(Exception):
    """The caller stopped waiting for a request because the evaluation's deadline passed."""


def call_within(call: Callable[[], T], timeout: float) -> T:
    """`call()` on a worker thread, waiting at most `timeout` seconds for it.

    A blocking socket read cannot be interrupted from another thread, so the caller stops
    waiting instead; the abandoned attempt still ends by itself, because its timeout is the time
    that was left, and no further attempt starts (`send_until_deadline`).
    """
    outcome: Future[T] = Future()

    def run() -> None:
        try:
            outcome.set_result(call())
        except BaseException as error:
            outcome.set_exception(error)

    context = contextvars.copy_context()
    worker = threading.Thread(
        target=context.run, args=(run,), name="promptkit-provider-request", daemon=True
    )
    worker.start()
    try:
        return outcome.result(timeout=timeout)
    except TimeoutError:
        if outcome.done():
            raise
        raise _DeadlineReachedError from None
