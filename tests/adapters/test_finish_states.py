"""How a reply ended, through the real SDK clients against FakeProviderServer for each wire API:
truncation and refusal raise typed errors for structured prompts and set the finish reason for
text; a truncated tool call is answered with an error and never runs; an empty error result goes
back with a message; usage keeps cache-write and reasoning tokens and sessions add them up.
"""

from dataclasses import replace
from typing import Literal

import pytest
import structlog
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.adapters import PromptResponse, TokenUsage, session_token_usage
from promptkit.errors import ModelOutputError, ModelRefusalError, OutputTruncatedError
from promptkit.session import PromptExecuted, Session, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage


class Verdict(BaseModel):
    greeting: str
    excited: bool


class WordParams(BaseModel):
    word: str


ran: list[str] = []


def record_word(params: WordParams, context: ToolContext) -> ToolResult:
    ran.append(params.word)
    return ToolResult(message=f"recorded {params.word}")


def fail_quietly(params: WordParams, context: ToolContext) -> ToolResult:
    return ToolResult(message="", success=False)


TASK = MarkdownSection(title="Task", key="task", template="Greet the user.")
TEXT_PROMPT: Prompt[None] = Prompt(ns="tests/finish", key="text", sections=(TASK,))
STRUCTURED_PROMPT: Prompt[Verdict] = Prompt(
    ns="tests/finish", key="verdict", sections=(TASK,), output_type=Verdict
)
TOOLS_PROMPT: Prompt[None] = Prompt(
    ns="tests/finish",
    key="tools",
    sections=(
        MarkdownSection(
            title="Tools",
            key="tools",
            template="Use the tools.",
            tools=(
                Tool(
                    name="record",
                    description="Record a word.",
                    params_type=WordParams,
                    handler=record_word,
                ),
                Tool(
                    name="quiet",
                    description="Fails without a message.",
                    params_type=WordParams,
                    handler=fail_quietly,
                ),
            ),
        ),
    ),
)


def partial_response(error: ModelOutputError) -> PromptResponse[Verdict]:
    response = error.response
    assert isinstance(response, PromptResponse)
    return response


CutOff = Literal["max_tokens", "context_window", "content_filter"]


@pytest.mark.parametrize("cut_off", ["max_tokens", "context_window"])
def test_a_truncated_structured_answer_raises_output_truncated_with_the_partial_response(
    wire, server: FakeProviderServer, make_adapter, cut_off: CutOff
) -> None:
    partial = '{"greeting": "Hel'
    server.enqueue(
        Reply.truncated(
            Reply.text(partial, usage=Usage(input_tokens=40, output_tokens=16)), by=cut_off
        )
    )
    session = Session()

    with pytest.raises(OutputTruncatedError) as caught:
        make_adapter().evaluate(STRUCTURED_PROMPT, session=session)

    response = partial_response(caught.value)
    assert response.text == partial
    assert response.finish_reason == "length"
    assert response.usage.output_tokens == 16
    assert "cut off" in str(caught.value)
    assert session.select_all(PromptExecuted) == ()


def test_a_structured_answer_stopped_by_a_content_filter_raises_the_typed_error(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.truncated(Reply.text('{"greeting": "'), by="content_filter"))

    with pytest.raises((OutputTruncatedError, ModelRefusalError)) as caught:
        make_adapter().evaluate(STRUCTURED_PROMPT, session=Session())

    # Anthropic has no content filter of its own: it reports the same answer as a refusal.
    expected = "refusal" if wire.name == "messages" else "content_filter"
    assert partial_response(caught.value).finish_reason == expected


def test_a_refused_structured_prompt_raises_model_refusal_with_its_explanation(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.refusal("I can't help with that request."))

    with pytest.raises(ModelRefusalError) as caught:
        make_adapter().evaluate(STRUCTURED_PROMPT, session=Session())

    assert caught.value.refusal == "I can't help with that request."
    assert partial_response(caught.value).finish_reason == "refusal"
    assert partial_response(caught.value).usage.input_tokens == 10


