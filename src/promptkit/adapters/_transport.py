"""One request of an evaluation on the wire, under its deadline: sending it, or receiving its
reply as a stream, blocking or with asyncio. This is the I/O of an evaluation besides its tools.

The deadline is enforced around every request: the SDK call gets the time left as its timeout,
and the caller stops waiting when it is spent even if the SDK is still retrying. A blocking
request or stream is read on a worker thread the caller stops waiting for (a blocking socket
read cannot be interrupted), and with a deadline each attempt is sent with the SDK's retries off
and retried here (`send_until_deadline`), so no retry reaches the provider after the deadline.
The asyncio path bounds the request, and every read of a stream, with `asyncio.timeout`. SDK
exceptions become `promptkit.errors` through the adapter's `translate_error`, unchained: the
SDK's message can quote the response body.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from promptkit.adapters._attempts import (
    _DeadlinePassedError,
    _DeadlineReachedError,
    call_within,
    send_until_deadline,
)
from promptkit.adapters._deadline import Deadline
from promptkit.adapters._events import TextDelta
from promptkit.adapters._loop import SendRequest
from promptkit.adapters._wire_api import StreamDecoder, WireApi, WireReply
from promptkit.errors import PromptkitError, ProviderConnectionError, ProviderTimeoutError

Translate = Callable[..., PromptkitError | None]
"""`translate(error, client=..., where=...)`: an adapter's `translate_error`."""


class _StreamDeadlineError(Exception):
    """The caller stopped waiting for a streamed reply because the deadline passed."""


@dataclass(frozen=True)
class Transport:
    """The requests of one evaluation: its wire API, SDK client, deadline and error translation.

    `provider` and `model` only name the request in error messages.
    """

    api: WireApi
    client: Any
    deadline: Deadline
    translate: Translate
    provider: str
    model: str

    # -- one reply, whole -------------------------------------------------------------------

    def send(self, step: SendRequest) -> WireReply:
        """The reply to `step`'s request, waiting for it no longer than the deadline."""
        where = self._where(step)
        timeout = self.deadline.remaining()
        try:
            if timeout is None:
                return self.api.create(self.client, step.request, None)
            reply: WireReply = call_within(
                lambda: send_until_deadline(
                    self.api.create,
                    self.client,
                    step.request,
                    self.deadline,
                    is_connection_error=self._is_connection_error,
                ),
                timeout,
            )
            return reply
        except (_DeadlineReachedError, _DeadlinePassedError):
            raise self.deadline.exceeded(f"while waiting for {where}") from None
        except Exception as error:
            raise self._translated(error, where) from None

    async def asend(self, step: SendRequest) -> WireReply:
        """`send` for asyncio."""
        where = self._where(step)
        timeout = self.deadline.remaining()
        scope = asyncio.timeout(timeout)
        try:
            async with scope:
                return await self.api.acreate(self.client, step.request, timeout)
        except TimeoutError:
            if scope.expired():
                raise self.deadline.exceeded(f"while waiting for {where}") from None
            raise
        except Exception as error:
            raise self._translated(error, where) from None

    # -- one reply, streamed ----------------------------------------------------------------

    def receive(self, step: SendRequest, decoder: StreamDecoder) -> Iterator[TextDelta]:
        """The text of `step`'s reply as it arrives, each SDK event fed to `decoder`."""
        where = self._where(step)
        deadline = self.deadline

        def opened() -> Any:
            if deadline.remaining() is None:
                return self.api.open_stream(self.client, step.request, None)
            return send_until_deadline(
                self.api.open_stream,
                self.client,
                step.request,
                deadline,
                is_connection_error=self._is_connection_error,
            )

        try:
            for event in _events_within(opened, deadline):
                text = decoder.feed(event)
                if text:
                    yield TextDelta(text, step.number)
        except (_StreamDeadlineError, _DeadlinePassedError):
            raise deadline.exceeded(f"while receiving {where}") from None
        except PromptkitError:
            raise
        except Exception as error:
            raise self._translated(error, where) from None

    async def areceive(self, step: SendRequest, decoder: StreamDecoder) -> AsyncIterator[TextDelta]:
        """`receive` for asyncio."""
        where = self._where(step)
        deadline = self.deadline
        try:
            async with asyncio.timeout(deadline.remaining()):
                stream = await self.api.aopen_stream(
                    self.client, step.request, deadline.remaining()
                )
            try:
                events = aiter(stream)
                while True:
                    # Each read is bounded on its own: a timeout scope must not span a `yield`.
                    async with asyncio.timeout(deadline.remaining()):
                        try:
                            event = await anext(events)
                        except StopAsyncIteration:
                            break
                    text = decoder.feed(event)
                    if text:
                        yield TextDelta(text, step.number)
            finally:
                await stream.close()
        except TimeoutError:
            if deadline.remaining() == 0.0:
                raise deadline.exceeded(f"while receiving {where}") from None
            raise
        except PromptkitError:
            raise
        except Exception as error:
            raise self._translated(error, where) from None

    # -- errors -----------------------------------------------------------------------------

    def _translated(self, error: Exception, where: str) -> Exception:
        translated = self.translate(error, client=self.client, where=where)
        if translated is None:
            return error
        if self.deadline.remaining() == 0.0:
            # The request's own timeout is the time left, so it races the deadline; a request
            # that failed once the deadline had passed failed because of it.
            return self.deadline.exceeded(
                f"while waiting for {where} ({type(translated).__name__})"
            )
        return translated

    def _is_connection_error(self, error: BaseException) -> bool:
        translated = self.translate(error, client=self.client, where="")
        return isinstance(translated, ProviderConnectionError | ProviderTimeoutError)

    def _where(self, step: SendRequest) -> str:
        return f"{self.provider} {self.api.api} request {step.number} (model {self.model})"


def _events_within(opened: Callable[[], Any], deadline: Deadline) -> Iterator[Any]:
    """The events of the stream `opened()` returns, waiting for each no later than `deadline`.

    Without a deadline the stream is read here. With one it is read on a worker thread, since a
    blocking socket read cannot be interrupted: the caller stops waiting when the deadline
    passes, and the worker ends by itself because its request timeout is the time that was left.
    """
    if deadline.remaining() is None:
        stream = opened()
        try:
            yield from stream
        finally:
            stream.close()
        return
    items: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    stop = threading.Event()

    def produce() -> None:
        try:
            stream = opened()
            try:
                for event in stream:
                    items.put((True, event))
                    if stop.is_set():
                        break
            finally:
                stream.close()
            items.put((False, None))
        except BaseException as error:
            items.put((False, error))

    worker = threading.Thread(
        target=contextvars.copy_context().run,
        args=(produce,),
        name="promptkit-provider-stream",
        daemon=True,
    )
    worker.start()
    try:
        while True:
            try:
                is_event, value = items.get(timeout=deadline.remaining())
            except queue.Empty:
                raise _StreamDeadlineError from None
            if not is_event:
                if value is None:
                    return
                raise value
            yield value
    finally:
        stop.set()
