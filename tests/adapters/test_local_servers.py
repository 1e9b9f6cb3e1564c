"""Local servers in the library: OPENAI_BASE_URL and ANTHROPIC_BASE_URL honoured with no real
key, and a 400 refusing JSON-schema output at such a server answered in prompt mode."""

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt
from promptkit.adapters import AnthropicAdapter, OpenAIAdapter, choose_adapter
from promptkit.errors import (
    ProviderBadRequestError,
    ProviderError,
    StructuredOutputUnsupportedError,
)
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply


class Answer(BaseModel):
    answer: str


PROMPT: Prompt[Answer] = Prompt(
    ns="tests/local",
    key="ask",
    sections=(MarkdownSection(title="Task", key="task", template="Answer."),),
    output_type=Answer,
)


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_openai_adapter_uses_openai_base_url_without_a_key(
    server: FakeProviderServer, no_keys: pytest.MonkeyPatch
) -> None:
    no_keys.setenv("OPENAI_BASE_URL", server.openai_base_url)
    server.enqueue(Reply.json({"answer": "42"}))

    response = OpenAIAdapter(model="served-model", api="chat").evaluate(PROMPT, session=Session())

    assert response.output == Answer(answer="42")
    assert server.requests[0].sent_api_key("not-needed")


def test_anthropic_adapter_uses_anthropic_base_url_without_a_key(
    server: FakeProviderServer, no_keys: pytest.MonkeyPatch
) -> None:
    no_keys.setenv("ANTHROPIC_BASE_URL", server.anthropic_base_url)
    server.enqueue(Reply.json({"answer": "42"}))

    response = AnthropicAdapter(model="served-model").evaluate(PROMPT, session=Session())

    assert response.output == Answer(answer="42")
    assert server.requests[0].path == "/v1/messages"


def test_auto_choice_takes_anthropic_base_url_and_says_where_requests_go(
    server: FakeProviderServer,
) -> None:
    environ = {"ANTHROPIC_BASE_URL": server.anthropic_base_url}

    choice = choose_adapter(environ=environ, model="served-model")

    assert isinstance(choice.adapter, AnthropicAdapter)
    assert f"at {server.anthropic_base_url}, as ANTHROPIC_BASE_URL is set" in choice.reason


def test_auto_choice_takes_openai_base_url_and_says_where_requests_go(
    server: FakeProviderServer,
) -> None:
    choice = choose_adapter(environ={"OPENAI_BASE_URL": server.openai_base_url}, model="m")

    assert f"m at {server.openai_base_url} (Chat Completions)" in choice.reason


def test_openai_itself_keeps_the_default_model_and_the_responses_api() -> None:
    choice = choose_adapter(environ={"OPENAI_API_KEY": "sk-test-x"})

    assert "gpt-4.1-mini at https://api.openai.com/v1 (Responses)" in choice.reason


def test_api_option_is_refused_for_anthropic() -> None:
    with pytest.raises(ProviderError, match="Anthropic speaks only Messages"):
        choose_adapter("anthropic", environ={"ANTHROPIC_API_KEY": "x"}, api="chat")


def test_a_400_refusing_json_schema_at_a_local_server_falls_back_to_prompt_mode(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.error(400, "response_format json_schema is not supported by this model"),
        Reply.json({"answer": "42"}),
    )

    response = make_adapter().evaluate(PROMPT, session=Session())

    assert response.output == Answer(answer="42")
    first, second = (request.body for request in server.requests)
    assert wire.asks_for_schema(first)
    assert not wire.asks_for_schema(second)


def test_prompt_mode_gets_no_schema_hint(server: FakeProviderServer, make_adapter) -> None:
    server.enqueue(Reply.error(400, "json_schema is not supported"))

    with pytest.raises(ProviderBadRequestError) as raised:
        make_adapter(structured_output="prompt").evaluate(PROMPT, session=Session())

    assert not isinstance(raised.value, StructuredOutputUnsupportedError)
    assert "structured_output" not in str(raised.value)
    assert server.request_count == 1
