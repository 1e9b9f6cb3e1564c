"""Reading one streamed reply within bounds: the SDK stream's events, the time they may take and
the bytes they may fill, whatever the provider sends.

A stream is read on a worker thread when blocking (a socket read cannot be interrupted) and as a
task when awaited; the caller waits for each event at most a tenth of a second at a time, and
between waits looks at the time left and at the bytes the HTTP response has received so far.
So an endless stream, an event that never ends (one line the SDK keeps buffering) or a reply
of a hundred megabytes stops at `StreamLimits.max_bytes`, and a stream with no deadline stops at
`StreamLimits.max_seconds`; with a deadline, the deadline bounds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from promptkit.adapters._deadline import Deadline
from promptkit.errors import ArgumentTypeError, ArgumentValueError

DEFAULT_STREAM_MAX_BYTES = 64 * 1024 * 1024
"""The bytes one streamed reply may take by default: 64 MiB, some hundred times the events of
a reply at a 128k-token output limit."""

DEFAULT_STREAM_MAX_SECONDS = 1800.0
"""How long one streamed reply may take by default when the call has no deadline: 30 minutes."""

# How long the caller waits for an event before it looks at the clock and the bytes again: the
# bytes limit is passed by at most what arrives in this time.
_POLL_S = 0.1


@dataclass(frozen=True)
class StreamLimits:
    """What one streamed reply (of `stream` or `astream`) may take.

    `max_bytes` bounds the bytes of each reply's HTTP response (`ProviderReplyTooLargeError`
    past it); `max_seconds` bounds the time of each reply of a call without a `deadline`
    (`ProviderTimeoutError` past it); a call's deadline bounds everything under it instead.
    """

    max_bytes: int = DEFAULT_STREAM_MAX_BYTES
    max_seconds: float = DEFAULT_STREAM_MAX_SECONDS

    def __post_init__(self) -> None:
        if isinstance(self.max_bytes, bool) or not isinstance(self.max_bytes, int):
            raise ArgumentTypeError(
                f"StreamLimits.max_bytes must be an int, got {type(self.max_bytes).__name__}"
            )
        if self.max_bytes < 1:
            raise ArgumentValueError(f"StreamLimits.max_bytes must be >= 1, got {self.max_bytes}")
        seconds = self.max_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ArgumentTypeError(
                f"StreamLimits.max_seconds must be a number, got {type(seconds).__name__}"
            )
        if not (math.isfinite(seconds) and seconds > 0):
            raise ArgumentValueError(
                f"StreamLimits.max_seconds must be a positive, finite time, got {seconds!r}"
            )


DEFAULT_STREAM_LIMITS = StreamLimits()


# Private signals: the transport turns each into the caller's error, naming the request.
class _StreamTimeUpError(Exception):
    """The time a stream may take has passed."""


class _StreamTooLargeError(Exception):
    """The stream's HTTP response passed the bytes it may take."""

    def __init__(self, received: int) -> None:
        super().__init__(received)
        self.received = received


def stream_time_limit(deadline: Deadline, limits: StreamLimits) -> Deadline:
    """The deadline a stream is read under: the call's, else `limits.max_seconds` from now."""
    if deadline.at is not None:
        return deadline
    return Deadline.within(limits.max_seconds, deadline.clock)


class _Worker:
    """Reads a stream on a thread of its own, handing each event (then its end) over a queue."""

    def __init__(self, opened: Callable[[], Any]) -> None:
        self.items: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self.streams: list[Any] = []
        self._opened = opened
        self._stop = threading.Event()
        threading.Thread(
            target=contextvars.copy_context().run,
            args=(self._produce,),
            name="promptkit-provider-stream",
            daemon=True,
        ).start()

    def _produce(self) -> None:
        try:
            stream = self._opened()
            self.streams.append(stream)
            try:
                for event in stream:
                    self.items.put((True, event))
                    if self._stop.is_set():
                        break
            finally:
                stream.close()
            self.items.put((False, None))
        except BaseException as error:
            self.items.put((False, error))

    def stop(self) -> None:
        """Stop reading; the worker may be blocked reading, and closing the response ends it."""
        self._stop.set()
        for stream in self.streams:
            with contextlib.suppress(Exception):
                stream.close()


def read_events(
    opened: Callable[[], Any], *, time_limit: Deadline, max_bytes: int
) -> Iterator[Any]:
    """The events of the stream `opened()` returns (called on the worker thread, as the
    request), read on a worker thread within `time_limit` and `max_bytes`."""
    worker = _Worker(opened)
    finished = False
    try:
        while True:
            remaining = time_limit.remaining() or 0.0
            try:
                is_event, value = worker.items.get(timeout=min(remaining, _POLL_S))
            except queue.Empty:
                if time_limit.remaining() == 0.0:
                    raise _StreamTimeUpError from None
                _check_bytes(worker.streams, max_bytes)
                continue
            if not is_event:
                finished = True
                if value is None:
                    return
                raise value
            _check_bytes(worker.streams, max_bytes)
            yield value
    finally:
        if not finished:
            worker.stop()


async def aread_events(
    opened: Callable[[], Awaitable[Any]], *, time_limit: Deadline, max_bytes: int
) -> AsyncIterator[Any]:
    """`read_events` for asyncio: each event is awaited as a task the caller waits for."""
    async with asyncio.timeout(time_limit.remaining()):
        stream = await opened()
    try:
        events = aiter(stream)
        while True:
            pending = asyncio.ensure_future(anext(events))
            try:
                while not pending.done():
                    remaining = time_limit.remaining() or 0.0
                    await asyncio.wait({pending}, timeout=min(remaining, _POLL_S))
                    if pending.done():
                        break
                    if time_limit.remaining() == 0.0:
                        raise _StreamTimeUpError
                    _check_bytes([stream], max_bytes)
            except BaseException:
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
                raise
            try:
                event = pending.result()
            except StopAsyncIteration:
                return
            _check_bytes([stream], max_bytes)
            yield event
    finally:
        with contextlib.suppress(Exception):
            await stream.close()


def _check_bytes(streams: list[Any], max_bytes: int) -> None:
    for stream in streams:
        received = getattr(getattr(stream, "response", None), "num_bytes_downloaded", None)
        if isinstance(received, int) and received > max_bytes:
            raise _StreamTooLargeError(received)
