"""The tool loop, written once for every provider and every way to run an evaluation.

`tool_loop` is a generator that never does I/O itself: it yields a `SendRequest` when it needs the
model's next reply and a `RunTools` when tool calls must run, and is sent back the `WireReply` (or
the `ModelTurn` a streamed reply decoded to) or the executed calls. The driver (`_driver`)
performs those steps, blocking or with asyncio, plain or streamed; the decisions (which tool,
which calls may overlap, what goes back, when to stop, what the session records) live here
only. The calls of one reply are cut into runs of consecutive calls whose tools may overlap
(`Tool.runs_concurrently`); each run is one `RunTools`, and everything is recorded in the
reply's order however the calls finished. The `Deadline` is checked before every request and
every run of calls; running a call is `_tools`'.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from promptkit.adapters._conversation import Message, MessageToolCall, arguments_text
from promptkit.adapters._deadline import Deadline
from promptkit.adapters._options import DEFAULT_TOOL_CONCURRENCY
from promptkit.adapters._response import TokenUsage, ToolCallRecord
from promptkit.adapters._tools import ExecutedCall, aexecute_tool_call, execute_tool_call
from promptkit.adapters._tracing import EvaluationTrace
from promptkit.adapters._wire_api import (
    ModelTurn,
    RequestedToolCall,
    ToolReply,
    WireApi,
    read_turn,
)
from promptkit.errors import (
    OutputParseError,
    ToolLoopLimitError,
)
from promptkit.logging import get_logger
from promptkit.prompt import (
    RenderedPrompt,
    parse_structured_output,
)
from promptkit.session import ModelReplied, Session, ToolInvoked

_log = get_logger("promptkit.adapters")

MAX_TOOL_CALLS_PER_REPLY = 64
"""A reply asking for more tool calls than this raises `ToolLoopLimitError`; none of them run."""


@dataclass(frozen=True)
class SendRequest:
    """Step: send `request` (SDK keyword arguments) and send back the SDK response."""

    request: Mapping[str, Any]
    number: int


@dataclass(frozen=True)
class RunTool:
    """One tool call to run, giving its `ExecutedCall`: `run` blocks (the sync driver), `arun`
    is awaited (the async driver, where an `async def` handler runs on the event loop)."""

    run: Callable[[], ExecutedCall]
    arun: Callable[[], Awaitable[ExecutedCall]]
    call: RequestedToolCall


@dataclass(frozen=True)
class RunTools:
    """Step: run `calls` (one, or several that may overlap) with at most `concurrency` at once,
    and send back their `ExecutedCall`s in the same order."""

    calls: tuple[RunTool, ...]
    concurrency: int


Step = SendRequest | RunTools


@dataclass
class LoopTally:
    """What one evaluation has done so far: the only mutable state of a run, owned by it.

    Kept outside the generator so a failed run can still report its requests and usage.
    """

    requests: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    reported_model: str | None = None
    messages: list[Message] = field(default_factory=list)
    """The conversation so far: the earlier turns given, then every turn of this run."""


@dataclass(frozen=True)
class LoopOptions:
    """What one run adds to the prompt: earlier turns, request settings, how often a reply that
    fails validation is retried, and the application's value for tool handlers."""

    history: tuple[Message, ...] = ()
    request_options: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The chosen `ModelSettings` fields by name, for the request spans."""
    output_retries: int = 1
    deps: Any = None
    tool_concurrency: int = DEFAULT_TOOL_CONCURRENCY
    trace: EvaluationTrace = field(
        default_factory=lambda: EvaluationTrace(
            provider="", model="", prompt_name="", enabled=False
        )
    )


def tool_loop(
    *,
    rendered: RenderedPrompt[Any],
    api: WireApi,
    session: Session,
    deadline: Deadline,
    max_tool_rounds: int,
    user_message: str,
    tally: LoopTally,
    options: LoopOptions | None = None,
) -> Generator[Step, Any, ModelTurn]:
    """Ask the model, run the tools it calls, send the results back; return the final turn.

    The final turn is the first reply without tool calls whose text parses into the output
    type. A reply that does not parse goes back to the model with the validation error, up to
    `output_retries` times; after that the last reply is returned (and fails to parse again for
    the caller). A reply that still calls tools after `max_tool_rounds` rounds of tool calls
    raises `ToolLoopLimitError` (its calls do not run). The driver sends back the SDK response
    or, when it decoded a stream itself, the `ModelTurn`.
    """
    options = options or LoopOptions()
    conversation = api.start(rendered, user_message)
    conversation = conversation.with_history(api.history_items(options.history))
    conversation = conversation.with_options(options.request_options)
    tally.messages.extend([*options.history, Message.user(user_message)])
    options.trace.user_turn(user_message)
    rounds = 0
    retries_left = options.output_retries
    while True:
        deadline.check(f"request {tally.requests + 1}")
        tally.requests += 1
        with options.trace.request(options.settings) as request_span:
            reply = yield SendRequest(conversation.request(), tally.requests)
            turn = reply if isinstance(reply, ModelTurn) else read_turn(api, reply)
            request_span.replied(
                model=turn.model, usage=turn.usage, finish_reason=turn.finish_reason
            )
        tally.usage += turn.usage
        tally.reported_model = turn.model or tally.reported_model
        tally.messages.append(_assistant_message(turn))
        session.dispatch(
            ModelReplied(
                prompt_ns=rendered.ns,
                prompt_key=rendered.key,
                request=tally.requests,
                input_tokens=turn.usage.input_tokens,
                output_tokens=turn.usage.output_tokens,
                tool_calls=len(turn.tool_calls),
                finish_reason=turn.finish_reason,
                replied_at=deadline.clock.now(),
            )
        )
        if not turn.tool_calls:
            # A truncated or refused answer is reported as such by the caller; asking again
            # would only repeat it.
            is_complete = turn.refusal is None and turn.finish_reason not in (
                "length",
                "content_filter",
            )
            problem = (
                _output_problem(rendered, turn.text) if retries_left > 0 and is_complete else None
            )
            if problem is None:
                return turn
            retries_left -= 1
            retry = Message.user(
                f"Your reply did not match the Response Format: {problem}. Reply again with"
                " only the JSON it asks for."
            )
            tally.messages.append(retry)
            conversation = conversation.extended([*turn.replay(), *api.history_items([retry])])
            continue
        if len(turn.tool_calls) > MAX_TOOL_CALLS_PER_REPLY:
            raise ToolLoopLimitError(
                f"prompt {rendered.ns}/{rendered.key}: the model asked for"
                f" {len(turn.tool_calls)} tool calls in one reply, more than the limit of"
                f" {MAX_TOOL_CALLS_PER_REPLY}; none were run. Tell the prompt to call fewer"
                " tools at a time"
            )
        if rounds >= max_tool_rounds:
            names = ", ".join(sorted({call.name for call in turn.tool_calls}))
            raise ToolLoopLimitError(
                f"prompt {rendered.ns}/{rendered.key}: the model still called tools ({names})"
                f" after {max_tool_rounds} tool rounds; raise max_tool_rounds or tell the prompt"
                " when to stop calling tools"
            )
        rounds += 1
        replies: list[ToolReply] = []
        for group in _overlapping_runs(rendered, turn.tool_calls):
            names = ", ".join(repr(call.name) for call in group)
            deadline.check(f"tool call {names}")
            with ExitStack() as spans:
                tool_spans = [
                    spans.enter_context(
                        options.trace.tool_call(call.name, call.call_id, call.arguments)
                    )
                    for call in group
                ]
                executed_calls: Sequence[ExecutedCall] = yield RunTools(
                    tuple(
                        RunTool(
                            partial(
                                execute_tool_call, rendered, call, deadline, session, options.deps
                            ),
                            partial(
                                aexecute_tool_call, rendered, call, deadline, session, options.deps
                            ),
                            call,
                        )
                        for call in group
                    ),
                    options.tool_concurrency,
                )
                for tool_span, executed in zip(tool_spans, executed_calls, strict=True):
                    record = executed.record
                    tool_span.finished(result=record.result.message, success=record.success)
            for call, executed in zip(group, executed_calls, strict=True):
                _record_call(rendered, call, executed, session, deadline, tally)
                record = executed.record
                replies.append(ToolReply(call, record.result.message, is_error=not record.success))
            if deadline.at is not None and deadline.clock.monotonic() >= deadline.at:
                slowest = max((executed.record for executed in executed_calls), key=_duration)
                raise deadline.exceeded(
                    f"while tool {slowest.name!r} ran (it took"
                    f" {slowest.duration.total_seconds():.1f}s)"
                )
        conversation = conversation.extended([*turn.replay(), *api.tool_results(replies)])


def _overlapping_runs(
    rendered: RenderedPrompt[Any], calls: Sequence[RequestedToolCall]
) -> Iterator[tuple[RequestedToolCall, ...]]:
    """`calls` in order, cut into runs that may run at once: consecutive calls whose tools run
    concurrently share a run; any other call runs alone."""
    run: list[RequestedToolCall] = []
    for call in calls:
        if _runs_concurrently(rendered, call):
            run.append(call)
            continue
        if run:
            yield tuple(run)
            run = []
        yield (call,)
    if run:
        yield tuple(run)


def _runs_concurrently(rendered: RenderedPrompt[Any], call: RequestedToolCall) -> bool:
    # A call no handler will run (an unknown tool, cut-off arguments) is answered at once.
    tool = rendered.tool(call.name)
    return call.truncated or tool is None or tool.runs_concurrently


def _record_call(
    rendered: RenderedPrompt[Any],
    call: RequestedToolCall,
    executed: ExecutedCall,
    session: Session,
    deadline: Deadline,
    tally: LoopTally,
) -> None:
    """The session event, the response's record and the conversation's message of one call."""
    record = executed.record
    session.dispatch(
        ToolInvoked(
            prompt_ns=rendered.ns,
            prompt_key=rendered.key,
            name=record.name,
            params=executed.params_json,
            result_message=record.result.message,
            value=executed.value_json,
            success=record.success,
            duration_s=record.duration.total_seconds(),
            call_id=record.call_id,
            invoked_at=deadline.clock.now(),
        )
    )
    tally.tool_calls.append(record)
    tally.messages.append(
        Message(
            "tool",
            record.result.message,
            call_id=call.call_id,
            tool_name=call.name,
            is_error=not record.success,
        )
    )


def _duration(record: ToolCallRecord) -> float:
    return record.duration.total_seconds()


def _assistant_message(turn: ModelTurn) -> Message:
    return Message.assistant(
        turn.text,
        (
            MessageToolCall(call.call_id, call.name, arguments_text(call.arguments))
            for call in turn.tool_calls
        ),
    )


def _output_problem(rendered: RenderedPrompt[Any], text: str) -> str | None:
    """Why `text` does not parse into the output type, or None when it does (or none is asked)."""
    if rendered.output_type is None:
        return None
    try:
        parse_structured_output(text, rendered.output_type)
    except OutputParseError as error:
        return str(error)
    return None
