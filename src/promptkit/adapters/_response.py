"""What `evaluate` returns: the reply text, the parsed output, every tool call, token usage and
why the model stopped.

All values are frozen. Token counts are the provider's own, summed over the requests of one
evaluation and never recomputed: OpenAI's `input_tokens` include the cached ones, Anthropic's
exclude them (`cached_tokens` is its `cache_read_input_tokens`, `cache_write_tokens` its
`cache_creation_input_tokens`). A count is None when no request of the evaluation reported it.
`session_token_usage` adds up what a session's evaluations recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from promptkit.prompt import ToolResult
from promptkit.session import PromptExecuted, SessionProtocol

if TYPE_CHECKING:
    # Named in an annotation only: a program that only names these types (the code-review
    # example, which `promptkit overrides list` imports for its prompt) loads no conversation.
    from promptkit.adapters._conversation import Message

OutputT = TypeVar("OutputT")
N = TypeVar("N", int, float)

FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "refusal"]
"""Why the model stopped, the same for every provider: `stop` (a complete answer), `tool_calls`
(it called tools), `length` (cut off by the output token limit or the context window),
`content_filter` (cut off by the provider's filter) or `refusal` (it declined)."""


@dataclass(frozen=True)
class TokenUsage:
    """Input, output, cache-read, cache-write and reasoning tokens, as the provider reported
    them (reasoning tokens are part of the output tokens)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    """US dollars of the calls that have a price (`PriceTable`); None when none has one."""
    unpriced: int = 0
    """How many of the calls counted here have no price, so `cost` leaves them out."""

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=_add(self.input_tokens, other.input_tokens),
            output_tokens=_add(self.output_tokens, other.output_tokens),
            cached_tokens=_add(self.cached_tokens, other.cached_tokens),
            cache_write_tokens=_add(self.cache_write_tokens, other.cache_write_tokens),
            reasoning_tokens=_add(self.reasoning_tokens, other.reasoning_tokens),
            cost=_add(self.cost, other.cost),
            unpriced=self.unpriced + other.unpriced,
        )

    @property
    def cost_text(self) -> str:
        """The cost as people read it: `$0.0012`, `$0.0012 + 2 unpriced`, `2 unpriced`, or `n/a`
        when nothing was counted; an unpriced call is never shown as 0."""
        return cost_text(self.cost, self.unpriced)

    def to_json(self) -> dict[str, float | None]:
        """The counts as a JSON object (manifest metadata, logs)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost": self.cost,
            "unpriced": self.unpriced,
        }


def cost_text(cost: float | None, unpriced: int) -> str:
    """`TokenUsage.cost_text` of a cost and a count of unpriced calls."""
    known = None if cost is None else dollars(cost)
    if not unpriced:
        return known or "n/a"
    left_out = f"{unpriced} unpriced"
    return left_out if known is None else f"{known} + {left_out}"


def dollars(cost: float) -> str:
    """`cost` in dollars, with the digits a small amount needs (`$0.000012`, `$1.2345`)."""
    return f"${cost:.6f}" if cost < 0.01 else f"${cost:.4f}"


def session_token_usage(session: SessionProtocol) -> TokenUsage:
    """Every token the evaluations recorded in `session` reported, added up."""
    return executed_token_usage(session.select_all(PromptExecuted))


def executed_token_usage(events: Iterable[PromptExecuted]) -> TokenUsage:
    """The token counts of `events` added up."""
    total = TokenUsage()
    for executed in events:
        total += TokenUsage(
            input_tokens=executed.input_tokens,
            output_tokens=executed.output_tokens,
            cached_tokens=executed.cached_tokens,
            cache_write_tokens=executed.cache_write_tokens,
            reasoning_tokens=executed.reasoning_tokens,
            cost=executed.cost,
            unpriced=1 if executed.cost is None else 0,
        )
    return total


def _add(left: N | None, right: N | None) -> N | None:
    if left is None:
        return right
    if right is None:
        return left
    return left + right


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call the model made and what it got back.

    `params` is the validated params object, or, when the tool is unknown or the arguments did
    not validate, the arguments as the model sent them (a dict when they were a JSON object,
    else the raw text). `result` is what the model was sent back.
    """

    name: str
    call_id: str
    params: Any
    result: ToolResult
    # Two runs that made the same call are equal however long the handler took.
    duration: timedelta = field(compare=False)

    @property
    def success(self) -> bool:
        """Whether the call ran and its handler reported success."""
        return self.result.success


@dataclass(frozen=True)
class PromptResponse(Generic[OutputT]):
    """The outcome of one `evaluate`: final text, parsed output, the tool calls in the order they
    ran, token usage summed over every request (output retries included), who answered, why the
    last reply ended (`finish_reason`), when the model declined its explanation (`refusal`), and
    the conversation (`messages`).

    `output` is typed from the prompt: a `Prompt[Review]` answers a `Review` (a reply that does
    not parse raises `OutputParseError` instead), a prompt without output type answers None.
    """

    prompt_name: str
    text: str
    output: OutputT
    tool_calls: tuple[ToolCallRecord, ...]
    usage: TokenUsage
    model: str
    provider: str
    finish_reason: FinishReason = "stop"
    refusal: str | None = None
    messages: tuple[Message, ...] = ()
    """The whole conversation after this evaluation: the earlier turns it was given, then its
    user turn, tool calls, tool results and answer. Pass it as `messages=` to continue."""

    @property
    def is_truncated(self) -> bool:
        """Whether the answer was cut off before it was complete."""
        return self.finish_reason in ("length", "content_filter")
