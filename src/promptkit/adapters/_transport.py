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

At a custom base URL a request that asks for JSON-schema output may be refused by a server that
cannot do it (`StructuredOutputUnsupportedError`). Such a refusal is not retried (llama-cpp-
python answers it with a 500, which the SDK would retry twice as an outage): the evaluation's
`SchemaFallback` sends the request again once without the format, and every later request of
the evaluation goes without it.
"""

from __future__ import annotations

import asyncio
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
    StructuredOutputUnsupportedError,
)

Translate = Callable[..., PromptkitError | None]
"""`translate(error, client=..., where=...)`: an adapter's `translate_error`."""


@dataclass(frozen=True)
class Transport:
    """The requests of one evaluation: its wire API, SDK client, deadline and error translation.

    `provider`, `model` and `server` (the base URL of a server other than the provider's own,
    as shown) only name the request in error messages; `fallback` is the evaluation's
    `SchemaFallback` (None where there is none to take); `limits` bound each streamed reply.
    """

    api: WireApi
    client: Any
    deadline: Deadline
    translate: Translate
    provider: str
    model: str
    fallback: SchemaFallback | None = None
    server: str | None = None
    limits: StreamLimits = DEFAULT_STREAM_LIMITS

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
        """The text of `step`'s reply as it arrives, each SDK event fed to `decoder`; the
        stream is read within the deadline (else `limits.max_seconds`) and `limits.max_bytes`,
        and ends complete or raises."""
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
                stream = self.api.open_stream(self.client, request, None)
            else:
                stream = self._attempts(self.api.open_stream, request)
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

        async def opened() -> Any:
            stream = await self.api.aopen_stream(
                self._client_for(request), request, deadline.remaining()
            )
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
