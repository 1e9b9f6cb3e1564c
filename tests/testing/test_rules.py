"""FakeProviderServer refuses, with a 400 in the provider's own error shape, each request the real
API refuses: one test per rule, through the real SDK clients."""

import json
import urllib.error
import urllib.request
from typing import Any

import anthropic
import openai
import pytest

from promptkit.testing import FakeProviderServer, Reply

ANTHROPIC_MODEL = "claude-haiku-4-5"
OPENAI_MODEL = "gpt-4.1-mini"

DESCRIBED_REF: dict[str, Any] = {
    "type": "object",
    "properties": {"author": {"$ref": "#/$defs/Author", "description": "Who wrote it."}},
    "required": ["author"],
    "additionalProperties": False,
    "$defs": {
        "Author": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": False,
        }
    },
}


def strict_object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def openai_refusal(call: Any) -> str:
    with pytest.raises(openai.BadRequestError) as caught:
        call()
    assert caught.value.status_code == 400
    assert isinstance(caught.value.body, dict) and "message" in caught.value.body
    return str(caught.value.body["message"])


def anthropic_refusal(call: Any) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        call()
    assert caught.value.status_code == 400
    body = caught.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    return str(body["error"]["message"])


def test_openai_strict_tool_with_a_described_ref_is_refused(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    message = openai_refusal(
        lambda: openai_client.responses.create(
            model=OPENAI_MODEL,
            input="hi",
            tools=[{"type": "function", "name": "f", "parameters": DESCRIBED_REF, "strict": True}],
        )
    )

    assert "$ref cannot have sibling keywords" in message
    assert server.pending_count == 0


def test_openai_strict_format_with_an_unsupported_string_format_is_refused(
    openai_client: openai.OpenAI,
) -> None:
    schema = strict_object(homepage={"type": "string", "format": "uri"})

    message = openai_refusal(
        lambda: openai_client.chat.completions.create(
            model=OPENAI_MODEL,
            messages=[{"role": "user", "content": "hi"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "Page", "schema": schema, "strict": True},
            },
        )
    )

    assert "format 'uri' is not supported" in message


def test_openai_strict_schema_with_an_optional_property_is_refused(
    openai_client: openai.OpenAI,
) -> None:
    schema = {**strict_object(a={"type": "string"}), "required": []}

    message = openai_refusal(
        lambda: openai_client.responses.create(
            model=OPENAI_MODEL,
            input="hi",
            text={"format": {"type": "json_schema", "name": "A", "schema": schema, "strict": True}},
        )
    )

    assert "every property must be required" in message


def test_openai_strict_tuple_is_refused(openai_client: openai.OpenAI) -> None:
    pair = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}

    message = openai_refusal(
        lambda: openai_client.responses.create(
            model=OPENAI_MODEL,
            input="hi",
            tools=[
                {
                    "type": "function",
                    "name": "f",
                    "parameters": strict_object(pair=pair),
                    "strict": True,
                }
            ],
        )
    )

    assert "keyword 'prefixItems' is not supported" in message


def test_openai_tool_name_outside_the_pattern_is_refused(openai_client: openai.OpenAI) -> None:
    message = openai_refusal(
        lambda: openai_client.responses.create(
            model=OPENAI_MODEL,
            input="hi",
            tools=[{"type": "function", "name": "read.file", "parameters": {}, "strict": False}],
        )
    )

    assert "does not match pattern" in message


def test_anthropic_tool_name_outside_the_pattern_is_refused(
    anthropic_client: anthropic.Anthropic,
) -> None:
    message = anthropic_refusal(
        lambda: anthropic_client.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"name": "read/file", "input_schema": {"type": "object"}}],
        )
    )

    assert "tools.0.custom.name: String should match pattern" in message


def test_anthropic_output_format_with_more_than_16_unions_is_refused(
    anthropic_client: anthropic.Anthropic,
) -> None:
    nullable = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    schema = strict_object(**{f"f{index}": nullable for index in range(17)})

    message = anthropic_refusal(
        lambda: anthropic_client.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
            output_config={"format": {"type": "json_schema", "schema": schema}},
        )
    )

    assert "17 parameters with union types" in message


