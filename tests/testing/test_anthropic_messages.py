"""Anthropic Messages (`POST /v1/messages`) through the real `anthropic.Anthropic` client."""

import json

import anthropic
import pytest

from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

MESSAGES: list[anthropic.types.MessageParam] = [{"role": "user", "content": "Say hello"}]


def _create(client: anthropic.Anthropic) -> anthropic.types.Message:
    return client.messages.create(model="claude-haiku-4-5", max_tokens=256, messages=MESSAGES)


def test_text_reply_is_one_text_block_with_end_turn(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(Reply.text("Hello from the fake."))

    message = _create(anthropic_client)

    assert [(block.type, getattr(block, "text", None)) for block in message.content] == [
        ("text", "Hello from the fake.")
    ]
    assert message.stop_reason == "end_turn"
    assert message.model == "claude-haiku-4-5"


def test_tool_calls_are_tool_use_blocks_after_the_text(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("lookup", {"query": "weather", "days": 2}),
            ToolCall("clock", '{"zone": "UTC"}'),
            text="Let me check.",
        )
    )

    message = _create(anthropic_client)

    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "text"
    uses = [block for block in message.content if block.type == "tool_use"]
    assert [(u.name, u.input) for u in uses] == [
        ("lookup", {"query": "weather", "days": 2}),
        ("clock", {"zone": "UTC"}),
    ]
    assert all(u.id.startswith("toolu_") for u in uses)
    assert uses[0].id != uses[1].id


def test_json_reply_is_a_text_block_holding_the_json(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(Reply.json({"approved": True, "score": 0.5}))

    block = _create(anthropic_client).content[0]

    assert block.type == "text"
    assert json.loads(block.text) == {"approved": True, "score": 0.5}


def test_usage_reports_cache_read_and_cache_creation_tokens(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(
        Reply.text(
            "ok",
            usage=Usage(
                input_tokens=12, output_tokens=9, cached_tokens=300, cache_creation_tokens=40
            ),
        )
    )

    usage = _create(anthropic_client).usage

    assert (usage.input_tokens, usage.output_tokens) == (12, 9)
    assert usage.cache_read_input_tokens == 300
    assert usage.cache_creation_input_tokens == 40


def test_arguments_that_are_not_a_json_object_fail_loudly(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("lookup", '{"query": "unterminated')))

    with pytest.raises(anthropic.InternalServerError, match="always sends tool input as an object"):
        _create(anthropic_client)
