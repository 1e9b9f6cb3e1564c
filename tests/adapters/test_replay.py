"""Replay: a reply goes back as conversation input with only the fields the SDK's request types
declare, and `OpenAIAdapter(store=False)` asks for and replays encrypted reasoning content.
FakeProviderServer refuses undeclared keys and, under `store: false`, reasoning without it."""

import json

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.adapters import OpenAIAdapter
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall
from promptkit.wire import declared_only, request_type_problems

from .conftest import Wire


class WordParams(BaseModel):
    word: str


def echo(params: WordParams, context: ToolContext) -> ToolResult:
    return ToolResult(message=params.word)


PROMPT: Prompt[None] = Prompt(
    ns="tests/replay",
    key="echo",
    sections=(
        MarkdownSection(
            title="Tools",
            key="tools",
            template="Echo a word.",
            tools=(Tool(name="echo", description="Echo.", params_type=WordParams, handler=echo),),
        ),
    ),
)


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_store_false_asks_for_and_replays_encrypted_reasoning(
    wire: Wire, server: FakeProviderServer
) -> None:
    server.enqueue(
        Reply.with_reasoning(Reply.tool_calls(ToolCall("echo", {"word": "hi"})), "Echo it."),
        Reply.text("hi"),
    )
    client = wire.client(server, max_retries=0, timeout=10.0)
    adapter = OpenAIAdapter(model="gpt-4.1-mini", client=client, store=False)

    response = adapter.evaluate(PROMPT, session=Session())

    assert response.text == "hi"
    first, second = (request.body for request in server.requests)
    assert (first["store"], first["include"]) == (False, ["reasoning.encrypted_content"])
    [reasoning] = [item for item in second["input"] if item.get("type") == "reasoning"]
    assert reasoning["encrypted_content"] == "enc_fake000001"
    client.close()


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_default_store_replays_reasoning_by_id_without_encrypted_content(
    wire: Wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.with_reasoning(Reply.tool_calls(ToolCall("echo", {"word": "hi"})), "Echo it."),
        Reply.text("hi"),
    )

    make_adapter().evaluate(PROMPT, session=Session())

    first, second = (request.body for request in server.requests)
    assert "store" not in first and "include" not in first
    [reasoning] = [item for item in second["input"] if item.get("type") == "reasoning"]
    assert reasoning["id"] == "rs_fake000001"
    assert "encrypted_content" not in reasoning


def test_replayed_items_carry_only_fields_the_request_types_declare(
    wire: Wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("echo", {"word": "hi"})))
    first_reply = _undeclared_field_added(wire, server)
    server.enqueue(Reply.raw(json.dumps(first_reply)), Reply.text("hi"))

    response = make_adapter(strict_validation=False).evaluate(PROMPT, session=Session())

    assert response.text == "hi"
    assert "undeclared_field" not in server.requests[-1].raw_body.decode()


def _undeclared_field_added(wire: Wire, server: FakeProviderServer) -> dict[str, object]:
    """A real tool-call reply of `wire` with a field no request type declares in each item."""
    client = wire.client(server, max_retries=0, timeout=10.0)
    if wire.name == "messages":
        raw = client.messages.with_raw_response.create(
            model=wire.model, max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        )
    elif wire.name == "chat":
        raw = client.chat.completions.with_raw_response.create(
            model=wire.model, messages=[{"role": "user", "content": "hi"}]
        )
    else:
        raw = client.responses.with_raw_response.create(model=wire.model, input="hi")
    client.close()
    body: dict[str, object] = json.loads(raw.http_response.content)
    items = body.get("content") or body.get("output") or []
    for item in items if isinstance(items, list) else ():
        item["undeclared_field"] = "from a newer API"
    return body


def test_declared_only_keeps_declared_keys_and_drops_absent_optionals() -> None:
    from openai.types.responses import ResponseInputItemParam

    item = {
        "type": "function_call",
        "call_id": "call_1",
        "name": "echo",
        "arguments": "{}",
        "id": "fc_1",
        "status": "completed",
        "namespace": None,
        "undeclared_field": 1,
    }

    kept = declared_only(item, ResponseInputItemParam)

    assert kept == {key: item[key] for key in ("type", "call_id", "name", "arguments", "id")} | {
        "status": "completed"
    }


def test_request_type_problems_name_unknown_and_missing_keys() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    body = {
        "model": "claude-haiku-4-5",
        "messages": [{"role": "user", "content": [{"type": "text", "txt": "hi"}]}],
    }

    problems = request_type_problems(body, MessageCreateParamsNonStreaming)

    assert "missing required parameter 'max_tokens'" in problems
    assert "unknown parameter 'messages[0].content[0].txt'" in problems
