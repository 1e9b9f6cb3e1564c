"""With a deadline, promptkit applies the SDK's retry policy itself, so no attempt starts once
the deadline has passed; through the real SDK clients against FakeProviderServer, per wire API.
"""

from __future__ import annotations

import time

import pytest

from promptkit import MarkdownSection, Prompt
from promptkit.errors import ProviderBadRequestError, ProviderServerError, ProviderTimeoutError
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply

PROMPT: Prompt[None] = Prompt(
    ns="tests/adapters",
    key="deadline-retries",
    sections=(MarkdownSection(title="Task", key="task", template="Say hello."),),
)


def _wait_for_background_work(seconds: float) -> None:
    # Long enough for an SDK retry (0.5 s backoff) of an abandoned request to have gone out.
    time.sleep(seconds)


def test_no_request_reaches_the_provider_after_the_deadline(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.delay(1.0, Reply.text("Too late.")), Reply.text("Spare."))

    with pytest.raises(ProviderTimeoutError, match="deadline"):
        make_adapter(max_retries=2).evaluate(PROMPT, session=Session(), deadline=0.2)
    _wait_for_background_work(1.5)

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
