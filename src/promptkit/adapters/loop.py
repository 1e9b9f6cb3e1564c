"""The tool loop, written once for every provider, sync and async alike.

`tool_loop` is a generator that never does I/O itself: it yields a `SendRequest` when it needs the
model's next reply and a `RunTool` when a tool must run, and is sent back the `WireReply` or the
executed call. `ProviderAdapter.evaluate` drives it with blocking calls, `aevaluate` with awaited
ones; the decisions (which tool, what goes back, when to stop, what the session records) live
here only. `Deadline` is the one clock every step checks.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from functools import partial
from typing import Any

from promptkit.adapters._wire_api import (
    ModelTurn,
    RequestedToolCall,
    ToolReply,
    WireApi,
    read_turn,
)
from promptkit.adapters.conversation import Message, MessageToolCall, arguments_text
from promptkit.adapters.response import TokenUsage, ToolCallRecord, json_ready
from promptkit.adapters.tracing import EvaluationTrace
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    OutputParseError,
    ProviderTimeoutError,
    ToolLoopLimitError,
    ToolValidationError,
)
from promptkit.logging import get_logger
from promptkit.prompt import (
    RenderedPrompt,
    Tool,
    ToolContext,
    ToolResult,
    parse_structured_output,
)
from promptkit.prompt.params import type_adapter
from promptkit.secrets import redact_secrets
from promptkit.session import Session, ToolInvoked

_log = get_logger("promptkit.adapters")

DEFAULT_USER_MESSAGE = "Follow the instructions above."
"""The user turn sent after the rendered prompt when `evaluate` is not given one."""

MAX_TOOL_CALLS_PER_REPLY = 64
"""A reply asking for more tool calls than this raises `ToolLoopLimitError`; none of them run."""

MAX_TOOL_RESULT_BYTES = 256 * 1024
"""A tool result message longer than this (UTF-8) is cut to it, with a note saying so."""


@dataclass(frozen=True)
class Deadline:
    """When an evaluation must be over: `at` is a `clock.monotonic()` value, None for never.

    The deadline carries its clock, so the tool loop, retry pauses and tool handlers all read
    the same time (a test passes a `FakeClock` and advances it instead of sleeping).
    """

    at: float | None = None
    budget_s: float | None = None
    clock: Clock = SYSTEM_CLOCK

    @classmethod
    def within(cls, budget: float | timedelta | None, clock: Clock = SYSTEM_CLOCK) -> Deadline:
        """A deadline `budget` from now (seconds or a timedelta); None means no deadline."""
        if budget is None:
            return cls(clock=clock)
        seconds = budget.total_seconds() if isinstance(budget, timedelta) else budget
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ArgumentTypeError(
                f"deadline must be seconds (a number) or a timedelta, got {type(budget).__name__}"
            )
        if not (math.isfinite(seconds) and seconds > 0):
            raise ArgumentValueError(f"deadline must be a positive, finite time, got {budget!r}")
        return cls(at=clock.monotonic() + seconds, budget_s=float(seconds), clock=clock)

    def remaining(self) -> float | None:
        """Seconds left (0.0 once passed), or None without a deadline."""
        if self.at is None:
            return None
        return max(0.0, self.at - self.clock.monotonic())

    def exceeded(self, while_doing: str) -> ProviderTimeoutError:
        """The error for running past this deadline `while_doing` something."""
        return ProviderTimeoutError(
            f"the evaluation's deadline of {self.budget_s:g}s passed {while_doing}; raise the"
            " deadline or make the prompt need fewer tool rounds"
        )

    def check(self, before_doing: str) -> None:
        """Raise `ProviderTimeoutError` when the deadline has passed."""
        if self.at is not None and self.clock.monotonic() >= self.at:
            raise self.exceeded(f"before {before_doing}")


@dataclass(frozen=True)
class SendRequest:
    """Step: send `request` (SDK keyword arguments) and send back the SDK response."""

    request: Mapping[str, Any]
    number: int


@dataclass(frozen=True)
class RunTool:
    """Step: run one tool call and send back the `ExecutedCall`: `run` blocks (the sync driver),
    `arun` is awaited (the async driver, where an `async def` handler runs on the event loop)."""

    run: Callable[[], ExecutedCall]
    arun: Callable[[], Awaitable[ExecutedCall]]
    call: RequestedToolCall


Step = SendRequest | RunTool


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
class ExecutedCall:
    """A tool call's record and its params and value in JSON-ready form, for the session."""

    record: ToolCallRecord
    params_json: Mapping[str, Any]
    value_json: Any


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
        for call in turn.tool_calls:
            deadline.check(f"tool call {call.name!r}")
            with options.trace.tool_call(call.name, call.call_id, call.arguments) as tool_span:
                executed: ExecutedCall = yield RunTool(
                    partial(execute_tool_call, rendered, call, deadline, session, options.deps),
                    partial(aexecute_tool_call, rendered, call, deadline, session, options.deps),
                    call,
                )
                record = executed.record
                tool_span.finished(result=record.result.message, success=record.success)
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
            if deadline.at is not None and deadline.clock.monotonic() >= deadline.at:
                raise deadline.exceeded(
                    f"while tool {record.name!r} ran (it took"
                    f" {record.duration.total_seconds():.1f}s)"
                )
            replies.append(ToolReply(call, record.result.message, is_error=not record.success))
        conversation = conversation.extended([*turn.replay(), *api.tool_results(replies)])


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


