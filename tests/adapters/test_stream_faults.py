"""A stream ends complete or raises a typed error, on each wire API, sync and async: cut mid-text
or before its finish event, a malformed or wrong-shaped event, an endless stream or event, a
stream that never starts. The real SDK clients read faulty streams from FakeProviderServer over
HTTP; nothing partial is ever passed on as a complete reply."""

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from promptkit import MarkdownSection, Prompt
from promptkit.adapters import ResponseCompleted, StreamEvent, StreamLimits, TextDelta
from promptkit.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    ProviderConnectionError,
    ProviderMalformedReplyError,
    ProviderReplyTooLargeError,
    ProviderStreamCutError,
    ProviderTimeoutError,
)
from promptkit.session import PromptExecuted, Session
from promptkit.testing import FakeProviderServer, Reply, StreamFault

from .conftest import Wire

PROMPT: Prompt[None] = Prompt(
    ns="tests/stream-faults",
    key="tide",
    sections=(MarkdownSection(title="Task", key="task", template="Tell the tide."),),
)
ANSWER = "High water in Brest is at 14:05 today."
FEW_BYTES = StreamLimits(max_bytes=256 * 1024)
SHORT = StreamLimits(max_seconds=0.3)


def _events(
    wire: Wire,
    server: FakeProviderServer,
    *,
    sync: bool,
    session: Session,
    strict_validation: bool = True,
    **options: Any,
) -> list[StreamEvent[None]]:
    """Every event of one `stream` (or `astream`) call, read until it ends or raises; the events
    read before a failure are in `options["seen"]` when given."""
    seen: list[StreamEvent[None]] = options.pop("seen", [])
    if sync:
        client = wire.client(
            server, max_retries=0, timeout=10.0, strict_validation=strict_validation
        )
        try:
            adapter = wire.adapter(client=client)
            for event in adapter.stream(PROMPT, session=session, **options):
                seen.append(event)
        finally:
            client.close()
        return seen

    async def run() -> None:
        async with wire.async_client(server, strict_validation=strict_validation) as client:
            adapter = wire.adapter(async_client=client)
            async for event in adapter.astream(PROMPT, session=session, **options):
                seen.append(event)

    asyncio.run(run())
    return seen


@pytest.fixture(params=[True, False], ids=["sync", "async"])
def sync(request: pytest.FixtureRequest) -> Iterator[bool]:
    yield request.param


def _fails(
    wire: Wire,
    server: FakeProviderServer,
    sync: bool,
    fault: StreamFault,
    error: type[Exception],
    **options: Any,
) -> tuple[Exception, list[StreamEvent[None]], Session]:
    server.enqueue(Reply.faulty_stream(Reply.text(ANSWER), fault))
    session = Session()
    seen: list[StreamEvent[None]] = []
    with pytest.raises(error) as raised:
        _events(wire, server, sync=sync, session=session, seen=seen, **options)
    return raised.value, seen, session


def test_a_stream_cut_mid_text_raises_stream_cut_and_completes_nothing(
    wire: Wire, server: FakeProviderServer, sync: bool
) -> None:
    error, seen, session = _fails(wire, server, sync, "cut_mid_text", ProviderStreamCutError)

    assert "ended after" in str(error) and "without its finish event" in str(error)
    assert isinstance(error, ProviderConnectionError)  # retried like any dropped connection
    assert error.request_id == server.requests[-1].request_id
    assert not any(isinstance(event, ResponseCompleted) for event in seen)
    assert session.select_all(PromptExecuted) == ()


def test_a_stream_ended_before_its_finish_event_raises_stream_cut(
    wire: Wire, server: FakeProviderServer, sync: bool
) -> None:
    error, seen, session = _fails(wire, server, sync, "cut_before_finish", ProviderStreamCutError)

    received = "".join(event.text for event in seen if isinstance(event, TextDelta))
    assert received == ANSWER  # every word arrived, yet the reply is not taken as complete
    assert "the stream closed early" in str(error)
    assert session.select_all(PromptExecuted) == ()


def test_a_malformed_event_raises_malformed_reply(
    wire: Wire, server: FakeProviderServer, sync: bool
) -> None:
    error, _seen, _session = _fails(
        wire, server, sync, "malformed_event", ProviderMalformedReplyError, strict_validation=False
    )

    assert "stream" in str(error) and "malformed at event" in str(error)
    assert isinstance(error, ProviderMalformedReplyError) and error.status == 200


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_a_wrong_shaped_event_raises_malformed_reply(
    wire: Wire, server: FakeProviderServer, sync: bool, strict: bool
) -> None:
    _fails(
        wire,
        server,
        sync,
        "wrong_shaped_event",
        ProviderMalformedReplyError,
        strict_validation=strict,
    )


def test_an_endless_stream_stops_at_the_byte_limit(
    wire: Wire, server: FakeProviderServer, sync: bool
) -> None:
    error, _seen, _session = _fails(
        wire, server, sync, "endless", ProviderReplyTooLargeError, stream_limits=FEW_BYTES
    )

    assert "more than the 262,144 one streamed reply may take" in str(error)


def test_an_event_that_never_ends_stops_at_the_byte_limit(
    wire: Wire, server: FakeProviderServer, sync: bool
) -> None:
    _fails(wire, server, sync, "endless_event", ProviderReplyTooLargeError, stream_limits=FEW_BYTES)


def test_a_stream_without_a_deadline_stops_at_its_time_limit(
    wire: Wire, server: FakeProviderServer, sync: bool
) -> None:
    server.enqueue(Reply.delay(5.0, Reply.text(ANSWER)))

    with pytest.raises(ProviderTimeoutError, match=r"StreamLimits\.max_seconds"):
        _events(wire, server, sync=sync, session=Session(), stream_limits=SHORT)


@pytest.mark.parametrize("wire", ["chat"], indirect=True)
def test_a_complete_stream_within_the_limits_is_the_reply(
    wire: Wire, server: FakeProviderServer, sync: bool
) -> None:
    server.enqueue(Reply.text(ANSWER))

    events = _events(wire, server, sync=sync, session=Session(), stream_limits=FEW_BYTES)

    completed = events[-1]
    assert isinstance(completed, ResponseCompleted) and completed.response.text == ANSWER


def test_stream_limits_refuse_a_value_that_bounds_nothing() -> None:
    with pytest.raises(ArgumentValueError):
        StreamLimits(max_bytes=0)
    with pytest.raises(ArgumentValueError):
        StreamLimits(max_seconds=float("inf"))
    with pytest.raises(ArgumentTypeError):
        StreamLimits(max_bytes=1.5)  # type: ignore[arg-type]
