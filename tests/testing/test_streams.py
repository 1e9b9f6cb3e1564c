"""Streamed replies: with `stream: true` the fake answers in each API's server-sent events, which
the SDKs' own stream readers decode into the same answer a plain request gets."""

import anthropic
import openai
from openai.lib.streaming.chat import ChatCompletionStreamState

from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

REPLY = Reply.text("The tide turns twice a day.", usage=Usage(input_tokens=9, output_tokens=7))
CALL = Reply.tool_calls(ToolCall("tide", {"port": "Brest"}, call_id="call_1"))


def test_responses_stream_sends_ordered_text_deltas_then_the_completed_response(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(REPLY)

    events = list(openai_client.responses.create(model="m", input="x", stream=True))

    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 1 and "".join(deltas) == "The tide turns twice a day."
    assert [e.sequence_number for e in events] == list(range(len(events)))
    completed = events[-1]
    assert completed.type == "response.completed"
    assert completed.response.output_text == "The tide turns twice a day."
    assert completed.response.usage is not None and completed.response.usage.output_tokens == 7


def test_responses_stream_tells_a_function_call_with_its_arguments(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(CALL)

    events = list(openai_client.responses.create(model="m", input="x", stream=True))

    arguments = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert "".join(arguments) == '{"port": "Brest"}'
    assert events[-1].type == "response.completed"
    item = events[-1].response.output[0]
    assert (item.type, getattr(item, "call_id", None)) == ("function_call", "call_1")


def test_chat_stream_chunks_accumulate_into_the_plain_completion(
    server: FakeProviderServer, openai_client: openai.OpenAI
) -> None:
    server.enqueue(CALL, CALL)
    plain = openai_client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )

    state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
    for chunk in openai_client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "x"}],
        stream=True,
        stream_options={"include_usage": True},
    ):
        state.handle_chunk(chunk)
    streamed = state.get_final_completion()

    streamed_call = streamed.choices[0].message.tool_calls
    plain_call = plain.choices[0].message.tool_calls
    assert streamed_call is not None and plain_call is not None
    streamed_first, plain_first = streamed_call[0], plain_call[0]
    assert streamed_first.type == "function" and plain_first.type == "function"
    assert (streamed_first.id, streamed_first.function.name) == ("call_1", "tide")
    assert streamed_first.function.arguments == plain_first.function.arguments
    assert streamed.choices[0].finish_reason == "tool_calls"
    assert streamed.usage == plain.usage


def test_anthropic_stream_accumulates_into_the_plain_message(
    server: FakeProviderServer, anthropic_client: anthropic.Anthropic
) -> None:
    server.enqueue(REPLY, REPLY)
    request = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
    plain = anthropic_client.messages.create(**request)  # type: ignore[call-overload]

    with anthropic_client.messages.stream(**request) as stream:  # type: ignore[arg-type]
        texts = list(stream.text_stream)
        streamed = stream.get_final_message()

    assert len(texts) > 1 and "".join(texts) == "The tide turns twice a day."
    assert streamed.content[0].model_dump() == plain.content[0].model_dump()
    assert streamed.usage.output_tokens == 7 and streamed.stop_reason == "end_turn"
