"""Reply, ToolCall and Usage values: what a script may say, and that tool arguments survive every
wire format unchanged."""

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import given, settings, strategies as st

from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=5)
TOOL_NAMES = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_-]{0,30}", fullmatch=True)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeProviderServer]:
    # Module scope: hypothesis runs many examples per test and a server per example is waste.
    with FakeProviderServer() as running:
        yield running


@pytest.fixture(scope="module")
def clients(
    shared_server: FakeProviderServer,
) -> Iterator[tuple[openai.OpenAI, anthropic.Anthropic]]:
    with (
        openai.OpenAI(
            api_key="sk-test",
            base_url=shared_server.openai_base_url,
            max_retries=0,
            _strict_response_validation=True,
        ) as openai_client,
        anthropic.Anthropic(
            api_key="sk-ant-test",
            base_url=shared_server.anthropic_base_url,
            max_retries=0,
            _strict_response_validation=True,
        ) as anthropic_client,
    ):
        yield openai_client, anthropic_client


@settings(max_examples=40, deadline=None)
@given(name=TOOL_NAMES, arguments=ARGUMENTS)
def test_tool_call_arguments_arrive_unchanged_through_every_api(
    shared_server: FakeProviderServer,
    clients: tuple[openai.OpenAI, anthropic.Anthropic],
    name: str,
    arguments: dict[str, Any],
) -> None:
    openai_client, anthropic_client = clients
    shared_server.enqueue(*(Reply.tool_calls(ToolCall(name, arguments)) for _ in range(3)))

    response = openai_client.responses.create(model="gpt-4.1-mini", input="x")
    completion = openai_client.chat.completions.create(
        model="llama3", messages=[{"role": "user", "content": "x"}]
    )
    message = anthropic_client.messages.create(
        model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "x"}]
    )

    function_call = response.output[0]
    assert function_call.type == "function_call"
    assert (function_call.name, json.loads(function_call.arguments)) == (name, arguments)
    chat_call = (completion.choices[0].message.tool_calls or [])[0]
    assert chat_call.type == "function"
    assert (chat_call.function.name, json.loads(chat_call.function.arguments)) == (
        name,
        arguments,
    )
    tool_use = message.content[0]
    assert tool_use.type == "tool_use"
    assert (tool_use.name, tool_use.input) == (name, arguments)


def test_tool_call_fixes_its_arguments_when_built() -> None:
    arguments = {"path": "a.txt"}
    call = ToolCall("read", arguments)

    arguments["path"] = "b.txt"

    assert json.loads(call.arguments_json) == {"path": "a.txt"}


def test_tool_call_refuses_arguments_that_are_not_json() -> None:
    with pytest.raises(ValueError, match="ToolCall 'read': arguments are not JSON-serialisable"):
        ToolCall("read", {"when": object()})


def test_tool_calls_reply_needs_at_least_one_call() -> None:
    with pytest.raises(ValueError, match="at least one ToolCall"):
        Reply.tool_calls()


def test_error_reply_needs_an_http_error_status() -> None:
    with pytest.raises(ValueError, match="400-599"):
        Reply.error(200, "not an error")


def test_retry_after_must_be_positive_because_the_sdks_ignore_zero() -> None:
    with pytest.raises(ValueError, match="retry_after must be > 0"):
        Reply.error(429, "slow down", retry_after=0)


def test_retry_after_is_sent_in_milliseconds() -> None:
    reply = Reply.error(429, "slow down", retry_after=0.25)

    assert dict(reply.headers)["retry-after-ms"] == "250"


def test_delay_keeps_the_reply_and_adds_the_wait() -> None:
    reply = Reply.delay(1.5, Reply.text("late"))

    assert (reply.content, reply.delay_seconds) == ("late", 1.5)


def test_delay_must_be_a_finite_non_negative_number() -> None:
    with pytest.raises(ValueError, match="finite number of seconds"):
        Reply.delay(float("inf"), Reply.text("never"))


def test_usage_refuses_negative_token_counts() -> None:
    with pytest.raises(ValueError, match=r"Usage\.cached_tokens must be a non-negative int"):
        Usage(cached_tokens=-1)


def test_json_reply_refuses_values_that_are_not_json() -> None:
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        Reply.json({1, 2})
