"""How a running optimization is shown: each tool call with the elapsed time, a status line with
the time, tokens and tool calls so far, then the totals.

The command line's `optimize` and the REPL's `optimize` share it; `tool_call_text` is also how
`history` shows a tool call. A model on a CPU can take minutes over one reply, so the status is
shown while nothing else happens too (`ticking`): redrawn every second on a terminal, and as a
line every 30 seconds in a pipe or a log, so a long wait is never silent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol, TextIO

from promptkit.clock import SYSTEM_CLOCK, Clock

if TYPE_CHECKING:
    from promptkit.adapters import TokenUsage
    from promptkit.session import ToolInvoked

_LIVE_CLEAR = "\r\x1b[K"
_PARAMS_SHOWN = 70
LIVE_TICK_S = 1.0
"""How often the status line is redrawn on a terminal while waiting."""
PIPE_TICK_S = 30.0
"""How often a status line is written in a pipe or a log while waiting."""


class StopSignal(Protocol):
    """What the ticker waits on: `wait(seconds)` is true once it should stop."""

    def wait(self, timeout: float) -> bool: ...


class Progress:
    """Shows an optimization as it runs (see the module doc).

    On a terminal (`live`) the status line is redrawn in place; otherwise every line is plain
    text, for logs and pipes. `clock` gives the elapsed time. The session's events (a
    subscriber: `on_event`) and the ticker's thread both write, so writes are serialised.
    """

    def __init__(self, stream: TextIO, *, live: bool, clock: Clock = SYSTEM_CLOCK) -> None:
        self._stream = stream
        self._live = live
        self._clock = clock
        self._started = clock.monotonic()
        self._lock = threading.Lock()
        self._calls = 0
        self._replies = 0
        self._input_tokens = 0
        self._output_tokens = 0

    def say(self, text: str) -> None:
        with self._lock:
            self._write(f"{text}\n")
            self._status()

    def on_event(self, event: object) -> None:
        """Session subscriber: one line per tool call; each reply's tokens for the status."""
        from promptkit.session import ModelReplied, ToolInvoked

        with self._lock:
            if isinstance(event, ModelReplied):
                self._replies += 1
                self._input_tokens += event.input_tokens or 0
                self._output_tokens += event.output_tokens or 0
            elif isinstance(event, ToolInvoked):
                self._calls += 1
                self._write(f"[{self._elapsed()}] tool {self._calls}: {tool_call_text(event)}\n")
            else:
                return
            self._status()

    def tick(self) -> None:
        """Show the status while waiting: redrawn on a terminal, a line in a pipe."""
        with self._lock:
            if self._live:
                self._status()
            else:
                self._write(f"{self.status_text()}\n")

    def status_text(self) -> str:
        """`[ 42.0s] waiting for the model: 2 replies, 4504 input / 168 output tokens, 3 tool
        calls`."""
        replies = "1 reply" if self._replies == 1 else f"{self._replies} replies"
        calls = "1 tool call" if self._calls == 1 else f"{self._calls} tool calls"
        return (
            f"[{self._elapsed()}] waiting for the model: {replies}, {self._input_tokens} input /"
            f" {self._output_tokens} output tokens, {calls}"
        )

    @contextmanager
    def ticking(self) -> Iterator[None]:
        """Tick (`tick`) on a thread of its own while the block runs: every `LIVE_TICK_S` on a
        terminal, every `PIPE_TICK_S` in a pipe."""
        stop = threading.Event()
        interval = LIVE_TICK_S if self._live else PIPE_TICK_S
        ticker = threading.Thread(
            target=self.tick_until, args=(stop, interval), name="promptkit-progress", daemon=True
        )
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()

    def tick_until(self, stop: StopSignal, interval: float) -> None:
        """Tick every `interval` seconds until `stop` says to stop (the ticker's loop)."""
        while not stop.wait(interval):
            self.tick()

    def done(self, tool_calls: int, usage: TokenUsage) -> None:
        """The closing line: tool calls, tokens and what they cost (or that they are unpriced)."""
        tokens = (
            f", {usage.input_tokens} input / {usage.output_tokens} output tokens, {usage.cost_text}"
            if usage.input_tokens is not None or usage.output_tokens is not None
            else ""
        )
        with self._lock:
            self._write(f"[{self._elapsed()}] done: {tool_calls} tool calls{tokens}\n")

    def end_status(self) -> None:
        """Remove the live status line, so what follows starts on a clean line."""
        if self._live:
            with self._lock:
                self._write("")

    def _status(self) -> None:
        if self._live:
            self._stream.write(self.status_text())
            self._stream.flush()

    def _write(self, text: str) -> None:
        self._stream.write((_LIVE_CLEAR if self._live else "") + text)
        self._stream.flush()

    def _elapsed(self) -> str:
        return f"{self._clock.monotonic() - self._started:5.1f}s"


def tool_call_text(call: ToolInvoked) -> str:
    """`name {params} ok (0.12s)`: one tool call as the progress and the REPL's `history` show
    it, its params cut to a line."""
    params = json.dumps(call.params, ensure_ascii=False, sort_keys=True)
    if len(params) > _PARAMS_SHOWN:
        params = params[: _PARAMS_SHOWN - 3] + "..."
    outcome = "ok" if call.success else "failed"
    return f"{call.name} {params} {outcome} ({call.duration_s:.2f}s)"
