"""How a running optimization is shown: each tool call with the elapsed time, then the tokens.

The command line's `optimize` and the REPL's `optimize` share it; `tool_call_text` is also how
`history` shows a tool call.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

from promptkit.clock import SYSTEM_CLOCK

if TYPE_CHECKING:
    from promptkit.adapters import TokenUsage
    from promptkit.session import ToolInvoked

_LIVE_CLEAR = "\r\x1b[K"
_PARAMS_SHOWN = 70


class Progress:
    """Shows an optimization as it runs: each tool call with the elapsed time, then tokens.

    On a terminal (`live`) a status line is redrawn in place between calls; otherwise every
    line is plain text, for logs and pipes.
    """

    def __init__(self, stream: TextIO, *, live: bool) -> None:
        self._stream = stream
        self._live = live
        self._started = SYSTEM_CLOCK.monotonic()
        self._calls = 0

    def say(self, text: str) -> None:
        self._write(f"{text}\n")
        self._status()

    def on_event(self, event: object) -> None:
        """Session subscriber: one line per tool call."""
        from promptkit.session import ToolInvoked

        if not isinstance(event, ToolInvoked):
            return
        self._calls += 1
        self._write(f"[{self._elapsed()}] tool {self._calls}: {tool_call_text(event)}\n")
        self._status()

    def done(self, tool_calls: int, usage: TokenUsage) -> None:
        """The closing line: tool calls, tokens and what they cost (or that they are unpriced)."""
        tokens = (
            f", {usage.input_tokens} input / {usage.output_tokens} output tokens, {usage.cost_text}"
            if usage.input_tokens is not None or usage.output_tokens is not None
            else ""
        )
        self._write(f"[{self._elapsed()}] done: {tool_calls} tool calls{tokens}\n")

    def end_status(self) -> None:
        """Remove the live status line, so what follows starts on a clean line."""
        if self._live:
            self._write("")

    def _status(self) -> None:
        if self._live:
            self._stream.write(f"[{self._elapsed()}] working...")
            self._stream.flush()

    def _write(self, text: str) -> None:
        self._stream.write((_LIVE_CLEAR if self._live else "") + text)
        self._stream.flush()

    def _elapsed(self) -> str:
        return f"{SYSTEM_CLOCK.monotonic() - self._started:5.1f}s"


def tool_call_text(call: ToolInvoked) -> str:
    """`name {params} ok (0.12s)`: one tool call as the progress and the REPL's `history` show
    it, its params cut to a line."""
    params = json.dumps(call.params, ensure_ascii=False, sort_keys=True)
    if len(params) > _PARAMS_SHOWN:
        params = params[: _PARAMS_SHOWN - 3] + "..."
    outcome = "ok" if call.success else "failed"
    return f"{call.name} {params} {outcome} ({call.duration_s:.2f}s)"
