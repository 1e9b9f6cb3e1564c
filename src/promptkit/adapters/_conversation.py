"""Conversations: earlier turns as provider-neutral `Message` values (each wire API's module
spells them as its own items), and the session slice that keeps a named conversation across
evaluations and restarts.

A `PromptResponse.messages` is the whole conversation after an evaluation: the earlier turns it
was given, the user turn, every tool call and result, and the final answer. Passing it as
`messages=` to the next `evaluate` continues the conversation on any provider, since the values
name no wire format. `evaluate(..., conversation="name")` does the same through the session: the
turns are read from and appended to the `ConversationMessage` slice, which a `SessionStore`
persists like any other.

A conversation the APIs would refuse is never sent: an assistant message whose tool calls are not
all answered by the results after it (or a result answering no call) makes `messages=` a
caller's error, and in a session conversation its turn is left out with a warning. Every
evaluation keeps its turn with one session event (`ConversationTurnKept`), so a store records a
turn whole or not at all, even when the process is killed while it writes; the repair on reading
covers sessions written message by message before that.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from promptkit._names import require_key
from promptkit.errors import ArgumentTypeError, ArgumentValueError, SessionError
from promptkit.logging import get_logger
from promptkit.session import Session, register_slice_type

_log = get_logger("promptkit.adapters")

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
    """`messages` as a tuple, refusing anything that is not a `Message`, and a conversation the
    APIs would refuse (tool calls without their results, results without their call)."""
    if messages is None:
        return ()
    if isinstance(messages, str | bytes) or not all(isinstance(m, Message) for m in messages):
        raise ArgumentTypeError(
            "messages must be a sequence of promptkit Message values (for example the"
            " `messages` of an earlier PromptResponse)"
        )
    checked = tuple(messages)
    for turn in _turns(checked):
        problem = _turn_problem(checked[turn.start : turn.stop])
        if problem is not None:
            raise ArgumentValueError(
                f"messages[{turn.start}:{turn.stop}] is not a whole turn: {problem}; pass each"
                " assistant message with the results of all its tool calls, or leave the turn out"
            )
    return checked


def whole_turns(messages: Sequence[Message]) -> tuple[tuple[Message, ...], int]:
    """`messages` without the turns that are not whole (see `check_messages`), and how many
    turns were left out. A turn starts at a user message and runs to the next one."""
    kept: list[Message] = []
    dropped = 0
    for turn in _turns(messages):
        part = messages[turn.start : turn.stop]
        if _turn_problem(part) is None:
            kept.extend(part)
        else:
            dropped += 1
    return tuple(kept), dropped


def _turns(messages: Sequence[Message]) -> list[slice]:
    starts = [i for i, message in enumerate(messages) if i == 0 or message.role == "user"]
    stops = [*starts[1:], len(messages)] if starts else []
    return [slice(start, stop) for start, stop in zip(starts, stops, strict=True)]


def _turn_problem(turn: Sequence[Message]) -> str | None:
    """Why the APIs would refuse `turn`, or None: each assistant message's tool calls must be
    answered, every one, by the tool messages right after it, and a tool message must answer a
    call of the assistant message before it."""
    pending: list[str] = []
    for message in turn:
        if message.role == "tool":
            if message.call_id not in pending:
                return f"the result of call {message.call_id!r} answers no call made before it"
            pending.remove(message.call_id)
            continue
        if pending:
            break
        if message.role == "assistant":
            pending = [call.call_id for call in message.tool_calls]
    if pending:
        return f"{len(pending)} tool call(s) have no result ({', '.join(map(repr, pending[:3]))})"
    return None


# -- the session slice ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationMessage:
    """One message of the conversation named `conversation`, as a session keeps it."""

    conversation: str
    message: Message
    added_at: datetime


register_slice_type("promptkit.conversation-message", ConversationMessage)


@dataclass(frozen=True)
class ConversationTurnKept:
    """Event: `messages` (one evaluation's turn) kept in `conversation`, all at once, so a store
    records the turn in one record."""

    conversation: str
    messages: tuple[Message, ...]
    added_at: datetime


def _keep_turn(
    current: tuple[ConversationMessage, ...], event: ConversationTurnKept
) -> tuple[ConversationMessage, ...]:
    added = (ConversationMessage(event.conversation, m, event.added_at) for m in event.messages)
    return (*current, *added)


def conversation_messages(session: Session, conversation: str) -> tuple[Message, ...]:
    """The messages of `conversation` kept in `session`, oldest first; a turn that is not whole
    (tool calls without results, as a save cut short by an older promptkit left it) is left out,
    with a warning, since the APIs refuse it."""
    name = require_key(conversation, what="conversation name", error=SessionError)
    kept = tuple(
        kept.message
        for kept in session.select_where(ConversationMessage, lambda m: m.conversation == name)
    )
    whole, dropped = whole_turns(kept)
    if dropped:
        _log.warning(
            "conversation_turn_left_out",
            conversation=name,
            session_id=session.session_id,
            turns=dropped,
            messages=len(kept) - len(whole),
            reason="tool calls without their results; the APIs refuse such a conversation",
        )
    return whole


def keep_messages(
    session: Session, conversation: str, messages: Sequence[Message], *, added_at: datetime
) -> None:
    """Append `messages` to `conversation` in `session` with one event, as added at `added_at`
    (the time of the evaluation's clock)."""
    if not messages:
        return
    session.register_reducer(ConversationTurnKept, _keep_turn, slice_type=ConversationMessage)
    session.dispatch(ConversationTurnKept(conversation, tuple(messages), added_at))
