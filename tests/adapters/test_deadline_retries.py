"""With a deadline, promptkit applies the SDK's retry policy itself, so no attempt starts once
the deadline has passed; through the real SDK clients against FakeProviderServer, per wire API.
"""

from __future__ import annotations

import threading

import pytest

from promptkit import MarkdownSection, Prompt
from promptkit.errors import (
    ProviderBadRequestError,
    ProviderRateLimitError,
    ProviderServerError,
    ProviderTimeoutError,
)
from promptkit.session import Session
from promptkit.testing import FakeClock, FakeProviderServer, Reply

PROMPT: Prompt[None] = Prompt(
    ns="tests/adapters",
    key="deadline-retries",
    sections=(MarkdownSection(title="Task", key="task", template="Say hello."),),
)


def _wait_for_abandoned_requests() -> None:
    # The caller stopped waiting at the deadline; the request's worker thread is the only thing
    # that could still send a retry. Once it has ended, nothing more can reach the provider.
    for worker in threading.enumerate():
        if worker.name == "promptkit-provider-request":
            worker.join(timeout=30)
            assert not worker.is_alive(), "the abandoned request never finished"


def test_no_request_reaches_the_provider_after_the_deadline(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.delay(1.0, Reply.text("Too late.")), Reply.text("Spare."))

    with pytest.raises(ProviderTimeoutError, match="deadline"):
        make_adapter(max_retries=2).evaluate(PROMPT, session=Session(), deadline=0.2)
    _wait_for_abandoned_requests()

    assert server.request_count == 1
    assert server.pending_count == 1


def test_retryable_failures_are_retried_within_the_deadline(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.error(429, "slow down", retry_after=0.01),
        Reply.error(503, "busy", retry_after=0.01),
        Reply.text("Hello."),
    )

    response = make_adapter(max_retries=2).evaluate(PROMPT, session=Session(), deadline=30)

    assert response.text == "Hello."
    assert server.request_count == 3


def test_retries_used_up_under_a_deadline_are_counted_in_the_error(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(*(Reply.error(500, "down", retry_after=0.01) for _ in range(3)))

    with pytest.raises(ProviderServerError, match="after 2 retries"):
        make_adapter(max_retries=2).evaluate(PROMPT, session=Session(), deadline=30)

    assert server.request_count == 3


def test_a_bad_request_is_not_retried_under_a_deadline(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.error(400, "bad field"), Reply.text("Unused."))

    with pytest.raises(ProviderBadRequestError) as raised:
        make_adapter(max_retries=2).evaluate(PROMPT, session=Session(), deadline=30)

    assert "retr" not in str(raised.value)
    assert server.request_count == 1


def test_a_retry_waits_the_pause_the_provider_asks_for(
    server: FakeProviderServer, make_adapter
) -> None:
    clock = FakeClock()
    server.enqueue(Reply.error(429, "slow down", retry_after=20), Reply.text("Hello."))

    response = make_adapter(max_retries=1, clock=clock).evaluate(
        PROMPT, session=Session(), deadline=60
    )

    assert response.text == "Hello."
    assert clock.slept == [20.0]


def test_a_retry_that_would_start_after_the_deadline_is_not_made(
    server: FakeProviderServer, make_adapter
) -> None:
    clock = FakeClock()
    server.enqueue(Reply.error(429, "slow down", retry_after=20), Reply.text("Unused."))

    with pytest.raises(ProviderRateLimitError):
        make_adapter(max_retries=1, clock=clock).evaluate(PROMPT, session=Session(), deadline=10)

    assert clock.slept == []
    assert server.request_count == 1
