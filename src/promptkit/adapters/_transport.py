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

At a custom base URL a request that asks for JSON-schema output may be refused by a server that
cannot do it (`StructuredOutputUnsupportedError`). Such a refusal is not retried (llama-cpp-
python answers it with a 500, which the SDK would retry twice as an outage): the evaluation's
`SchemaFallback` sends the request again once without the format, and every later request of
the evaluation goes without it.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
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
from promptkit.adapters._local_servers import SchemaFallback
from promptkit.adapters._loop import SendRequest
from promptkit.adapters._wire_api import StreamDecoder, WireApi, WireReply
from promptkit.errors import (
    PromptkitError,
    ProviderConnectionError,
    ProviderTimeoutError,
    StructuredOutputUnsupportedError,
)

Translate = Callable[..., PromptkitError | None]
"""`translate(error, client=..., where=...)`: an adapter's `translate_error`."""


class _StreamDeadlineError(Exception):
    """The caller stopped waiting for a streamed reply because the deadline passed."""


@dataclass(frozen=True)
class Transport:
    """The requests of one evaluation: its wire API, SDK client, deadline and error translation.

    `provider`, `model` and `server` (the base URL of a server other than the provider's own,
    as shown) only name the request in error messages; `fallback` is the evaluation's
    `SchemaFallback` (None where there is none to take).
    """

    api: WireApi
    client: Any
    deadline: Deadline
    translate: Translate
    provider: str
    model: str
    fallback: SchemaFallback | None = None
    server: str | None = None

    # -- one reply, whole -------------------------------------------------------------------

    def send(self, step: SendRequest) -> WireReply:
        """The reply to `step`'s request, waiting for it no longer than the deadline."""
        try:
            return self._send(step, self._request(step))
        except StructuredOutputUnsupportedError as refused:
            if self.fallback is None or not self.fallback.falls_back(refused):
                raise
            return self._send(step, self._request(step))

    def _send(self, step: SendRequest, request: Mapping[str, Any]) -> WireReply:
        where = self._where(step)
        timeout = self.deadline.remaining()
        try:
            if timeout is None and not self._may_be_refused(request):
                return self.api.create(self.client, request, None)
            if timeout is None:
                attempted: WireReply = self._attempts(self.api.create, request)
                return attempted
            reply: WireReply = call_within(
                lambda: self._attempts(self.api.create, request), timeout
            )
            return reply
        except (_DeadlineReachedError, _DeadlinePassedError):
            raise self.deadline.exceeded(f"while waiting for {where}") from None
        except Exception as error:
            raise self._translated(error, where) from None

    async def asend(self, step: SendRequest) -> WireReply:
        """`send` for asyncio."""
        try:
            return await self._asend(step, self._request(step))
        except StructuredOutputUnsupportedError as refused:
            if self.fallback is None or not self.fallback.falls_back(refused):
                raise
            return await self._asend(step, self._request(step))

    async def _asend(self, step: SendRequest, request: Mapping[str, Any]) -> WireReply:
        where = self._where(step)
        timeout = self.deadline.remaining()
        scope = asyncio.timeout(timeout)
        try:
            async with scope:
                return await self.api.acreate(self._client_for(request), request, timeout)
        except TimeoutError:
            if scope.expired():
                raise self.deadline.exceeded(f"while waiting for {where}") from None
            raise
        except Exception as error:
            raise self._translated(error, where) from None

    # -- one reply, streamed ----------------------------------------------------------------

    def receive(self, step: SendRequest, decoder: StreamDecoder) -> Iterator[TextDelta]:
        """The text of `step`'s reply as it arrives, each SDK event fed to `decoder`."""
        try:
            yield from self._receive(step, self._request(step), decoder)
        except StructuredOutputUnsupportedError as refused:
            # Refused as the stream opened, before any event reached the decoder.
            if self.fallback is None or not self.fallback.falls_back(refused):
                raise
            yield from self._receive(step, self._request(step), decoder)

    def _receive(
        self, step: SendRequest, request: Mapping[str, Any], decoder: StreamDecoder
    ) -> Iterator[TextDelta]:
        where = self._where(step)
        deadline = self.deadline

        def opened() -> Any:
            if deadline.remaining() is None and not self._may_be_refused(request):
                return self.api.open_stream(self.client, request, None)
            return self._attempts(self.api.open_stream, request)

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
        try:
            async for delta in self._areceive(step, self._request(step), decoder):
                yield delta
        except StructuredOutputUnsupportedError as refused:
            if self.fallback is None or not self.fallback.falls_back(refused):
                raise
            async for delta in self._areceive(step, self._request(step), decoder):
                yield delta

    async def _areceive(
        self, step: SendRequest, request: Mapping[str, Any], decoder: StreamDecoder
    ) -> AsyncIterator[TextDelta]:
        where = self._where(step)
        deadline = self.deadline
        try:
            async with asyncio.timeout(deadline.remaining()):
                stream = await self.api.aopen_stream(
                    self._client_for(request), request, deadline.remaining()
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

    # -- the request and its attempts --------------------------------------------------------

    def _request(self, step: SendRequest) -> Mapping[str, Any]:
        """`step`'s request, without the output format once the evaluation fell back."""
        if self.fallback is not None and self.fallback.is_active:
            return self.api.without_native_output(step.request)
        return step.request

    def _may_be_refused(self, request: Mapping[str, Any]) -> bool:
        """Whether `request` asks for an output format the server may refuse, with a fallback
        left to take: then a refusal must reach it at once, not after the SDK retried it as
        an outage."""
        return (
            self.fallback is not None
            and not self.fallback.is_active
            and self.api.without_native_output(request) is not request
        )

    def _attempts(self, send: Any, request: Mapping[str, Any]) -> Any:
        """`send`'s attempts made here, with the SDK's retry policy; a refusal of the output
        format is not retried."""
        return send_until_deadline(
            send,
            self.client,
            request,
            self.deadline,
            is_connection_error=self._is_connection_error,
            is_refusal=self._is_refusal,
        )

    def _client_for(self, request: Mapping[str, Any]) -> Any:
        """The async client for `request`: without retries when the server may refuse it (the
        asyncio path leaves retries to the SDK)."""
        if self._may_be_refused(request):
            return self.client.with_options(max_retries=0)
        return self.client

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

    def _is_refusal(self, error: BaseException) -> bool:
        translated = self.translate(error, client=self.client, where="")
        return isinstance(translated, StructuredOutputUnsupportedError)

    def _where(self, step: SendRequest) -> str:
        at = f" at {self.server}" if self.server else ""
        return f"{self.provider} {self.api.api} request {step.number} (model {self.model}{at})"


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