def test_anthropic_output_format_with_a_numeric_bound_is_refused(
    anthropic_client: anthropic.Anthropic,
) -> None:
    schema = strict_object(count={"type": "integer", "minimum": 1})

    message = anthropic_refusal(
        lambda: anthropic_client.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
            output_config={"format": {"type": "json_schema", "schema": schema}},
        )
    )

    assert "keyword 'minimum' is not supported" in message


def test_responses_function_output_without_its_call_is_refused(
    openai_client: openai.OpenAI,
) -> None:
    message = openai_refusal(
        lambda: openai_client.responses.create(
            model=OPENAI_MODEL,
            input=[{"type": "function_call_output", "call_id": "call_missing", "output": "4"}],
        )
    )

    assert "no tool call found for function call output with call_id 'call_missing'" in message


def test_chat_tool_message_without_a_preceding_call_is_refused(
    openai_client: openai.OpenAI,
) -> None:
    message = openai_refusal(
        lambda: openai_client.chat.completions.create(
            model=OPENAI_MODEL,
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "call_missing", "content": "4"},
            ],
        )
    )

    assert "must be a response to a preceding message with 'tool_calls'" in message


def test_chat_tool_call_left_unanswered_is_refused(openai_client: openai.OpenAI) -> None:
    call: Any = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}

    message = openai_refusal(
        lambda: openai_client.chat.completions.create(
            model=OPENAI_MODEL,
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "user", "content": "well?"},
            ],
        )
    )

    assert "must be followed by tool messages" in message


def test_anthropic_tool_result_without_its_tool_use_is_refused(
    anthropic_client: anthropic.Anthropic,
) -> None:
    message = anthropic_refusal(
        lambda: anthropic_client.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=64,
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "4"}],
                }
            ],
        )
    )

    assert "unexpected tool_use_id found in tool_result blocks: toolu_x" in message


def test_anthropic_tool_use_without_a_result_right_after_is_refused(
    anthropic_client: anthropic.Anthropic,
) -> None:
    message = anthropic_refusal(
        lambda: anthropic_client.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=64,
            messages=[
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
                },
                {"role": "user", "content": "well?"},
            ],
        )
    )

    assert "tool_use ids were found without tool_result blocks immediately after" in message


def test_anthropic_error_result_without_content_is_refused(
    anthropic_client: anthropic.Anthropic,
) -> None:
    message = anthropic_refusal(
        lambda: anthropic_client.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=64,
            messages=[
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": "",
                            "is_error": True,
                        }
                    ],
                },
            ],
        )
    )

    assert "content cannot be empty if `is_error` is true" in message


def test_anthropic_request_without_max_tokens_is_refused(server: FakeProviderServer) -> None:
    request = urllib.request.Request(
        f"{server.anthropic_base_url}/v1/messages",
        data=json.dumps(
            {"model": ANTHROPIC_MODEL, "messages": [{"role": "user", "content": "hi"}]}
        ).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )

    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10.0)

    assert caught.value.code == 400
    error = json.loads(caught.value.read())["error"]
    assert error["type"] == "invalid_request_error"
    assert "missing required parameter 'max_tokens'" in error["message"]


def test_reasoning_replayed_without_encrypted_content_under_store_false_is_refused(
    openai_client: openai.OpenAI,
) -> None:
    message = openai_refusal(
        lambda: openai_client.responses.create(
            model=OPENAI_MODEL,
            store=False,
            input=[
                {"role": "user", "content": "hi"},
                {"type": "reasoning", "id": "rs_1", "summary": []},
            ],
        )
    )

    assert "items are not persisted when store is false" in message


def test_a_request_that_keeps_the_rules_takes_its_scripted_reply(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("fine"))
    schema = strict_object(name={"type": "string"})

    response = openai_client.responses.create(
        model=OPENAI_MODEL,
        input="hi",
        text={"format": {"type": "json_schema", "name": "N", "schema": schema, "strict": True}},
    )

    assert response.output_text == "fine"


def test_a_key_the_sdk_request_type_does_not_declare_is_refused(
    openai_client: openai.OpenAI,
) -> None:
    item: Any = {"role": "user", "content": "hi", "colour": "blue"}

    message = openai_refusal(
        lambda: openai_client.responses.create(
            model=OPENAI_MODEL,
            input=[item],
            extra_body={"temperature_celsius": 20},
        )
    )

    assert "unknown parameter" in message
