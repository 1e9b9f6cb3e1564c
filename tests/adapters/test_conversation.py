"""Conversations: earlier turns passed as `messages=` go back to the model in each wire API's
format, and a session conversation keeps its turns across evaluations and a restart."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from structlog.testing import capture_logs

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.adapters import (
    ConversationMessage,
    ConversationTurnKept,
    Message,
    MessageToolCall,
    conversation_messages,
)
from promptkit.errors import ArgumentValueError, SessionError
from promptkit.session import Session, SessionStore
from promptkit.testing import FakeClock, FakeProviderServer, Reply, ToolCall


class City(BaseModel):
    city: str


def weather(params: City, context: ToolContext) -> ToolResult:
    return ToolResult(message=f"sunny in {params.city}")


PROMPT: Prompt[None] = Prompt(
    ns="tests/conversation",
    key="chat",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Answer questions about the weather.",
            tools=(
                Tool(name="weather", description="Weather.", params_type=City, handler=weather),
            ),
        ),
    ),
)


def _texts(wire_name: str, body: dict[str, Any]) -> list[str]:
    """Every text a request carries in its conversation, in order."""
    items = body["input"] if wire_name == "responses" else body["messages"]
    texts: list[str] = []
    for item in items:
        content = item.get("content", item.get("output"))
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(
                str(block.get("text", block.get("content", "")))
                for block in content
                if isinstance(block, dict) and block.get("type") in ("text", "tool_result")
            )
    return texts


def test_second_turn_sends_the_first_turn_back(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("weather", {"city": "Oslo"})),
        Reply.text("It is sunny in Oslo."),
        Reply.text("Yes, take sunglasses."),
    )
    adapter = make_adapter()

    first = adapter.evaluate(PROMPT, session=Session(), user_message="Weather in Oslo?")
    second = adapter.evaluate(
        PROMPT, session=Session(), user_message="Sunglasses?", messages=first.messages
    )

    texts = _texts(wire.name, server.requests[2].body)
    assert texts[-4:] == [
        "Weather in Oslo?",
        "sunny in Oslo",
        "It is sunny in Oslo.",
        "Sunglasses?",
    ]
    assert [m.role for m in second.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert second.messages[1].tool_calls[0].name == "weather"


def test_session_conversation_survives_a_restart(
    wire, server: FakeProviderServer, make_adapter, tmp_path: Path
) -> None:
    server.enqueue(Reply.text("Hello Ada."), Reply.text("Your name is Ada."))
    adapter = make_adapter()
    with SessionStore(state_root=tmp_path) as store:
        session = Session()
        store.attach(session, workspace_root=tmp_path)
        adapter.evaluate(PROMPT, session=session, user_message="I am Ada.", conversation="main")
        session_id = session.session_id

    with SessionStore(state_root=tmp_path) as store:
        restored = store.load(tmp_path, session_id)
        adapter.evaluate(PROMPT, session=restored, user_message="Who am I?", conversation="main")
        kept = conversation_messages(restored, "main")

    assert _texts(wire.name, server.requests[1].body)[-3:] == [
        "I am Ada.",
        "Hello Ada.",
        "Who am I?",
    ]
    assert [m.text for m in kept] == ["I am Ada.", "Hello Ada.", "Who am I?", "Your name is Ada."]


def test_conversations_of_one_session_are_kept_apart(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("one"), Reply.text("two"))
    adapter = make_adapter()
    session = Session()

    adapter.evaluate(PROMPT, session=session, user_message="a", conversation="first")
    adapter.evaluate(PROMPT, session=session, user_message="b", conversation="second")

    assert conversation_messages(session, "second") == (
        Message.user("b"),
        Message.assistant("two"),
    )


def test_kept_messages_are_stamped_by_the_adapters_clock(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("Hello Ada."))
    clock = FakeClock(start=datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
    session = Session()

    make_adapter(clock=clock).evaluate(
        PROMPT, session=session, user_message="I am Ada.", conversation="main"
    )

    kept = session.select_all(ConversationMessage)
    assert [message.added_at for message in kept] == [clock.now(), clock.now()]


def test_messages_that_are_not_message_values_are_refused_before_any_request(
    server: FakeProviderServer, make_adapter
) -> None:
    with pytest.raises(TypeError, match="sequence of promptkit Message values"):
        make_adapter().evaluate(
            PROMPT, session=Session(), messages=[{"role": "user", "content": "hi"}]
        )

    assert server.request_count == 0


def test_a_conversation_name_that_breaks_the_key_rule_is_refused(
    server: FakeProviderServer, make_adapter
) -> None:
    with pytest.raises(SessionError, match="conversation name"):
        make_adapter().evaluate(PROMPT, session=Session(), conversation="../escape")

    assert server.request_count == 0


def test_messages_and_conversation_together_are_refused(make_adapter) -> None:
    with pytest.raises(ValueError, match="not both"):
        make_adapter().evaluate(
            PROMPT, session=Session(), messages=[Message.user("a")], conversation="main"
        )


@pytest.mark.parametrize("wire", ["responses"], indirect=True)
def test_responses_sends_a_lone_user_turn_as_input_text_and_a_longer_one_as_items(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("weather", {"city": "Oslo"})), Reply.text("It is sunny.")
    )

    make_adapter().evaluate(PROMPT, session=Session(), user_message="Weather in Oslo?")

    first, second = (request.body["input"] for request in server.requests)
    assert first == "Weather in Oslo?"
    assert second[0] == {"role": "user", "content": "Weather in Oslo?"}
    assert [item.get("type") for item in second[1:]] == ["function_call", "function_call_output"]


def test_a_turn_is_kept_with_one_session_event(server: FakeProviderServer, make_adapter) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("weather", {"city": "Oslo"}), ToolCall("weather", {"city": "Rome"})
        ),
        Reply.text("Sunny in both."),
    )
    session = Session()
    seen: list[object] = []
    session.subscribe(seen.append)

    make_adapter().evaluate(PROMPT, session=session, user_message="Weather?", conversation="main")

    [turn] = [event for event in seen if isinstance(event, ConversationTurnKept)]
    assert [message.role for message in turn.messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert not any(isinstance(event, ConversationMessage) for event in seen)
    assert len(session.select_all(ConversationMessage)) == 5


def _half_saved_turn(session: Session) -> None:
    """A turn saved message by message and cut short, as promptkit before one-event turns could
    leave it: an assistant message calling two tools, one result."""
    at = datetime(2030, 1, 1, tzinfo=UTC)
    calls = (
        MessageToolCall("call_1", "weather", '{"city": "Oslo"}'),
        MessageToolCall("call_2", "weather", '{"city": "Rome"}'),
    )
    for message in (
        Message.user("I am Ada."),
        Message.assistant("Hello Ada."),
        Message.user("Weather?"),
        Message.assistant("", calls),
        Message("tool", "sunny in Oslo", call_id="call_1", tool_name="weather"),
    ):
        session.dispatch(ConversationMessage("main", message, at))


def test_a_turn_left_without_its_tool_results_is_left_out_with_a_warning() -> None:
    session = Session()
    _half_saved_turn(session)

    with capture_logs() as logs:
        kept = conversation_messages(session, "main")

    assert kept == (Message.user("I am Ada."), Message.assistant("Hello Ada."))
    [warning] = [log for log in logs if log["event"] == "conversation_turn_left_out"]
    assert (warning["log_level"], warning["turns"], warning["messages"]) == ("warning", 1, 3)


def test_a_half_saved_turn_is_never_sent_to_the_model(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("Your name is Ada."))
    session = Session()
    _half_saved_turn(session)

    response = make_adapter().evaluate(
        PROMPT, session=session, user_message="Who am I?", conversation="main"
    )

    assert response.text == "Your name is Ada."  # the fake refuses unanswered calls with a 400
    assert _texts(wire.name, server.requests[0].body)[-3:] == [
        "I am Ada.",
        "Hello Ada.",
        "Who am I?",
    ]


def test_messages_with_tool_calls_left_unanswered_are_refused_before_any_request(
    server: FakeProviderServer, make_adapter
) -> None:
    call = MessageToolCall("call_1", "weather", '{"city": "Oslo"}')
    messages = [Message.user("Weather?"), Message.assistant("", [call])]

    with pytest.raises(ArgumentValueError, match=r"1 tool call\(s\) have no result \('call_1'\)"):
        make_adapter().evaluate(PROMPT, session=Session(), messages=messages)

    assert server.request_count == 0


def test_a_tool_result_that_answers_no_call_is_refused_before_any_request(
    server: FakeProviderServer, make_adapter
) -> None:
    orphan = Message("tool", "sunny", call_id="call_9", tool_name="weather")

    with pytest.raises(ArgumentValueError, match="answers no call made before it"):
        make_adapter().evaluate(
            PROMPT, session=Session(), messages=[Message.user("Weather?"), orphan]
        )

    assert server.request_count == 0
