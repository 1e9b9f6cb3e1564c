"""The wire APIs promptkit speaks are the ones its fake server imitates: each `WireFormat` is
spoken by one adapter configuration and served by FakeProviderServer at the path it names."""

import json
import urllib.error
import urllib.request

from promptkit.adapters import AnthropicAdapter, OpenAIAdapter
from promptkit.testing import FakeProviderServer
from promptkit.wire import CHAT_COMPLETIONS, MESSAGES, RESPONSES, WIRE_FORMATS, WireFormat


def test_each_adapter_configuration_speaks_one_wire_format() -> None:
    spoken = [
        OpenAIAdapter(model="gpt-4.1-mini", api="responses").wire_api().format,
        OpenAIAdapter(model="gpt-4.1-mini", api="chat").wire_api().format,
        AnthropicAdapter(model="claude-haiku-4-5").wire_api().format,
    ]

    assert spoken == [RESPONSES, CHAT_COMPLETIONS, MESSAGES]
    assert tuple(spoken) == WIRE_FORMATS


def test_the_fake_server_serves_every_wire_format_at_its_path() -> None:
    with FakeProviderServer() as server:
        for wire_format in WIRE_FORMATS:
            status, headers = _post(f"{server.base_url}{wire_format.path}", {})

            assert status != 404  # refused as that API would, or the script ran out
            assert wire_format.request_id_header in headers
            assert server.requests[-1].endpoint == wire_format.endpoint


def test_a_wire_format_loads_the_sdk_request_type_it_names() -> None:
    def declared(wire_format: WireFormat) -> set[str]:
        return set(wire_format.request_type().__annotations__)

    assert {"input", "instructions"} <= declared(RESPONSES)
    assert {"messages", "response_format"} <= declared(CHAT_COMPLETIONS)
    assert {"messages", "max_tokens", "system"} <= declared(MESSAGES)


def _post(url: str, body: object) -> tuple[int, set[str]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, {name.lower() for name in answer.headers}
    except urllib.error.HTTPError as error:
        return error.code, {name.lower() for name in error.headers}
