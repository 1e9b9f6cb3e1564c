"""Blocking calls run off the caller's thread, on a daemon thread nothing waits for past a time.

`asyncio.to_thread` runs a call on the loop's default executor, whose threads the loop waits
for when it closes and the interpreter waits for when it exits: one call that never returns (a
tool handler blocked on a socket, an evaluator spinning) then holds the run past its deadline,
past Ctrl-C and at exit. Here each call gets a thread of its own, marked daemon, and the caller
stops waiting at `timeout` (or when its asyncio task is cancelled): the call goes on by itself,
since a thread cannot be stopped from outside, but nothing waits for it, the interpreter
included, and the caller gets `CallAbandonedError`. `run_blocking` is for asyncio code,
`call_blocking` for blocking code.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from promptkit.errors import CallAbandonedError

T = TypeVar("T")


async def run_blocking(call: Callable[[], T], *, timeout: float | None = None, what: str = "") -> T:
    """`call()` on a daemon thread, awaited; CallAbandonedError after `timeout` seconds (None:
    no limit), CancelledError when the awaiting task is cancelled, the call left behind either
    way. `what` names the call in the error."""
    outcome = _started(call)
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.wrap_future(outcome)
    except TimeoutError:
        if outcome.done():  # it finished as the time ran out, or raised TimeoutError itself
            return outcome.result()
        raise _abandoned(what, timeout) from None


def call_blocking(call: Callable[[], T], *, timeout: float | None = None, what: str = "") -> T:
    """`call()` on a daemon thread, waited for; CallAbandonedError after `timeout` seconds
    (None: no limit), the call left behind."""
    outcome = _started(call)
    try:
        return outcome.result(timeout=timeout)
    except TimeoutError:
        if outcome.done():
            return outcome.result()
        raise _abandoned(what, timeout) from None


def _abandoned(what: str, timeout: float | None) -> CallAbandonedError:
    return CallAbandonedError(
        f"{what or 'a blocking call'} did not finish within {timeout:g}s; it was left running"
        " on its own thread"
    )


def _started(call: Callable[[], T]) -> Future[T]:
    outcome: Future[T] = Future()

    def run() -> None:
        if not outcome.set_running_or_notify_cancel():
            return
        try:
            outcome.set_result(call())
        except BaseException as error:
            outcome.set_exception(error)

    worker = threading.Thread(
        target=contextvars.copy_context().run, args=(run,), name="promptkit-blocking", daemon=True
    )
    worker.start()
    return outcome