@dataclass(frozen=True)
class _ReadyCall:
    tool: Tool[Any]
    params: Any
    context: ToolContext[Any]
    timing: tuple[float, Clock]


def execute_tool_call(
    rendered: RenderedPrompt[Any],
    call: RequestedToolCall,
    deadline: Deadline,
    session: Session | None = None,
    deps: Any = None,
) -> ExecutedCall:
    """Validate and run one call; every failure becomes an error result for the model.

    An unknown tool, arguments that do not validate or a call cut off by the token limit are
    answered with what was wrong, so the model can correct itself; an error result without a
    message gets one. A handler that raises is answered with the exception type only
    (its message may hold internal details) and logged as `tool_handler_failed`.
    """
    ready = _prepare(rendered, call, deadline, session, deps)
    if isinstance(ready, ExecutedCall):
        return ready
    try:
        result = ready.tool.run(ready.params, ready.context)
    except Exception as error:
        result = _handler_failed(rendered, ready, error)
    return _finished(call, ready, result)


async def aexecute_tool_call(
    rendered: RenderedPrompt[Any],
    call: RequestedToolCall,
    deadline: Deadline,
    session: Session | None = None,
    deps: Any = None,
) -> ExecutedCall:
    """`execute_tool_call` for asyncio; an async handler is cancelled at the deadline."""
    ready = _prepare(rendered, call, deadline, session, deps)
    if isinstance(ready, ExecutedCall):
        return ready
    cancellable = ready.tool.is_async and deadline.at is not None
    try:
        async with asyncio.timeout(deadline.remaining() if cancellable else None) as scope:
            result = await ready.tool.arun(ready.params, ready.context)
    except TimeoutError as error:
        if scope.expired():
            result = ToolResult(
                message=f"tool {ready.tool.name!r} was cancelled: the evaluation's deadline passed",
                success=False,
            )
        else:  # the handler's own TimeoutError
            result = _handler_failed(rendered, ready, error)
    except Exception as error:
        result = _handler_failed(rendered, ready, error)
    return _finished(call, ready, result)


