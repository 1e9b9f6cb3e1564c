"""Conversations: earlier turns as provider-neutral `Message` values (each wire API's module
spells them as its own items), and the session slice that keeps a named conversation across
evaluations and restarts.

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
from datetime import datetime
from typing import Any, Literal

from promptkit._names import require_key
from promptkit.errors import ArgumentTypeError, ArgumentValueError, SessionError
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
            raise ArgumentValueError(
                f"Message.role must be user, assistant or tool, got {self.role!r}"
            )
        if self.role == "tool" and not self.call_id:
            raise ArgumentValueError("a tool Message needs the call_id of the call it answers")
        if self.tool_calls and self.role != "assistant":
            raise ArgumentValueError("only an assistant Message carries tool_calls")

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
        raise ArgumentTypeError(
            "messages must be a sequence of promptkit Message values (for example the"
            " `messages` of an earlier PromptResponse)"
        )
    return tuple(messages)


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


@dataclass(frozen=True)
class ConversationTurn:
    """The messages one evaluation added to a conversation: dispatched as one event, so a store
    records the turn whole or not at all, and two workers' turns never interleave."""

    messages: tuple[ConversationMessage, ...]


def _append_turn(
    kept: tuple[ConversationMessage, ...], turn: ConversationTurn
) -> tuple[ConversationMessage, ...]:
    return (*kept, *turn.messages)


def keep_messages(
    session: Session, conversation: str, messages: Sequence[Message], *, added_at: datetime
) -> None:
    """Append `messages` to `conversation` in `session` as one turn (one event), as added at
    `added_at` (the time of the evaluation's clock)."""
    if not messages:
        return
    session.register_reducer(ConversationTurn, _append_turn, ConversationMessage)
    session.dispatch(
        ConversationTurn(tuple(ConversationMessage(conversation, m, added_at) for m in messages))
    )
