"""Provider failures through the real SDK clients: retries, exhausted retries, timeouts and the
deadline, refused credentials and connections. Each becomes a typed `ProviderError` with status
and request id, never with the API key, and leaves the session consistent.
"""

import logging
import socket
import traceback
from datetime import timedelta

import pytest
import structlog
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, ProviderTimeoutError, Tool, ToolContext, ToolResult
from promptkit.errors import (
    ProviderAuthenticationError,
    ProviderBadRequestError,
    ProviderConnectionError,
    ProviderRateLimitError,
    ProviderServerError,
)
from promptkit.session import PromptExecuted, PromptRendered, Session, ToolInvoked
from promptkit.testing import FakeClock, FakeProviderServer, Reply, ToolCall

PROMPT: Prompt[None] = Prompt(
    ns="tests/adapters",
    key="errors",
    sections=(MarkdownSection(title="Task", key="task", template="Say hello."),),
)
RETRY_AFTER = 0.01


class Nap(BaseModel):
    past_deadline: bool


def nap(params: Nap, context: ToolContext) -> ToolResult:
    # The nap takes the rest of the deadline on the test's FakeClock: no real time passes.
    if params.past_deadline and isinstance(context.clock, FakeClock):
        context.clock.advance((context.remaining_s() or 0.0) + 0.01)
    return ToolResult(message="rested")


NAP_PROMPT: Prompt[None] = Prompt(
    ns="tests/adapters",
    key="nap",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Nap.",
            tools=(Tool(name="nap", description="Sleep.", params_type=Nap, handler=nap),),
        ),
    ),
)


def test_rate_limit_then_success_is_retried_by_the_sdk(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.error(429, "slow down", retry_after=RETRY_AFTER), Reply.text("hello"))

    response = make_adapter(max_retries=2).evaluate(PROMPT, session=Session())

    assert response.text == "hello"
    assert server.request_count == 2