def test_a_truncated_text_answer_is_returned_with_length_and_a_warning(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.truncated(Reply.text("Hello, and welcome to")))
    session = Session()

    with structlog.testing.capture_logs() as logs:
        response = make_adapter().evaluate(TEXT_PROMPT, session=session)

    assert response.text == "Hello, and welcome to"
    assert response.finish_reason == "length"
    assert response.is_truncated
    assert [entry["event"] for entry in logs if entry["log_level"] == "warning"] == [
        "reply_truncated"
    ]
    assert session.select_all(PromptExecuted)[0].finish_reason == "length"


def test_a_refused_text_prompt_returns_the_refusal(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.refusal("I won't do that."))

    response = make_adapter().evaluate(TEXT_PROMPT, session=Session())

    assert response.finish_reason == "refusal"
    assert response.refusal == "I won't do that."


def test_a_complete_answer_finishes_with_stop(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.json({"greeting": "Hi", "excited": True}))

    response = make_adapter().evaluate(STRUCTURED_PROMPT, session=Session())

    assert response.finish_reason == "stop"
    assert response.refusal is None


def test_a_truncated_tool_call_is_answered_with_an_error_and_never_runs(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    ran.clear()
    complete = ToolCall("record", {"word": "first"}, call_id="call_complete")
    # What a cut-off call carries: Anthropic sends `{}`, OpenAI the JSON written so far.
    cut = ToolCall("record", {} if wire.name == "messages" else '{"wo', call_id="call_cut")
    server.enqueue(Reply.truncated(Reply.tool_calls(complete, cut)), Reply.text("Done."))
    session = Session()

    response = make_adapter().evaluate(TOOLS_PROMPT, session=session)

    assert ran == ["first"]
    results = {
        call_id: content for call_id, content, _ in wire.tool_results(server.requests[1].body)
    }
    assert results["call_complete"] == "recorded first"
    assert "cut off by the output token limit" in results["call_cut"]
    assert [call.success for call in response.tool_calls] == [True, False]
    assert [event.success for event in session.select_all(ToolInvoked)] == [True, False]


def test_an_empty_error_result_goes_back_with_a_message(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("quiet", {"word": "x"}, call_id="call_quiet")),
        Reply.text("ok"),
    )

    make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    [(call_id, content, is_error)] = wire.tool_results(server.requests[1].body)
    assert call_id == "call_quiet"
    assert "failed without saying why" in content
    assert is_error in (True, None)


def test_usage_keeps_cache_write_and_reasoning_tokens(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    usage = Usage(
        input_tokens=100,
        output_tokens=30,
        cached_tokens=20,
        cache_creation_tokens=50,
        reasoning_tokens=12,
    )
    server.enqueue(Reply.text("Hi", usage=usage))

    response = make_adapter().evaluate(TEXT_PROMPT, session=Session())

    # Anthropic reports no reasoning tokens of its own.
    reasoning = None if wire.name == "messages" else 12
    assert replace(response.usage, cost=None) == TokenUsage(
        input_tokens=100,
        output_tokens=30,
        cached_tokens=20,
        cache_write_tokens=50,
        reasoning_tokens=reasoning,
    )


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_session_token_usage_adds_up_every_evaluation_including_cache_writes_and_reasoning(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    usage = Usage(
        input_tokens=10,
        output_tokens=4,
        cached_tokens=2,
        cache_creation_tokens=3,
        reasoning_tokens=1,
    )
    server.enqueue(Reply.text("a", usage=usage), Reply.text("b", usage=usage))
    session = Session()
    adapter = make_adapter()

    adapter.evaluate(TEXT_PROMPT, session=session)
    adapter.evaluate(TEXT_PROMPT, session=session)

    assert replace(session_token_usage(session), cost=None) == TokenUsage(
        input_tokens=20,
        output_tokens=8,
        cached_tokens=4,
        cache_write_tokens=6,
        reasoning_tokens=2,
    )
