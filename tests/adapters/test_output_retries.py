"""Output retries: a structured reply that fails validation goes back to the model with the
error; usage adds up over the attempts, and the last error is raised when every attempt fails."""

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, OutputParseError, Prompt
from promptkit.adapters import PromptResponse
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, Usage


class Label(BaseModel):
    label: str
    confidence: float


PROMPT: Prompt[Label] = Prompt(
    ns="tests/retries",
    key="label",
    sections=(MarkdownSection(title="Task", key="task", template="Label the ticket."),),
    output_type=Label,
)


def test_reply_failing_validation_once_then_passing_costs_two_requests_and_succeeds(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.json({"label": "bug"}, usage=Usage(input_tokens=20, output_tokens=3)),
        Reply.json(
            {"label": "bug", "confidence": 0.9}, usage=Usage(input_tokens=40, output_tokens=6)
        ),
    )

    response = make_adapter().evaluate(PROMPT, session=Session())

    assert response.output == Label(label="bug", confidence=0.9)
    assert server.request_count == 2
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (60, 9)
    retry = server.requests[1].body
    sent = str(retry["input"] if wire.name == "responses" else retry["messages"])
    assert "confidence" in sent and "did not match the Response Format" in sent


def test_every_attempt_failing_raises_the_last_error_with_the_summed_usage(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("first"), Reply.text("second"), Reply.text("third"))

    with pytest.raises(OutputParseError) as raised:
        make_adapter().evaluate(PROMPT, session=Session(), output_retries=2)

    assert raised.value.raw_text == "third"
    assert server.request_count == 3
    partial = raised.value.response
    assert isinstance(partial, PromptResponse)
    assert partial.usage.output_tokens == 15


def test_no_retry_is_sent_with_output_retries_zero(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("not JSON"))

    with pytest.raises(OutputParseError):
        make_adapter().evaluate(PROMPT, session=Session(), output_retries=0)

    assert server.request_count == 1


def test_negative_output_retries_is_refused_before_any_request(
    server: FakeProviderServer, make_adapter
) -> None:
    with pytest.raises(ValueError, match="output_retries"):
        make_adapter().evaluate(PROMPT, session=Session(), output_retries=-1)

    assert server.request_count == 0