def test_rate_limit_past_the_retries_raises_provider_rate_limit_error(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(*[Reply.error(429, "slow down", retry_after=RETRY_AFTER)] * 2)

    with pytest.raises(ProviderRateLimitError) as raised:
        make_adapter(max_retries=1).evaluate(PROMPT, session=Session())

    assert raised.value.status == 429
    assert raised.value.request_id == server.requests[-1].request_id


def test_server_errors_until_retries_run_out_raise_provider_server_error(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(*[Reply.error(500, "upstream exploded", retry_after=RETRY_AFTER)] * 3)
    session = Session()

    with pytest.raises(ProviderServerError) as raised:
        make_adapter(max_retries=2).evaluate(PROMPT, session=session)

    error = raised.value
    assert server.request_count == 3
    assert error.status == 500
    assert error.request_id == server.requests[-1].request_id
    message = str(error)
    assert "HTTP 500 after 2 retries" in message
    assert "upstream exploded" in message
    assert wire.name in message
    assert len(session.select_all(PromptRendered)) == 1
    assert session.select_all(PromptExecuted) == ()


def test_bad_request_raises_provider_bad_request_error(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.error(400, "model 'nope' does not exist"))

    with pytest.raises(ProviderBadRequestError) as raised:
        make_adapter(max_retries=2).evaluate(PROMPT, session=Session())

    assert raised.value.status == 400
    assert "model 'nope' does not exist" in str(raised.value)
    assert server.request_count == 1


def test_bad_request_message_claims_no_retries_because_none_were_made(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.error(400, "unknown parameter 'temprature'"))

    with pytest.raises(ProviderBadRequestError) as raised:
        make_adapter(max_retries=2).evaluate(PROMPT, session=Session())

    assert server.request_count == 1
    assert "HTTP 400 (request id" in str(raised.value)
    assert "retr" not in str(raised.value)


def test_rate_limit_message_counts_the_one_retry_the_sdk_made(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(*[Reply.error(429, "slow down", retry_after=RETRY_AFTER)] * 2)

    with pytest.raises(ProviderRateLimitError) as raised:
        make_adapter(max_retries=1).evaluate(PROMPT, session=Session())

    assert server.request_count == 2
    assert "HTTP 429 after 1 retry (request id" in str(raised.value)


def test_rate_limit_without_retries_allowed_claims_none(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.error(429, "slow down", retry_after=RETRY_AFTER))

    with pytest.raises(ProviderRateLimitError) as raised:
        make_adapter(max_retries=0).evaluate(PROMPT, session=Session())

    assert server.request_count == 1
    assert "HTTP 429 (request id" in str(raised.value)


def test_deadline_passed_while_waiting_raises_provider_timeout_error(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.delay(5.0, Reply.text("too late")))

    with pytest.raises(ProviderTimeoutError) as raised:
        make_adapter(max_retries=0).evaluate(PROMPT, session=Session(), deadline=0.3)

    assert "deadline of 0.3s passed" in str(raised.value)
    assert f"{wire.name} request 1" in str(raised.value)


def test_a_tool_that_runs_past_the_deadline_is_reported_as_such(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("nap", {"past_deadline": True})), Reply.text("unused"))
    session = Session()

    with pytest.raises(ProviderTimeoutError) as raised:
        make_adapter(clock=FakeClock()).evaluate(
            NAP_PROMPT, session=session, deadline=timedelta(seconds=0.5)
        )

    assert "deadline of 0.5s passed while tool 'nap' ran" in str(raised.value)
    assert server.request_count == 1
    assert len(session.select_all(ToolInvoked)) == 1


def test_client_timeout_raises_provider_timeout_error(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.delay(5.0, Reply.text("too late")))

    with pytest.raises(ProviderTimeoutError) as raised:
        make_adapter(max_retries=0, timeout=0.2).evaluate(PROMPT, session=Session())

    assert "timed out" in str(raised.value)
    assert "retr" not in str(raised.value)


@pytest.mark.parametrize("deadline", [0, -1.0, float("nan"), float("inf"), timedelta(0)])
def test_deadline_must_be_a_positive_finite_time(make_adapter, deadline: object) -> None:
    with pytest.raises(ValueError, match="deadline must be a positive, finite time"):
        make_adapter().evaluate(PROMPT, session=Session(), deadline=deadline)


def test_connection_refused_raises_provider_connection_error(make_adapter) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]

    with pytest.raises(ProviderConnectionError) as raised:
        make_adapter(base_url=f"http://127.0.0.1:{closed_port}").evaluate(PROMPT, session=Session())

    message = str(raised.value)
    assert f"at http://127.0.0.1:{closed_port}" in message
    assert "could not reach the server" in message
    assert "check that the server is running there" in message
    assert raised.value.status is None


def test_refused_key_raises_authentication_error_without_the_key_anywhere(
    wire, server: FakeProviderServer, make_adapter, caplog: pytest.LogCaptureFixture
) -> None:
    # A provider may echo the key it refused; it must not reach the message, a log or a trace.
    server.enqueue(Reply.error(401, f"Incorrect API key provided: {wire.api_key}."))
    caplog.set_level(logging.DEBUG)

    with (
        structlog.testing.capture_logs() as logs,
        pytest.raises(ProviderAuthenticationError) as raised,
    ):
        make_adapter(max_retries=2).evaluate(PROMPT, session=Session())

    error = raised.value
    assert error.status == 401
    assert error.request_id == server.requests[-1].request_id
    assert "Incorrect API key provided" in str(error)
    shown = "".join(traceback.format_exception(error)) + repr(error.args)
    assert wire.api_key not in shown
    assert wire.api_key not in caplog.text
    assert wire.api_key not in repr(logs)
    assert server.requests[-1].sent_api_key(wire.api_key)


def test_tool_handler_failure_log_carries_no_api_key(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    def leaky(params: Nap, context: ToolContext) -> ToolResult:
        raise RuntimeError(f"could not call out with {wire.api_key}")

    prompt: Prompt[None] = Prompt(
        ns="tests/adapters",
        key="leaky",
        sections=(
            MarkdownSection(
                title="T",
                key="t",
                template="Go.",
                tools=(Tool(name="leaky", description="Leaks.", params_type=Nap, handler=leaky),),
            ),
        ),
    )
    server.enqueue(
        Reply.tool_calls(ToolCall("leaky", {"past_deadline": False})), Reply.text("done")
    )

    with structlog.testing.capture_logs() as logs:
        make_adapter().evaluate(prompt, session=Session())

    assert any(entry["event"] == "tool_handler_failed" for entry in logs)
    assert wire.api_key not in repr(logs)
    assert all(wire.api_key not in request.raw_body.decode() for request in server.requests)
