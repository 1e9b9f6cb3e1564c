"""OpenAI-compatible local servers as they really answer (`ServerProfile`): llama-cpp-python's
server refuses JSON-schema output with a 500, drops tools sent without `tool_choice` and ignores
`max_completion_tokens`; llama.cpp's llama-server answers with integer error codes and
`timings`. Each defect found against the real servers has its test here; the error advice
fits the request and names the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletionFunctionToolParam
from pydantic import BaseModel
from structlog.testing import capture_logs

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.adapters import ModelSettings, OpenAIAdapter, ResponseCompleted
from promptkit.errors import (
    ProviderBadRequestError,
    ProviderTimeoutError,
    StructuredOutputUnsupportedError,
)
from promptkit.session import Session
from promptkit.testing import (
    FakeClock,
    FakeProviderServer,
    RecordedRequest,
    Reply,
    ServerProfile,
    ToolCall,
    Usage,
)

MODEL = "qwen2.5-coder-0.5b-instruct"


class Capital(BaseModel):
    country: str
    capital: str


CAPITAL: Prompt[Capital] = Prompt(
    ns="tests/compatible",
    key="capital",
    sections=(MarkdownSection(title="Task", key="task", template="Give the capital of Japan."),),
    output_type=Capital,
)

PLAIN: Prompt[None] = Prompt(
    ns="tests/compatible",
    key="plain",
    sections=(MarkdownSection(title="Task", key="task", template="Say hello."),),
)


class Lookup(BaseModel):
    customer_id: int


def _lookup(params: Lookup, context: ToolContext) -> ToolResult:
    return ToolResult(message=f"customer {params.customer_id} is on the Pro plan")


LOOKUP: Prompt[None] = Prompt(
    ns="tests/compatible",
    key="lookup",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Call lookup_customer for customer 7, then answer.",
            tools=(
                Tool(
                    name="lookup_customer",
                    description="The plan a customer is on.",
                    params_type=Lookup,
                    handler=_lookup,
                ),
            ),
        ),
    ),
)


@pytest.fixture
def llama_cpp_python() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(profile=ServerProfile.llama_cpp_python()) as server:
        yield server


@pytest.fixture
def llama_server() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(profile=ServerProfile.llama_server()) as server:
        yield server


def _adapter(server: FakeProviderServer, **options: object) -> OpenAIAdapter:
    # The SDK's own retries on, as a user's client has them: a refusal must not be retried.
    return OpenAIAdapter(
        model=MODEL,
        api="chat",
        client_kwargs={"base_url": server.openai_base_url, "max_retries": 2, "timeout": 10.0},
        **options,  # type: ignore[arg-type]
    )


ANSWER = Reply.json({"country": "Japan", "capital": "Tokyo"})


# -- a 500 refusing `response_format` ------------------------------------------------------


def test_a_500_naming_response_format_falls_back_once_to_prompt_mode(
    llama_cpp_python: FakeProviderServer,
) -> None:
    llama_cpp_python.enqueue(ANSWER)

    with capture_logs() as logs:
        response = _adapter(llama_cpp_python).evaluate(CAPITAL, session=Session())

    assert response.output == Capital(country="Japan", capital="Tokyo")
    refused, answered = llama_cpp_python.requests
    assert "response_format" in refused.body
    assert "response_format" not in answered.body
    assert [log["event"] for log in logs] == ["structured_output_fallback"]


def test_after_the_fallback_the_adapter_asks_in_prompt_mode_from_the_start(
    llama_cpp_python: FakeProviderServer,
) -> None:
    adapter = _adapter(llama_cpp_python)
    llama_cpp_python.enqueue(ANSWER, ANSWER)
    adapter.evaluate(CAPITAL, session=Session())

    adapter.evaluate(CAPITAL, session=Session())

    assert llama_cpp_python.request_count == 3
    assert "response_format" not in llama_cpp_python.requests[2].body


def test_a_streamed_evaluation_falls_back_the_same_way(
    llama_cpp_python: FakeProviderServer,
) -> None:
    llama_cpp_python.enqueue(ANSWER)

    events = list(_adapter(llama_cpp_python).stream(CAPITAL, session=Session()))

    completed = events[-1]
    assert isinstance(completed, ResponseCompleted)
    assert completed.response.output == Capital(country="Japan", capital="Tokyo")
    assert llama_cpp_python.request_count == 2


def test_an_async_evaluation_falls_back_the_same_way(
    llama_cpp_python: FakeProviderServer,
) -> None:
    llama_cpp_python.enqueue(ANSWER)
    adapter = _adapter(llama_cpp_python)

    async def run() -> Capital | None:
        try:
            return (await adapter.aevaluate(CAPITAL, session=Session())).output
        finally:
            await adapter.aclose_loop_client()

    assert asyncio.run(run()) == Capital(country="Japan", capital="Tokyo")
    assert llama_cpp_python.request_count == 2


def test_a_refusal_at_the_providers_own_api_names_the_option_and_not_the_servers_files() -> None:
    adapter = OpenAIAdapter(model="gpt-4.1-mini", api="chat", client_kwargs={"api_key": "sk-x"})
    client = adapter.sync_client()
    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    body = {
        "error": {
            "message": ServerProfile.llama_cpp_python().refusal(
                {"response_format": {"type": "json_schema"}}
            )[1],  # type: ignore[index]
            "type": "internal_server_error",
        }
    }
    refused = openai.InternalServerError(
        "refused", response=httpx2.Response(500, request=request, json=body), body=body
    )

    translated = adapter.translate_error(refused, client=client, where="openai chat request 1")

    assert isinstance(translated, StructuredOutputUnsupportedError)
    message = str(translated)
    assert 'structured_output="prompt"' in message
    assert "--structured-output prompt" in message
    assert "retry later" not in message
    assert "app.py" not in message and "/home/" not in message


# -- tools and the output cap --------------------------------------------------------------


def test_tools_go_with_tool_choice_so_the_server_offers_them(
    llama_cpp_python: FakeProviderServer,
) -> None:
    llama_cpp_python.enqueue(
        Reply.tool_calls(ToolCall("lookup_customer", {"customer_id": 7})),
        Reply.text("Customer 7 is on the Pro plan."),
    )

    response = _adapter(llama_cpp_python).evaluate(LOOKUP, session=Session())

    assert [call.name for call in response.tool_calls] == ["lookup_customer"]
    assert llama_cpp_python.requests[0].body["tool_choice"] == "auto"


def test_without_tool_choice_the_profile_offers_no_tools(
    llama_cpp_python: FakeProviderServer,
) -> None:
    llama_cpp_python.enqueue(Reply.tool_calls(ToolCall("lookup_customer", {"customer_id": 7})))
    client = openai.OpenAI(api_key="x", base_url=llama_cpp_python.openai_base_url, max_retries=0)
    tool: ChatCompletionFunctionToolParam = {
        "type": "function",
        "function": {"name": "lookup_customer", "parameters": {}},
    }

    with client:
        completion = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], tools=[tool]
        )

    message = completion.choices[0].message
    assert message.tool_calls is None
    assert '"name": "lookup_customer"' in (message.content or "")


def test_the_output_cap_reaches_a_server_that_ignores_max_completion_tokens(
    llama_cpp_python: FakeProviderServer,
) -> None:
    llama_cpp_python.enqueue(Reply.text("word " * 400, usage=Usage(output_tokens=400)))
    adapter = _adapter(llama_cpp_python, settings=ModelSettings(max_output_tokens=16))

    response = adapter.evaluate(PLAIN, session=Session())

    assert len(response.text.split()) == 16
    assert response.finish_reason == "length"
    sent = llama_cpp_python.requests[0].body
    assert (sent["max_tokens"], sent["max_completion_tokens"]) == (16, 16)


# -- replies as these servers shape them ---------------------------------------------------


def test_a_stream_without_usage_and_with_a_role_only_first_delta_is_read(
    llama_cpp_python: FakeProviderServer,
) -> None:
    llama_cpp_python.enqueue(Reply.text("Madrid is the capital of Spain."))

    events = list(_adapter(llama_cpp_python).stream(PLAIN, session=Session()))

    response = events[-1].response  # type: ignore[union-attr]
    assert response.text == "Madrid is the capital of Spain."
    assert response.usage.output_tokens is None
    assert response.model == MODEL


def test_llama_server_replies_with_timings_and_its_model_alias_are_read(
    llama_server: FakeProviderServer,
) -> None:
    llama_server.enqueue(ANSWER, Reply.text("Madrid.", usage=Usage(cached_tokens=20)))
    adapter = OpenAIAdapter(
        model="any-name", api="chat", client_kwargs={"base_url": llama_server.openai_base_url}
    )

    structured = adapter.evaluate(CAPITAL, session=Session())
    streamed = list(adapter.stream(PLAIN, session=Session()))[-1].response  # type: ignore[union-attr]

    assert structured.output == Capital(country="Japan", capital="Tokyo")
    assert structured.model == MODEL
    assert streamed.usage.cached_tokens == 20


# -- advice that fits the request ----------------------------------------------------------


def test_llama_server_context_overflow_says_so_and_not_check_the_model_name(
    llama_server: FakeProviderServer,
) -> None:
    llama_server.enqueue(
        Reply.error(
            400,
            "request (40024 tokens) exceeds the available context size (8192 tokens), try"
            " increasing it",
            error_type="exceed_context_size_error",
        )
    )

    with pytest.raises(ProviderBadRequestError) as raised:
        _adapter(llama_server).evaluate(PLAIN, session=Session())

    message = str(raised.value)
    assert "context window" in message
    assert "check the model name" not in message
    assert f"at {llama_server.openai_base_url}" in message


def test_a_deadline_without_tools_does_not_advise_fewer_tool_rounds(
    llama_server: FakeProviderServer,
) -> None:
    clock = FakeClock()

    def slow_unparsable_answer(request: RecordedRequest) -> Reply:
        clock.advance(10)  # the reply takes longer than the whole deadline
        return Reply.text("Tokyo, I think.")

    llama_server.respond_with(slow_unparsable_answer)
    adapter = _adapter(llama_server, clock=clock)

    with pytest.raises(ProviderTimeoutError) as raised:
        adapter.evaluate(CAPITAL, session=Session(), deadline=5, output_retries=1)

    message = str(raised.value)
    assert "before request 2" in message
    assert "tool rounds" not in message
    assert "max_output_tokens" in message


def test_a_retry_under_a_deadline_is_said_not_silent(llama_server: FakeProviderServer) -> None:
    llama_server.enqueue(Reply.error(503, "loading model", retry_after=0.01), Reply.text("Hi."))

    with capture_logs() as logs:
        response = _adapter(llama_server).evaluate(PLAIN, session=Session(), deadline=30)

    assert response.text == "Hi."
    (retried,) = [log for log in logs if log["event"] == "provider_request_retried"]
    assert (retried["attempt"], retried["error_type"]) == (1, "InternalServerError")


def test_an_async_request_without_an_output_format_keeps_the_sdks_retries(
    llama_server: FakeProviderServer,
) -> None:
    llama_server.enqueue(Reply.error(503, "loading model", retry_after=0.01), Reply.text("Hi."))
    adapter = _adapter(llama_server)

    async def run() -> str:
        try:
            return (await adapter.aevaluate(PLAIN, session=Session())).text
        finally:
            await adapter.aclose_loop_client()

    assert asyncio.run(run()) == "Hi."
    assert llama_server.request_count == 2
