"""Chat Completions (`POST /v1/chat/completions`) through the real `openai.OpenAI` client."""

import json

import openai
import pydantic

from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

MESSAGES: list[openai.types.chat.ChatCompletionMessageParam] = [
    {"role": "user", "content": "Say hello"}
]


def test_text_reply_is_the_message_content_with_stop(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("Hello from the fake."))

    completion = openai_client.chat.completions.create(model="llama3", messages=MESSAGES)

    choice = completion.choices[0]
    assert choice.message.content == "Hello from the fake."
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert completion.model == "llama3"


def test_tool_calls_are_function_tool_calls_with_tool_calls_finish_reason(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("lookup", {"query": "weather"}), ToolCall("clock")))

    completion = openai_client.chat.completions.create(model="llama3", messages=MESSAGES)

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls or []
    assert [
        (c.type, c.function.name, json.loads(c.function.arguments))
        for c in calls
        if c.type == "function"
    ] == [("function", "lookup", {"query": "weather"}), ("function", "clock", {})]
    assert len({c.id for c in calls}) == 2


def test_raw_string_arguments_arrive_exactly_as_given(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("lookup", "not json at all")))

    completion = openai_client.chat.completions.create(model="llama3", messages=MESSAGES)

    calls = completion.choices[0].message.tool_calls or []
    assert calls[0].type == "function"
    assert calls[0].function.arguments == "not json at all"


def test_json_reply_parses_with_response_format(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    class Verdict(pydantic.BaseModel):
        approved: bool

    server.enqueue(Reply.json({"approved": False}))

    completion = openai_client.chat.completions.parse(
        model="llama3", messages=MESSAGES, response_format=Verdict
    )

    assert completion.choices[0].message.parsed == Verdict(approved=False)


def test_usage_reports_prompt_completion_and_cached_tokens(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(
        Reply.text("ok", usage=Usage(input_tokens=50, output_tokens=8, cached_tokens=32))
    )

    usage = openai_client.chat.completions.create(model="llama3", messages=MESSAGES).usage

    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (50, 8, 58)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 32
