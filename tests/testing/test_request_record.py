"""What `FakeProviderServer.requests` records, and how queued replies are chosen."""

import json
import urllib.request

import anthropic
import openai
import pytest

from promptkit.testing import FakeProviderServer, RecordedRequest, Reply

LOOKUP_TOOL: openai.types.responses.FunctionToolParam = {
    "type": "function",
    "name": "lookup",
    "description": "Look a term up.",
    "parameters": {
        "type": "object",
        "properties": {"term": {"type": "string"}},
        "required": ["term"],
        "additionalProperties": False,
    },
    "strict": True,
}


def test_record_captures_the_body_the_sdk_sent(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("ok"))

    openai_client.responses.create(
        model="gpt-4.1-mini", instructions="Be brief.", input="Define foo", tools=[LOOKUP_TOOL]
    )

    (request,) = server.requests
    assert (request.method, request.path, request.endpoint) == (
        "POST",
        "/v1/responses",
        "responses",
    )
    assert request.body["model"] == "gpt-4.1-mini"
    assert request.body["instructions"] == "Be brief."
    assert request.body["tools"] == [LOOKUP_TOOL]


def test_record_body_is_a_fresh_copy_each_time(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("ok"))
    openai_client.responses.create(model="gpt-4.1-mini", input="x")
    request = server.requests[0]

    request.body["model"] = "changed"

    assert request.body["model"] == "gpt-4.1-mini"


def test_record_masks_the_openai_key_yet_confirms_it_was_sent(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(Reply.text("ok"))
    openai_client.responses.create(model="gpt-4.1-mini", input="x")

    request = server.requests[0]

    assert request.headers["authorization"] == "Bearer ***"
    assert request.has_credentials
    assert request.sent_api_key(openai_client.api_key)
    assert not request.sent_api_key("sk-some-other-key")
    assert openai_client.api_key not in repr(request)


def test_record_masks_the_anthropic_key_yet_confirms_it_was_sent(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(Reply.text("ok"))
    anthropic_client.messages.create(
        model="claude-haiku-4-5", max_tokens=16, messages=[{"role": "user", "content": "x"}]
    )

    request = server.requests[0]
    key = anthropic_client.api_key

    assert key is not None
    assert request.sent_api_key(key)
    assert key not in repr(request)
    assert all(key not in value for value in request.headers.values())
    assert request.headers["anthropic-version"]


def test_request_without_credentials_is_recorded_as_such(server: FakeProviderServer) -> None:
    server.enqueue(Reply.text("ok"))
    plain_http = urllib.request.Request(
        f"{server.openai_base_url}/chat/completions",
        data=json.dumps({"model": "llama3", "messages": []}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )

    with urllib.request.urlopen(plain_http, timeout=10) as answer:
        assert json.load(answer)["choices"][0]["message"]["content"] == "ok"

    request = server.requests[0]
    assert "authorization" not in request.headers
    assert not request.has_credentials


def test_every_retry_is_recorded_with_its_own_request_id(server: FakeProviderServer) -> None:
    server.enqueue(Reply.error(503, "again", retry_after=0.001), Reply.text("ok"))

    with openai.OpenAI(
        api_key="sk-test",
        base_url=server.openai_base_url,
        max_retries=1,
        _strict_response_validation=True,
    ) as client:
        client.responses.create(model="gpt-4.1-mini", input="x")

    requests = server.requests
    assert [r.index for r in requests] == [0, 1]
    assert requests[0].request_id != requests[1].request_id
    assert requests[0].body == requests[1].body
    assert requests[1].headers["x-stainless-retry-count"] == "1"


def test_endpoint_queue_is_used_before_the_shared_queue(
    server: FakeProviderServer,
    openai_client: openai.OpenAI,
    anthropic_client: anthropic.Anthropic,
) -> None:
    server.enqueue(Reply.text("shared"))
    server.enqueue(Reply.text("for anthropic"), endpoint="messages")

    openai_text = openai_client.responses.create(model="gpt-4.1-mini", input="x").output_text
    message = anthropic_client.messages.create(
        model="claude-haiku-4-5", max_tokens=16, messages=[{"role": "user", "content": "x"}]
    )

    assert openai_text == "shared"
    assert message.content[0].type == "text"
    assert message.content[0].text == "for anthropic"


def test_enqueue_rejects_an_unknown_endpoint(server: FakeProviderServer) -> None:
    with pytest.raises(ValueError, match="unknown endpoint 'completions'"):
        server.enqueue(Reply.text("x"), endpoint="completions")  # type: ignore[arg-type]


def test_responder_answers_when_every_queue_is_empty(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    def echo(request: RecordedRequest) -> Reply:
        return Reply.text(f"you said {request.body['input']}")

    server.enqueue(Reply.text("scripted first"))
    server.respond_with(echo)

    first = openai_client.responses.create(model="gpt-4.1-mini", input="one").output_text
    second = openai_client.responses.create(model="gpt-4.1-mini", input="two").output_text

    assert (first, second) == ("scripted first", "you said two")


def test_responder_that_raises_fails_the_request_loudly(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    def broken(request: RecordedRequest) -> Reply:
        raise KeyError("no such prompt")

    server.respond_with(broken)

    with pytest.raises(openai.InternalServerError, match="responder raised KeyError"):
        openai_client.responses.create(model="gpt-4.1-mini", input="x")
