"""The progress of an optimization never goes silent: while the model thinks, a status line with
the elapsed time, tokens and tool calls so far is redrawn on a terminal and written as a line
at each tick in a pipe. Time is a FakeClock; the ticker's stop signal is scripted."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from promptkit.clock import FakeClock
from promptkit.repl import Progress
from promptkit.session import ModelReplied, ToolInvoked

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _reply(request: int, input_tokens: int | None, output_tokens: int | None) -> ModelReplied:
    return ModelReplied(
        prompt_ns="tests",
        prompt_key="progress",
        request=request,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        tool_calls=1,
        finish_reason="tool_calls",
        replied_at=AT,
    )


def _call() -> ToolInvoked:
    return ToolInvoked(
        prompt_ns="tests",
        prompt_key="progress",
        name="vfs_list_directory",
        params={"path": "/"},
        result_message="README.md",
        value=None,
        success=True,
        duration_s=0.01,
        call_id="call_1",
        invoked_at=AT,
    )


class Ticks:
    """A stop signal that lets the ticker run `count` ticks, then stops it."""

    def __init__(self, count: int, clock: FakeClock) -> None:
        self.left = count
        self.clock = clock
        self.waits: list[float] = []

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        if self.left == 0:
            return True
        self.left -= 1
        self.clock.advance(timeout)
        return False


def test_in_a_pipe_the_status_is_a_line_at_every_tick_with_tokens_and_tool_calls() -> None:
    clock, stream = FakeClock(), io.StringIO()
    progress = Progress(stream, live=False, clock=clock)
    progress.on_event(_reply(1, 2252, 84))
    progress.on_event(_call())
    stream.truncate(0)
    stream.seek(0)

    progress.tick_until(Ticks(2, clock), 30.0)

    assert stream.getvalue().splitlines() == [
        "[ 30.0s] waiting for the model: 1 reply, 2252 input / 84 output tokens, 1 tool call",
        "[ 60.0s] waiting for the model: 1 reply, 2252 input / 84 output tokens, 1 tool call",
    ]


def test_replies_without_usage_count_as_replies() -> None:
    progress = Progress(io.StringIO(), live=False, clock=FakeClock())

    progress.on_event(_reply(1, None, None))
    progress.on_event(_reply(2, 100, 20))

    assert progress.status_text() == (
        "[  0.0s] waiting for the model: 2 replies, 100 input / 20 output tokens, 0 tool calls"
    )


def test_on_a_terminal_each_tick_redraws_the_status_line_in_place() -> None:
    clock, stream = FakeClock(), io.StringIO()
    progress = Progress(stream, live=True, clock=clock)

    progress.tick_until(Ticks(2, clock), 1.0)

    drawn = stream.getvalue()
    assert "\n" not in drawn
    assert drawn.endswith(
        "[  2.0s] waiting for the model: 0 replies, 0 input / 0 output tokens, 0 tool calls"
    )


def test_leaving_the_ticking_block_stops_the_ticker_at_once() -> None:
    stream = io.StringIO()
    progress = Progress(stream, live=False)

    with progress.ticking():
        pass

    assert stream.getvalue() == ""  # no tick is due before the first interval