def _prepare(
    rendered: RenderedPrompt[Any],
    call: RequestedToolCall,
    deadline: Deadline,
    session: Session | None,
    deps: Any,
) -> _ReadyCall | ExecutedCall:
    clock = deadline.clock
    started = clock.monotonic()
    if call.truncated:
        # The arguments stop mid-way; running the tool with what arrived (often `{}`) would act
        # on input the model never finished writing.
        failure = ToolResult(
            message=f"your call to {call.name!r} was cut off by the output token limit before"
            " its arguments were complete, so it did not run; call it again with shorter"
            " arguments",
            success=False,
        )
        return _executed(call, _raw_arguments(call), failure, (started, clock), params_json=None)
    tool = rendered.tool(call.name)
    if tool is None:
        offered = ", ".join(t.name for t in rendered.tools) or "none"
        failure = ToolResult(
            message=f"unknown tool {call.name!r}; the tools offered are: {offered}",
            success=False,
        )
        return _executed(call, _raw_arguments(call), failure, (started, clock), params_json=None)
    try:
        params = tool.parse_arguments(call.arguments)
    except ToolValidationError as error:
        failure = ToolResult(
            message=f"{error}; call the tool again with arguments that match its schema",
            success=False,
        )
        return _executed(call, _raw_arguments(call), failure, (started, clock), params_json=None)
    context: ToolContext[Any] = ToolContext(
        rendered.ns,
        rendered.key,
        call.call_id,
        deadline.at,
        clock,
        deps=deps,
        session=session,
    )
    return _ReadyCall(tool, params, context, (started, clock))


def _handler_failed(
    rendered: RenderedPrompt[Any], ready: _ReadyCall, error: Exception
) -> ToolResult:
    _log.warning(
        "tool_handler_failed",
        tool=ready.tool.name,
        error_type=type(error).__name__,
        error=redact_secrets(str(error))[:300],
        prompt_ns=rendered.ns,
        prompt_key=rendered.key,
        call_id=ready.context.call_id,
    )
    return ToolResult(
        message=f"tool {ready.tool.name!r} failed with {type(error).__name__}; the error was"
        " logged. Try different arguments or continue without this tool.",
        success=False,
    )


def _finished(call: RequestedToolCall, ready: _ReadyCall, result: ToolResult) -> ExecutedCall:
    if not result.success and not result.message.strip():
        # Providers refuse an error result without content (Anthropic answers 400).
        result = replace(
            result, message=f"tool {ready.tool.name!r} failed without saying why; try another way"
        )
    return _executed(
        call,
        ready.params,
        _bounded(result),
        ready.timing,
        params_json=_params_json(ready.tool, ready.params),
    )


def _bounded(result: ToolResult) -> ToolResult:
    """`result` with its message cut to `MAX_TOOL_RESULT_BYTES`, saying so when it was."""
    encoded = result.message.encode("utf-8")
    if len(encoded) <= MAX_TOOL_RESULT_BYTES:
        return result
    kept = encoded[:MAX_TOOL_RESULT_BYTES].decode("utf-8", errors="ignore")
    note = (
        f"\n[promptkit truncated this result: {len(encoded):,} bytes, the first"
        f" {MAX_TOOL_RESULT_BYTES:,} shown; ask for less at a time]"
    )
    return ToolResult(message=kept + note, value=result.value, success=result.success)


def _executed(
    call: RequestedToolCall,
    params: Any,
    result: ToolResult,
    timing: tuple[float, Clock],
    *,
    params_json: Mapping[str, Any] | None,
) -> ExecutedCall:
    started, clock = timing
    record = ToolCallRecord(
        name=call.name,
        call_id=call.call_id,
        params=params,
        result=result,
        duration=timedelta(seconds=clock.monotonic() - started),
    )
    if params_json is None:
        params_json = params if isinstance(params, dict) else {}
    return ExecutedCall(record, json_ready(params_json), json_ready(result.value))


def _raw_arguments(call: RequestedToolCall) -> Any:
    """The arguments as sent: a dict when they are a JSON object, else the text itself."""
    if not isinstance(call.arguments, str):
        return dict(call.arguments)
    try:
        decoded = json.loads(call.arguments)
    except ValueError:
        return call.arguments
    return decoded if isinstance(decoded, dict) else call.arguments


def _params_json(tool: Tool[Any], params: Any) -> Mapping[str, Any]:
    dumped = type_adapter(tool.params_type).dump_python(params, mode="json")
    return dumped if isinstance(dumped, dict) else {}
