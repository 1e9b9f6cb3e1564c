"""Conversations: earlier turns as provider-neutral `Message` values, how each wire API spells
them, and the session slice that keeps a named conversation across evaluations and restarts.

A `PromptResponse.messages` is the whole conversation after an evaluation: the earlier turns it
was given, the user turn, every tool call and result, and the final answer. Passing it as
`messages=` to the next `evaluate` continues the conversation on any provider, since the values
name no wire format. `evaluate(..., conversation="name")` does the same through the session: the
turns are read from and appended to the `ConversationMessage` slice, which a `SessionStore`
persists like any other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from promptkit.errors import SessionError
from promptkit.names import require_key
from promptkit.session import Session, register_slice_type

Role = Literal["user", "assistant", "tool"]
_ROLES: tuple[Role, ...] = ("user", "assistant", "tool")


@dataclass(frozen=True)
class MessageToolCall:
    """A tool call the model made in an assistant message; `arguments` is JSON text."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """One turn of a conversation.

    `user`: `text` is what the user said. `assistant`: `text` is the reply (may be empty when
    the reply only called tools) and `tool_calls` the calls it made. `tool`: `text` is the result
    of call `call_id` to tool `tool_name`, `is_error` whether the call failed.
    """

    role: Role
    text: str = ""
    tool_calls: tuple[MessageToolCall, ...] = ()
    call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"Message.role must be user, assistant or tool, got {self.role!r}")
        if self.role == "tool" and not self.call_id:
            raise ValueError("a tool Message needs the call_id of the call it answers")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only an assistant Message carries tool_calls")

    @classmethod
    def user(cls, text: str) -> Message:
        """A user turn."""
        return cls("user", text)

    @classmethod
    def assistant(cls, text: str, tool_calls: Iterable[MessageToolCall] = ()) -> Message:
        """An assistant turn."""
        return cls("assistant", text, tuple(tool_calls))


def arguments_text(arguments: str | Mapping[str, Any]) -> str:
    """Tool-call arguments as JSON text, however the provider sent them."""
    return arguments if isinstance(arguments, str) else json.dumps(dict(arguments))


def check_messages(messages: Sequence[Message] | None) -> tuple[Message, ...]:
    """`messages` as a tuple, refusing anything that is not a `Message`."""
    if messages is None:
        return ()
    if isinstance(messages, str | bytes) or not all(isinstance(m, Message) for m in messages):
        raise TypeError(
            "messages must be a sequence of promptkit Message values (for example the"
            " `messages` of an earlier PromptResponse)"
        )
    return tuple(messages)


# -- wire encodings -----------------------------------------------------------------------------


def wire_items(api: str, messages: Sequence[Message]) -> list[Mapping[str, Any]]:
    """`messages` as the conversation items of wire API `api`."""
    if api == "responses":
        return [item for message in messages for item in _responses_items(message)]
    if api == "chat":
        return [_chat_item(message) for message in messages]
    return _messages_items(messages)


def _responses_items(message: Message) -> list[Mapping[str, Any]]:
    if message.role == "tool":
        return [
            {"type": "function_call_output", "call_id": message.call_id, "output": message.text}
        ]
    items: list[Mapping[str, Any]] = []
    if message.text or not message.tool_calls:
        items.append({"role": message.role, "content": message.text})
    items.extend(
        {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments}
        for c in message.tool_calls
    )
    return items


def _chat_item(message: Message) -> Mapping[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.text}
    if not message.tool_calls:
        return {"role": message.role, "content": message.text}
    return {
        "role": "assistant",
        "content": message.text or None,
        "tool_calls": [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ],
    }


def _messages_items(messages: Sequence[Message]) -> list[Mapping[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": message.text,
                "is_error": message.is_error,
            }
            previous = items[-1] if items else None
            # Every result of one turn goes back in a single user message, as the API requires.
            if previous is not None and previous.get("tool_results"):
                previous["content"].append(block)
            else:
                items.append({"role": "user", "content": [block], "tool_results": True})
        elif message.role == "user":
            items.append({"role": "user", "content": message.text})
        else:
            content: list[dict[str, Any]] = []
            if message.text:
                content.append({"type": "text", "text": message.text})
            content.extend(
                {"type": "tool_use", "id": c.call_id, "name": c.name, "input": _object(c)}
                for c in message.tool_calls
            )
            items.append({"role": "assistant", "content": content})
    return [{key: value for key, value in item.items() if key != "tool_results"} for item in items]


def _object(call: MessageToolCall) -> Any:
    try:
        decoded = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return decoded if isinstance(decoded, dict) else {}


# -- the session slice ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationMessage:
    """One message of the conversation named `conversation`, as a session keeps it."""

    conversation: str
    message: Message
    added_at: datetime


register_slice_type("promptkit.conversation-message", ConversationMessage)


def conversation_messages(session: Session, conversation: str) -> tuple[Message, ...]:
    """The messages of `conversation` kept in `session`, oldest first."""
    name = require_key(conversation, what="conversation name", error=SessionError)
    return tuple(
        kept.message
        for kept in session.select_where(ConversationMessage, lambda m: m.conversation == name)
    )


def keep_messages(session: Session, conversation: str, messages: Sequence[Message]) -> None:
    """Append `messages` to `conversation` in `session`."""
    now = datetime.now(UTC)
    for message in messages:
        session.dispatch(ConversationMessage(conversation, message, now))
