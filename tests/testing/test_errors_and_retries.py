"""Scripted HTTP errors, SDK retries, delays and a script that runs out, through the real clients.

Clients here retry with `retry_after`, which sends `retry-after-ms`: both SDKs wait that long
instead of their exponential backoff (0.5 s doubling), so retry tests stay fast.
"""

from collections.abc import Iterator

import anthropic
import openai
import pytest

from promptkit.testing import FakeProviderServer, Reply

ANTHROPIC_MODEL = "claude-haiku-4-5"


@pytest.fixture
def retrying_openai(server: FakeProviderServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        api_key="sk-test-openai",
        base_url=server.openai_base_url,
        max_retries=2,
        timeout=10.0,
        _strict_response_validation=True,
    ) as client:
        yield client


@pytest.fixture
def retrying_anthropic(server: FakeProviderServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        api_key="sk-ant-test",
        base_url=server.anthropic_base_url,
        max_retries=2,
        timeout=10.0,
        _strict_response_validation=True,
    ) as client:
        yield client


def _ask_openai(client: openai.OpenAI) -> str:
    return client.responses.create(model="gpt-4.1-mini", input="x").output_text


def _ask_anthropic(client: anthropic.Anthropic) -> anthropic.types.Message:
    return client.messages.create(
        model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": "x"}]
    )


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (401, openai.AuthenticationError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
    ],
)
def test_openai_error_status_raises_the_sdk_exception_with_status_and_request_id(
    server: FakeProviderServer,
    openai_client: openai.OpenAI,
    status: int,
    error_class: type[openai.APIStatusError],
) -> None:
    server.enqueue(Reply.error(status, "scripted failure"))

    with pytest.raises(error_class) as caught:
        _ask_openai(openai_client)

    assert caught.value.status_code == status
    assert caught.value.request_id == server.requests[-1].request_id
    assert "scripted failure" in caught.value.message


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (401, anthropic.AuthenticationError),
        (429, anthropic.RateLimitError),
        (500, anthropic.InternalServerError),
    ],
)
def test_anthropic_error_status_raises_the_sdk_exception_with_status_and_request_id(
    server: FakeProviderServer,
    anthropic_client: anthropic.Anthropic,
    status: int,
    error_class: type[anthropic.APIStatusError],
) -> None:
    server.enqueue(Reply.error(status, "scripted failure"))

    with pytest.raises(error_class) as caught:
        _ask_anthropic(anthropic_client)

    assert caught.value.status_code == status
    assert caught.value.request_id == server.requests[-1].request_id
    assert caught.value.api_message == "scripted failure"


def test_openai_error_body_carries_type_and_code(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.error(429, "quota gone", error_type="insufficient_quota"))

    with pytest.raises(openai.RateLimitError) as caught:
        openai_client.chat.completions.create(
            model="llama3", messages=[{"role": "user", "content": "x"}]
        )

    assert caught.value.type == "insufficient_quota"
    assert caught.value.code == "rate_limit_exceeded"


def test_anthropic_error_type_follows_the_status_unless_given(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(Reply.error(529, "busy", error_type="overloaded_error"))

    with pytest.raises(anthropic.OverloadedError) as caught:
        _ask_anthropic(anthropic_client)

    assert caught.value.type == "overloaded_error"


def test_openai_sdk_retries_a_rate_limit_then_succeeds(
    server: FakeProviderServer, retrying_openai: openai.OpenAI
) -> None:
    server.enqueue(Reply.error(429, "slow down", retry_after=0.001), Reply.text("second try"))

    assert _ask_openai(retrying_openai) == "second try"
    assert server.request_count == 2
    assert server.pending_count == 0


def test_anthropic_sdk_retries_a_rate_limit_then_succeeds(
    server: FakeProviderServer, retrying_anthropic: anthropic.Anthropic
) -> None:
    server.enqueue(Reply.error(429, "slow down", retry_after=0.001), Reply.text("second try"))

    message = _ask_anthropic(retrying_anthropic)

    assert message.content[0].type == "text"
    assert message.content[0].text == "second try"
    assert server.request_count == 2


def test_each_retry_takes_the_next_reply_until_retries_run_out(
    server: FakeProviderServer, retrying_openai: openai.OpenAI
) -> None:
    server.enqueue(*[Reply.error(500, f"down {n}", retry_after=0.001) for n in range(3)])
    server.enqueue(Reply.text("never reached"))

    with pytest.raises(openai.InternalServerError, match="down 2"):
        _ask_openai(retrying_openai)

    assert server.request_count == 3
    assert server.pending_count == 1


def test_openai_delay_past_the_client_timeout_raises_its_timeout_error(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.delay(30.0, Reply.text("too late")))

    with pytest.raises(openai.APITimeoutError):
        openai_client.with_options(timeout=0.2).responses.create(model="gpt-4.1-mini", input="x")


def test_anthropic_delay_past_the_client_timeout_raises_its_timeout_error(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(Reply.delay(30.0, Reply.text("too late")))

    with pytest.raises(anthropic.APITimeoutError):
        _ask_anthropic(anthropic_client.with_options(timeout=0.2))


def test_delay_within_the_client_timeout_still_answers(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.delay(0.05, Reply.text("a little late")))

    assert _ask_openai(openai_client) == "a little late"


def test_empty_script_fails_loudly_and_is_not_retried(
    server: FakeProviderServer, retrying_openai: openai.OpenAI
) -> None:
    with pytest.raises(openai.InternalServerError, match="reply script ran out at request #1"):
        _ask_openai(retrying_openai)

    assert server.request_count == 1


def test_empty_script_fails_loudly_for_anthropic_too(
    server: FakeProviderServer, retrying_anthropic: anthropic.Anthropic
) -> None:
    with pytest.raises(anthropic.InternalServerError) as caught:
        _ask_anthropic(retrying_anthropic)

    assert "reply script ran out" in (caught.value.api_message or "")
    assert server.request_count == 1


def test_unknown_path_answers_not_found_naming_the_served_paths(
    server: FakeProviderServer,
) -> None:
    # A base_url without /v1 is the usual way to end up here.
    with (
        openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0) as misconfigured,
        pytest.raises(openai.NotFoundError, match="openai_base_url ends in /v1"),
    ):
        _ask_openai(misconfigured)
