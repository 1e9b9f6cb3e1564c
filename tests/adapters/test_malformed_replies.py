"""Every malformed provider reply (invalid JSON, `null`, an array, `{}`, an event stream where
JSON was expected, a reply item missing its fields) becomes `ProviderMalformedReplyError`, a
`ProviderError` carrying the status and request id, for each wire API, whether the SDK client
validates replies strictly (as tests do) or leniently (as production clients do)."""

import asyncio
import json

import pytest

from promptkit import MarkdownSection, Prompt, ProviderError, ProviderMalformedReplyError
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply

PROMPT: Prompt[None] = Prompt(
    ns="tests/malformed",
    key="hello",
    sections=(MarkdownSection(title="Task", key="task", template="Say hello."),),
)

SSE_BODY = 'event: message\ndata: {"type": "message_start"}\n\n'
MALFORMED = {
    "invalid JSON": Reply.raw('{"id": "resp_1", "output": ['),
    "null": Reply.raw("null"),
    "an array": Reply.raw("[]"),
    "an empty object": Reply.raw("{}"),
    "an event stream": Reply.raw(SSE_BODY, content_type="text/event-stream"),
}


@pytest.mark.parametrize("body", list(MALFORMED), ids=lambda name: name.replace(" ", "-"))
@pytest.mark.parametrize("strict_validation", [False, True], ids=["lenient", "strict"])
def test_a_malformed_reply_raises_provider_malformed_reply_with_status_and_request_id(
    wire, server: FakeProviderServer, make_adapter, body: str, strict_validation: bool
) -> None:
    server.enqueue(MALFORMED[body])

    with pytest.raises(ProviderMalformedReplyError) as caught:
        make_adapter(strict_validation=strict_validation).evaluate(PROMPT, session=Session())

    assert isinstance(caught.value, ProviderError)
    assert caught.value.status == 200
    assert caught.value.request_id == server.requests[-1].request_id
    assert "malformed" in str(caught.value) or "does not match" in str(caught.value)


ITEM_WITHOUT_FIELDS = {
    "responses": {"id": "resp_1", "status": "completed", "output": [{"type": "function_call"}]},
    "chat": {"id": "chatcmpl_1", "choices": [{"index": 0}]},
    "messages": {"id": "msg_1", "stop_reason": "end_turn", "content": [{"type": "tool_use"}]},
}


def test_a_reply_item_missing_its_fields_raises_provider_malformed_reply(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.raw(json.dumps(ITEM_WITHOUT_FIELDS[wire.name])))

    with pytest.raises(ProviderMalformedReplyError) as caught:
        make_adapter(strict_validation=False).evaluate(PROMPT, session=Session())

    assert caught.value.status == 200
    assert caught.value.request_id == server.requests[-1].request_id


def test_a_malformed_reply_to_aevaluate_raises_provider_malformed_reply(
    wire, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.raw("null"))

    async def run() -> None:
        async with wire.async_client(server, strict_validation=False) as client:
            await wire.adapter(async_client=client).aevaluate(PROMPT, session=Session())

    with pytest.raises(ProviderMalformedReplyError) as caught:
        asyncio.run(run())

    assert caught.value.request_id == server.requests[-1].request_id
