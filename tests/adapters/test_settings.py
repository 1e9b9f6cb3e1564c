"""`ModelSettings` on the adapter and per call, as each wire API's request body spells them, and
settings an API does not accept refused before any request."""

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.adapters import ModelSettings, UnsupportedSettingError
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply


class Empty(BaseModel):
    pass


def noop(params: Empty, context: ToolContext) -> ToolResult:
    return ToolResult(message="ok")


PROMPT: Prompt[None] = Prompt(
    ns="tests/settings",
    key="ask",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Answer.",
            tools=(
                Tool(name="noop", description="Does nothing.", params_type=Empty, handler=noop),
            ),
        ),
    ),
)

LIMITS = ModelSettings(max_output_tokens=256, parallel_tool_calls=False)
SAMPLING = ModelSettings(temperature=0.2, top_p=0.9)


def test_adapter_settings_reach_the_request_body(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok"))

    make_adapter(settings=LIMITS).evaluate(PROMPT, session=Session())

    body = server.requests[0].body
    expected = {
        "responses": ("max_output_tokens", 256),
        "chat": ("max_completion_tokens", 256),
        "messages": ("max_tokens", 256),
    }[wire.name]
    assert body[expected[0]] == expected[1]
    if wire.name == "messages":
        assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    else:
        assert body["parallel_tool_calls"] is False


@pytest.mark.parametrize("wire", ["responses", "chat"], indirect=True)
def test_call_settings_override_the_adapters_field_by_field(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok"))

    make_adapter(settings=SAMPLING).evaluate(
        PROMPT, session=Session(), settings=ModelSettings(temperature=1.0)
    )

    body = server.requests[0].body
    assert (body["temperature"], body["top_p"]) == (1.0, 0.9)


@pytest.mark.parametrize("wire", ["chat", "messages"], indirect=True)
def test_stop_sequences_reach_the_apis_that_take_them(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok"))

    make_adapter().evaluate(
        PROMPT, session=Session(), settings=ModelSettings(stop_sequences=("END",))
    )

    body = server.requests[0].body
    assert body["stop" if wire.name == "chat" else "stop_sequences"] == ["END"]


def test_reasoning_effort_is_spelled_the_way_each_api_takes_it(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("ok"))

    make_adapter().evaluate(
        PROMPT, session=Session(), settings=ModelSettings(reasoning_effort="low")
    )

    body = server.requests[0].body
    sent = {
        "responses": lambda: body["reasoning"]["effort"],
        "chat": lambda: body["reasoning_effort"],
        "messages": lambda: body["output_config"]["effort"],
    }[wire.name]()
    assert sent == "low"


@pytest.mark.parametrize(
    ("wire", "settings"),
    [
        ("responses", ModelSettings(seed=7)),
        ("responses", ModelSettings(stop_sequences=("END",))),
        ("messages", ModelSettings(seed=7)),
        ("messages", ModelSettings(temperature=0.5)),
        ("messages", ModelSettings(reasoning_effort="minimal")),
    ],
    indirect=["wire"],
)
def test_a_setting_the_api_refuses_is_an_error_before_any_request(
    wire, settings: ModelSettings, server: FakeProviderServer, make_adapter
) -> None:
    with pytest.raises(UnsupportedSettingError) as raised:
        make_adapter().evaluate(PROMPT, session=Session(), settings=settings)

    assert f"not {'accepted by' if 'minimal' in str(raised.value) else 'supported on'}" in str(
        raised.value
    )
    assert server.request_count == 0


@pytest.mark.parametrize(
    "fields",
    [
        {"temperature": 3.0},
        {"top_p": -0.1},
        {"max_output_tokens": 0},
        {"stop_sequences": "END"},
        {"seed": 1.5},
        {"reasoning_effort": "extreme"},
        {"parallel_tool_calls": "yes"},
    ],
)
def test_a_malformed_setting_is_refused_where_it_is_made(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"ModelSettings\."):
        ModelSettings(**fields)  # type: ignore[arg-type]
