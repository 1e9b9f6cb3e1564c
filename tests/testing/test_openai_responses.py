"""The Responses API (`POST /v1/responses`) through the real `openai.OpenAI` client."""

import json

import openai
import pydantic

from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage


def test_text_reply_reaches_output_text(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("Hello from the fake."))

    response = openai_client.responses.create(model="gpt-4.1-mini", input="Say hello")

    assert response.output_text == "Hello from the fake."
    assert response.status == "completed"
    assert response.model == "gpt-4.1-mini"


def test_tool_calls_become_function_call_items(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("lookup", {"query": "weather", "days": 2}),
            ToolCall("clock", {}, call_id="call_given"),
        )
    )

    response = openai_client.responses.create(model="gpt-4.1-mini", input="Use tools")

    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("lookup", {"query": "weather", "days": 2}),
        ("clock", {}),
    ]
    assert calls[1].call_id == "call_given"
    assert calls[0].call_id != calls[1].call_id
    assert response.output_text == ""


def test_raw_string_arguments_arrive_exactly_as_given(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("lookup", '{"query": "unterminated')))

    response = openai_client.responses.create(model="gpt-4.1-mini", input="Use tools")

    call = response.output[0]
    assert call.type == "function_call"
    assert call.arguments == '{"query": "unterminated'


def test_json_reply_parses_into_the_requested_text_format(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    class Verdict(pydantic.BaseModel):
        approved: bool
        reasons: list[str]

    server.enqueue(Reply.json({"approved": True, "reasons": ["tests pass"]}))

    response = openai_client.responses.parse(
        model="gpt-4.1-mini", input="Review this", text_format=Verdict
    )

    assert response.output_parsed == Verdict(approved=True, reasons=["tests pass"])
    assert response.text is not None
    assert response.text.format is not None
    assert response.text.format.type == "json_schema"


def test_usage_reports_the_scripted_token_counts(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(
        Reply.text(
            "ok",
            usage=Usage(input_tokens=120, output_tokens=30, cached_tokens=100, reasoning_tokens=7),
        )
    )

    usage = openai_client.responses.create(model="gpt-4.1-mini", input="x").usage

    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (120, 30, 150)
    assert usage.input_tokens_details.cached_tokens == 100
    assert usage.output_tokens_details.reasoning_tokens == 7


def test_request_tools_are_echoed_in_the_response(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("ok"))

    response = openai_client.responses.create(
        model="gpt-4.1-mini",
        input="x",
        tools=[
            {
                "type": "function",
                "name": "lookup",
                "description": "Look something up.",
                "parameters": {"type": "object", "properties": {}},
                "strict": False,
            }
        ],
        tool_choice="required",
    )

    assert [tool.type for tool in response.tools] == ["function"]
    assert response.tool_choice == "required"
