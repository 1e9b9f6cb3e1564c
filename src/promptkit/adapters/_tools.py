"""One tool call the model asked for, validated and run, its every failure turned into an error
result the model can act on; blocking (`execute_tool_call`) or with asyncio
(`aexecute_tool_call`, where an `async def` handler runs on the event loop and is cancelled at
the deadline).

An unknown tool, arguments that do not validate or a call cut off by the token limit are
answered with what was wrong; a handler that raises is answered with the exception type only
(its message may hold internal details) and logged as `tool_handler_failed`. A result longer
than `MAX_TOOL_RESULT_BYTES` is cut, saying so.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from promptkit._blocking import call_blocking
from promptkit._jsonable import json_ready
from promptkit.adapters._deadline import Deadline
from promptkit.adapters._response import ToolCallRecord
from promptkit.adapters._wire_api import RequestedToolCall
from promptkit.clock import Clock
from promptkit.errors import CallAbandonedError, ToolValidationError
from promptkit.logging import get_logger
from promptkit.prompt import RenderedPrompt, Tool, ToolContext, ToolResult
from promptkit.secrets import redact_secrets
from promptkit.session import Session

_log = get_logger("promptkit.adapters")

MAX_TOOL_RESULT_BYTES = 256 * 1024
"""A tool result message longer than this (UTF-8) is cut to it, with a note saying so."""


@dataclass(frozen=True)
class ExecutedCall:
    """A tool call's record and its params and value in JSON-ready form, for the session."""

    record: ToolCallRecord
    params_json: Mapping[str, Any]
    value_json: Any


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
        if deadline.at is None:
            result = ready.tool.run(ready.params, ready.context)
        else:
            # On a thread the caller stops waiting for at the deadline: a handler that blocks
            # past it is left behind, and the model is told so.
            result = call_blocking(
                lambda: ready.tool.run(ready.params, ready.context),
                timeout=deadline.remaining(),
            )
    except CallAbandonedError:
        result = _past_deadline(ready)
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
    # An async handler is cancelled at the deadline; a blocking one is left on its thread.
    try:
        async with asyncio.timeout(
            deadline.remaining() if deadline.at is not None else None
        ) as scope:
            result = await ready.tool.arun(ready.params, ready.context)
    except TimeoutError as error:
        if scope.expired():
            result = _past_deadline(ready)
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
        return _executed(call, _raw_arguments(call), failure, (started, clock))
    tool = rendered.tool(call.name)
    if tool is None:
        offered = ", ".join(t.name for t in rendered.tools) or "none"
        failure = ToolResult(
            message=f"unknown tool {call.name!r}; the tools offered are: {offered}",
            success=False,
        )
        return _executed(call, _raw_arguments(call), failure, (started, clock))
    try:
        params = tool.parse_arguments(call.arguments)
    except ToolValidationError as error:
        failure = ToolResult(
            message=f"{error}; call the tool again with arguments that match its schema",
            success=False,
        )
        return _executed(call, _raw_arguments(call), failure, (started, clock))
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


def _past_deadline(ready: _ReadyCall) -> ToolResult:
    return ToolResult(
        message=f"tool {ready.tool.name!r} was cancelled: the evaluation's deadline passed",
        success=False,
    )


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
    return _executed(call, ready.params, _bounded(result), ready.timing)


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
) -> ExecutedCall:
    started, clock = timing
    record = ToolCallRecord(
        name=call.name,
        call_id=call.call_id,
        params=params,
        result=result,
        duration=timedelta(seconds=clock.monotonic() - started),
    )
    # The session records params as a JSON object: validated params as their fields, arguments
    # that did not validate as sent when they were an object, else none.
    params_json = json_ready(params)
    return ExecutedCall(
        record, params_json if isinstance(params_json, dict) else {}, json_ready(result.value)
    )


def _raw_arguments(call: RequestedToolCall) -> Any:
    """The arguments as sent: a dict when they are a JSON object, else the text itself."""
    if not isinstance(call.arguments, str):
        return dict(call.arguments)
    try:
        decoded = json.loads(call.arguments)
    except ValueError:
        return call.arguments
    return decoded if isinstance(decoded, dict) else call.arguments
