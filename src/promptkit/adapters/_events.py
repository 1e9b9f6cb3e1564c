"""The events of a streamed evaluation (`stream`, `astream`), in the order things happen:
`TextDelta`s of a reply, its `UsageReported`, then for each tool call it made `ToolCallStarted`
and `ToolCallFinished`, then the next reply's deltas, and last one `ResponseCompleted` holding
the `PromptResponse` that `evaluate` would have returned. `response_of` reads them to that one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from promptkit.adapters._response import PromptResponse, TokenUsage, ToolCallRecord
from promptkit.errors import ProviderError

OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class TextDelta:
    """A piece of reply text, in order; `request` numbers the reply within the evaluation."""

    text: str
    request: int


@dataclass(frozen=True)
class UsageReported:
    """A reply is complete; `usage` is what that one request cost."""

    usage: TokenUsage
    request: int


@dataclass(frozen=True)
class ToolCallStarted:
    """A tool the model called is about to run, with the arguments as the model sent them."""

    call_id: str
    name: str
    arguments: str | Mapping[str, Any]


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call ran; `record.result` is what goes back to the model."""

    record: ToolCallRecord


@dataclass(frozen=True)
class ResponseCompleted(Generic[OutputT]):
    """The last event: the evaluation's `PromptResponse`."""

    response: PromptResponse[OutputT]


StreamEvent: TypeAlias = (
    TextDelta | UsageReported | ToolCallStarted | ToolCallFinished | ResponseCompleted[OutputT]
)


def response_of(
    events: Iterable[StreamEvent[OutputT]], *, on_text: Callable[[str], None]
) -> PromptResponse[OutputT]:
    """Read `events` to the end, handing each piece of reply text to `on_text` as it arrives
    (print it, for example); return the final `PromptResponse`."""
    for event in events:
        if isinstance(event, TextDelta):
            on_text(event.text)
        elif isinstance(event, ResponseCompleted):
            return event.response
    raise ProviderError("the event stream ended without a ResponseCompleted event")
