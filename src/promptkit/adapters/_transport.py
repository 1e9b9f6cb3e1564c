"""One request of an evaluation on the wire, under its deadline: sending it, or receiving its
reply as a stream, blocking or with asyncio. This is the I/O of an evaluation besides its tools.

The deadline is enforced around every request: the SDK call gets the time left as its timeout,
and the caller stops waiting when it is spent even if the SDK is still retrying. A blocking
request or stream is read on a worker thread the caller stops waiting for (a blocking socket
read cannot be interrupted), and with a deadline each attempt is sent with the SDK's retries off
and retried here (`send_until_deadline`), so no retry reaches the provider after the deadline.
The asyncio path bounds the request with `asyncio.timeout`. A stream is read within bounds
even without a deadline (`_stream`), and ends complete or raises a typed error: cut
(`ProviderStreamCutError`), malformed (`ProviderMalformedReplyError`), too large or too long.
SDK exceptions become `promptkit.errors` through the adapter's `translate_error`, unchained:
the SDK's message can quote the response body.
"""

from __future__ import annotations

import asyncio
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
from promptkit.adapters._provider_errors import transport_failure
from promptkit.adapters._stream import (
    DEFAULT_STREAM_LIMITS,
    StreamLimits,
    _StreamTimeUpError,
    _StreamTooLargeError,
    aread_events,
    read_events,
    stream_time_limit,
)
from promptkit.adapters._wire_api import StreamDecoder, WireApi, WireReply
from promptkit.errors import (
    PromptkitError,
    ProviderConnectionError,
    ProviderError,
    ProviderReplyTooLargeError,
    ProviderTimeoutError,
)

Translate = Callable[..., PromptkitError | None]
"""`translate(error, client=..., where=...)`: an adapter's `translate_error`."""


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
    limits: StreamLimits = DEFAULT_STREAM_LIMITS

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
        """The text of `step`'s reply as it arrives, each SDK event fed to `decoder`; the
        stream is read within the deadline (else `limits.max_seconds`) and `limits.max_bytes`,
        and ends complete or raises."""
        where = self._where(step)
        deadline = self.deadline

        def opened() -> Any:
            if deadline.remaining() is None:
                stream = self.api.open_stream(self.client, step.request, None)
            else:
                stream = send_until_deadline(
                    self.api.open_stream,
                    self.client,
                    step.request,
                    deadline,
                    is_connection_error=self._is_connection_error,
                )
            decoder.opened(stream)
            return stream

        time_limit = stream_time_limit(deadline, self.limits)
        try:
            for event in read_events(
                opened, time_limit=time_limit, max_bytes=self.limits.max_bytes
            ):
                text = decoder.feed(event)
                if text:
                    yield TextDelta(text, step.number)
        except PromptkitError:
            raise
        except Exception as error:
            raise self._stream_failure(error, decoder, where) from None

    async def areceive(self, step: SendRequest, decoder: StreamDecoder) -> AsyncIterator[TextDelta]:
        """`receive` for asyncio."""
        where = self._where(step)
        deadline = self.deadline

        async def opened() -> Any:
            stream = await self.api.aopen_stream(self.client, step.request, deadline.remaining())
            decoder.opened(stream)
            return stream

        time_limit = stream_time_limit(deadline, self.limits)
        try:
            async for event in aread_events(
                opened, time_limit=time_limit, max_bytes=self.limits.max_bytes
            ):
                text = decoder.feed(event)
                if text:
                    yield TextDelta(text, step.number)
        except PromptkitError:
            raise
        except Exception as error:
            if isinstance(error, TimeoutError) and time_limit.remaining() == 0.0:
                error = _StreamTimeUpError()
            raise self._stream_failure(error, decoder, where) from None

    def _stream_failure(self, error: Exception, decoder: StreamDecoder, where: str) -> Exception:
        """The caller's error for `error`, raised while `decoder`'s stream was opened or read."""
        over = self._over_limit(error, decoder, where)
        if over is not None:
            return over
        translated = self._translated(error, where)
        is_open = decoder.is_open
        if isinstance(translated, ProviderTimeoutError):
            return translated
        if isinstance(translated, ProviderConnectionError) and is_open:
            return decoder.cut(f"the connection failed ({type(error).__name__})")
        if translated is not error:
            return translated
        failure = transport_failure(error)
        if failure == "timeout":
            return ProviderTimeoutError(
                f"{where} timed out while its reply streamed ({type(error).__name__}); raise"
                " the client's timeout, or check the provider's status",
                status=decoder.status,
                request_id=decoder.request_id,
            )
        if failure == "connection":
            if not is_open:
                return ProviderConnectionError(
                    f"{where} could not reach the provider ({type(error).__name__}); check the"
                    " base URL, the network and any proxy settings"
                )
            return decoder.cut(f"the connection failed ({type(error).__name__})")
        if is_open and isinstance(
            error, ValueError | TypeError | AttributeError | KeyError | IndexError
        ):
            # The SDK decodes and accumulates events itself: a line that is not JSON (or not
            # UTF-8), or an event its accumulation cannot take, fails inside its iterator.
            return decoder.malformed(error)
        return error

    def _over_limit(
        self, error: Exception, decoder: StreamDecoder, where: str
    ) -> ProviderError | None:
        """The error for a stream stopped by its time or its bytes, or None."""
        if isinstance(error, _StreamTimeUpError | _DeadlinePassedError):
            if self.deadline.at is not None:
                return self.deadline.exceeded(f"while receiving {where}")
            return ProviderTimeoutError(
                f"{where} streamed for {self.limits.max_seconds:g}s, the longest a stream"
                " without a deadline is read (StreamLimits.max_seconds); pass deadline= or"
                " stream_limits= to allow more",
                status=decoder.status,
                request_id=decoder.request_id,
            )
        if isinstance(error, _StreamTooLargeError):
            return ProviderReplyTooLargeError(
                f"{where} streamed {error.received:,} bytes, more than the"
                f" {self.limits.max_bytes:,} one streamed reply may take"
                " (StreamLimits.max_bytes); the stream was closed and nothing of it was used",
                status=decoder.status,
                request_id=decoder.request_id,
            )
        return None

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
