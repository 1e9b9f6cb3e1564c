"""Streams that go wrong as real ones do, for `Reply.faulty_stream`: cut off, malformed, of the
wrong shape, or endless.

A fault is made from the events the API would send for the reply (`FakeApi.events`), so every
API goes wrong the same way: the API only says which events carry text, which one completes the
answer, and what one of its text events looks like with the wrong shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from promptkit.errors import ArgumentValueError
from promptkit.testing._fake_api import FakeApi
from promptkit.testing._replies import StreamFault

# What an endless stream repeats in each write: small enough to be cheap, large enough that a
# client's byte limit is reached in few writes.
_ENDLESS_CHUNK = 16 * 1024


@dataclass(frozen=True)
class StreamBody:
    """What the server sends for a streamed reply.

    `sent` goes out first. `promised` is the `content-length` announced when it is more than
    `sent` (the connection then drops, as a network cut does); `repeated`, when set, is sent
    after `sent` again and again with no `content-length` until the client hangs up.
    """

    sent: bytes
    promised: int | None = None
    repeated: bytes = b""


def stream_body(api: FakeApi, events: list[str], fault: StreamFault | None) -> StreamBody:
    """The body of a stream of `events` (each one server-sent event) going wrong as `fault`
    says, or whole without one."""
    whole = "".join(events).encode("utf-8")
    if fault is None:
        return StreamBody(whole)
    data = [_data(event) for event in events]
    texts = [index for index, item in enumerate(data) if item and api.is_text_delta(item)]
    if not texts:
        raise ArgumentValueError(
            f"Reply.faulty_stream({fault!r}) needs a reply with text: the fault acts on it"
        )
    second = texts[1] if len(texts) > 1 else texts[0]
    if fault == "cut_mid_text":
        return StreamBody(_joined(events[: second + 1]), promised=len(whole))
    if fault == "cut_before_finish":
        finish = next(index for index, item in enumerate(data) if item and api.is_finish(item))
        return StreamBody(_joined(events[:finish]))
    if fault in ("malformed_event", "wrong_shaped_event"):
        event = data[second]
        assert event is not None  # a text event has data
        text = json.dumps(event)
        if fault == "malformed_event":
            broken = f"data: {text[: len(text) // 2]}\n\n"
        else:
            broken = f"data: {json.dumps(api.wrong_shaped(event))}\n\n"
        named = events[second].split("data: ", 1)[0]  # the `event:` line of APIs that name them
        return StreamBody(_joined([*events[:second], named + broken, *events[second + 1 :]]))
    first = texts[0]
    if fault == "endless":
        repeated = events[first].encode("utf-8")
        return StreamBody(_joined(events[: first + 1]), repeated=repeated * _repeats(repeated))
    named = events[first].split("data: ", 1)[0]
    opening = _joined([*events[:first], f'{named}data: {{"text": "'])
    return StreamBody(opening, repeated=b"x" * _ENDLESS_CHUNK)


def _data(event: str) -> dict[str, Any] | None:
    """The JSON object an event carries, or None (`[DONE]`)."""
    for line in event.splitlines():
        if line.startswith("data: "):
            try:
                value = json.loads(line.removeprefix("data: "))
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def _joined(events: list[str]) -> bytes:
    return "".join(events).encode("utf-8")


def _repeats(event: bytes) -> int:
    return max(1, _ENDLESS_CHUNK // max(len(event), 1))
