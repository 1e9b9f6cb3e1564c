"""`evaluate` through the real SDK clients against FakeProviderServer, for each wire API: plain
text, structured output, the tool loop and every way a tool call can go wrong, the round limit,
and what the session records.
"""

import asyncio
import inspect
import json

import pytest
import structlog
from pydantic import BaseModel, Field

from promptkit import (
    MarkdownSection,
    OutputParseError,
    Prompt,
    Tool,
    ToolContext,
    ToolLoopLimitError,
    ToolResult,
)
from promptkit.adapters import DEFAULT_USER_MESSAGE, PromptResponse
from promptkit.session import PromptExecuted, PromptRendered, Session, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage


class Greeting(BaseModel):
    name: str


class Verdict(BaseModel):
    greeting: str
    excited: bool


class AddParams(BaseModel):
    a: int
    b: int


class WordParams(BaseModel):
    word: str


def add(params: AddParams, context: ToolContext) -> ToolResult:
    return ToolResult(message=str(params.a + params.b), value=params.a + params.b)


def shout(params: WordParams, context: ToolContext) -> ToolResult:
    return ToolResult(message=params.word.upper(), value={"shouted": params.word.upper()})


def explode(params: WordParams, context: ToolContext) -> ToolResult:
    raise RuntimeError("disk full at /var/secret/path")


TOOLS = (
    Tool(name="add", description="Add two integers.", params_type=AddParams, handler=add),
    Tool(name="shout", description="Upper-case a word.", params_type=WordParams, handler=shout),
    Tool(name="explode", description="Always fails.", params_type=WordParams, handler=explode),
)
GREET = MarkdownSection(
    title="Task", key="task", template="Greet {{ name }}.", params_type=Greeting
)
TEXT_PROMPT: Prompt[None] = Prompt(ns="tests/adapters", key="greet", sections=(GREET,))
STRUCTURED_PROMPT: Prompt[Verdict] = Prompt(
    ns="tests/adapters", key="verdict", sections=(GREET,), output_type=Verdict
)
TOOLS_PROMPT: Prompt[None] = Prompt(
    ns="tests/adapters",
    key="tools",
    sections=(MarkdownSection(title="Tools", key="tools", template="Use the tools.", tools=TOOLS),),
)


def test_plain_text_reply_is_returned_with_provider_model_and_usage(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("Hello, Ada!", usage=Usage(input_tokens=12, output_tokens=4)))
    adapter = make_adapter()

    response = adapter.evaluate(TEXT_PROMPT, Greeting(name="Ada"), session=Session())

    assert response.text == "Hello, Ada!"
    assert response.output is None
    assert response.tool_calls == ()
    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.cached_tokens,
    ) == (
        12,
        4,
        0,
    )
    assert response.prompt_name == "tests/adapters/greet"
    assert response.model == wire.model
    assert response.provider == adapter.provider


def test_rendered_prompt_is_the_system_text_and_the_user_turn_is_fixed(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("Hi"))

    make_adapter().evaluate(TEXT_PROMPT, Greeting(name="Ada"), session=Session())

    body = server.requests[0].body
    assert wire.system_text(body) == "## 1. Task\n\nGreet Ada."
    assert wire.user_text(body) == DEFAULT_USER_MESSAGE


def test_user_message_replaces_the_default_user_turn(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("Hi"))

    make_adapter().evaluate(
        TEXT_PROMPT, Greeting(name="Ada"), session=Session(), user_message="Be brief."
    )

    assert wire.user_text(server.requests[0].body) == "Be brief."


def test_structured_output_is_requested_natively_and_parsed_into_the_output_type(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.json({"greeting": "Hello, Ada!", "excited": True}))

    response = make_adapter().evaluate(STRUCTURED_PROMPT, Greeting(name="Ada"), session=Session())

    assert response.output == Verdict(greeting="Hello, Ada!", excited=True)
    body = server.requests[0].body
    native = {
        "responses": lambda: body["text"]["format"],
        "chat": lambda: body["response_format"]["json_schema"],
        "messages": lambda: body["output_config"]["format"],
    }[wire.name]()
    assert native["schema"]["additionalProperties"] is False
    assert native["schema"]["required"] == ["greeting", "excited"]


def test_prompt_only_structured_output_sends_no_native_format(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text('```json\n{"greeting": "Hi", "excited": false}\n```'))

    response = make_adapter(structured_output="prompt").evaluate(
        STRUCTURED_PROMPT, Greeting(name="Ada"), session=Session()
    )

    assert response.output == Verdict(greeting="Hi", excited=False)
    body = server.requests[0].body
    assert not {"text", "response_format", "output_config"} & set(body)
    assert "Reply with one JSON value" in wire.system_text(body)


def test_malformed_json_output_raises_output_parse_error_with_the_raw_text(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("Sure! Here it is: {greeting: Ada"))
    session = Session()

    with pytest.raises(OutputParseError) as raised:
        make_adapter().evaluate(
            STRUCTURED_PROMPT, Greeting(name="Ada"), session=session, output_retries=0
        )

    assert raised.value.raw_text == "Sure! Here it is: {greeting: Ada"
    assert "Verdict" in str(raised.value)
    assert session.select_all(PromptExecuted) == ()


def test_output_parse_error_carries_the_replys_usage_and_no_output(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.text("not JSON", usage=Usage(input_tokens=31, output_tokens=7)))

    with pytest.raises(OutputParseError) as raised:
        make_adapter().evaluate(
            STRUCTURED_PROMPT, Greeting(name="Ada"), session=Session(), output_retries=0
        )

    partial = raised.value.response
    assert isinstance(partial, PromptResponse)
    assert (partial.text, partial.output, partial.model) == ("not JSON", None, wire.model)
    assert (
        partial.usage.input_tokens,
        partial.usage.output_tokens,
        partial.usage.cached_tokens,
    ) == (
        31,
        7,
        0,
    )


def test_two_round_tool_loop_runs_every_call_and_sends_each_result_back(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("add", {"a": 2, "b": 3}, call_id="call_1")),
        Reply.tool_calls(ToolCall("shout", {"word": "done"}, call_id="call_2")),
        Reply.text("2 + 3 = 5, DONE"),
    )

    response = make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    assert response.text == "2 + 3 = 5, DONE"
    assert [(call.name, call.params, call.result.message) for call in response.tool_calls] == [
        ("add", AddParams(a=2, b=3), "5"),
        ("shout", WordParams(word="done"), "DONE"),
    ]
    assert all(call.success for call in response.tool_calls)
    assert server.request_count == 3
    assert [result[:2] for result in wire.tool_results(server.requests[2].body)] == [
        ("call_1", "5"),
        ("call_2", "DONE"),
    ]


def test_several_calls_in_one_reply_all_run_in_order(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("add", {"a": 1, "b": 1}, call_id="call_a"),
            ToolCall("shout", {"word": "hi"}, call_id="call_b"),
        ),
        Reply.text("ok"),
    )

    response = make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    assert [call.call_id for call in response.tool_calls] == ["call_a", "call_b"]
    assert [r[:2] for r in wire.tool_results(server.requests[1].body)] == [
        ("call_a", "2"),
        ("call_b", "HI"),
    ]


def test_usage_is_summed_over_every_request(server: FakeProviderServer, make_adapter) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("add", {"a": 1, "b": 2}),
            usage=Usage(input_tokens=100, output_tokens=10, cached_tokens=80),
        ),
        Reply.text("3", usage=Usage(input_tokens=120, output_tokens=5, cached_tokens=100)),
    )

    response = make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.cached_tokens,
    ) == (
        220,
        15,
        180,
    )


def test_unknown_tool_is_answered_with_an_error_result_naming_the_offered_tools(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("delete_everything", {"path": "/"}, call_id="call_x")),
        Reply.text("I cannot do that."),
    )

    response = make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    (call,) = response.tool_calls
    assert not call.success
    assert call.params == {"path": "/"}
    (result,) = wire.tool_results(server.requests[1].body)
    assert result[0] == "call_x"
    assert "unknown tool 'delete_everything'" in result[1]
    assert "add, shout, explode" in result[1]
    assert result[2] in (None, True)
    assert response.text == "I cannot do that."


def test_invalid_arguments_are_answered_with_the_validation_error(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("add", {"a": "two", "b": 3}, call_id="call_bad")),
        Reply.tool_calls(ToolCall("add", {"a": 2, "b": 3}, call_id="call_good")),
        Reply.text("5"),
    )

    response = make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    first, second = response.tool_calls
    assert (first.success, first.params) == (False, {"a": "two", "b": 3})
    assert second.success
    (result,) = wire.tool_results(server.requests[1].body)
    assert "tool 'add': invalid arguments: a:" in result[1]
    assert result[2] in (None, True)


@pytest.mark.parametrize("wire", ["responses", "chat"], indirect=True)
def test_arguments_that_are_not_json_are_answered_with_an_error_result(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    # Only the OpenAI wire formats carry arguments as text; Anthropic sends a JSON object.
    server.enqueue(
        Reply.tool_calls(ToolCall("add", '{"a": 2, "b":', call_id="call_cut")),
        Reply.text("sorry"),
    )

    response = make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    (call,) = response.tool_calls
    assert (call.success, call.params) == (False, '{"a": 2, "b":')
    (result,) = wire.tool_results(server.requests[1].body)
    assert "invalid arguments" in result[1]


def test_handler_exception_is_answered_with_an_error_result_and_logged(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("explode", {"word": "x"}, call_id="call_boom")),
        Reply.text("The tool failed."),
    )

    with structlog.testing.capture_logs() as logs:
        response = make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    (call,) = response.tool_calls
    assert not call.success
    (result,) = wire.tool_results(server.requests[1].body)
    assert "tool 'explode' failed with RuntimeError" in result[1]
    assert "/var/secret/path" not in result[1]
    (failure,) = [entry for entry in logs if entry["event"] == "tool_handler_failed"]
    assert failure["tool"] == "explode"
    assert failure["error_type"] == "RuntimeError"
    assert failure["call_id"] == "call_boom"


def test_tool_round_limit_raises_tool_loop_limit_error_without_running_the_extra_calls(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("add", {"a": 1, "b": 1})),
        Reply.tool_calls(ToolCall("add", {"a": 2, "b": 2})),
        Reply.tool_calls(ToolCall("shout", {"word": "again"})),
    )
    session = Session()

    with pytest.raises(ToolLoopLimitError) as raised:
        make_adapter().evaluate(TOOLS_PROMPT, session=session, max_tool_rounds=2)

    assert "after 2 tool rounds" in str(raised.value)
    assert "(shout)" in str(raised.value)
    assert server.request_count == 3
    assert [event.params for event in session.select_all(ToolInvoked)] == [
        {"a": 1, "b": 1},
        {"a": 2, "b": 2},
    ]


def test_zero_tool_rounds_refuses_the_first_tool_call(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("add", {"a": 1, "b": 1})))

    with pytest.raises(ToolLoopLimitError):
        make_adapter().evaluate(TOOLS_PROMPT, session=Session(), max_tool_rounds=0)

    assert server.request_count == 1


def test_session_records_rendered_each_tool_call_and_executed(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("shout", {"word": "hey"}, call_id="call_s"),
            ToolCall("nope", "{}", call_id="call_n"),
        ),
        Reply.text("HEY", usage=Usage(input_tokens=7, output_tokens=3, cached_tokens=2)),
    )
    session = Session()

    make_adapter().evaluate(TOOLS_PROMPT, session=session)

    (rendered,) = session.select_all(PromptRendered)
    assert (rendered.prompt_ns, rendered.prompt_key) == ("tests/adapters", "tools")
    assert rendered.tool_names == ("add", "shout", "explode")
    shouted, unknown = session.select_all(ToolInvoked)
    assert (shouted.name, shouted.params, shouted.value, shouted.success) == (
        "shout",
        {"word": "hey"},
        {"shouted": "HEY"},
        True,
    )
    assert (shouted.call_id, shouted.result_message) == ("call_s", "HEY")
    assert (unknown.name, unknown.params, unknown.value) == ("nope", {}, None)
    assert not unknown.success
    (executed,) = session.select_all(PromptExecuted)
    assert (executed.provider, executed.model, executed.text) == (
        "anthropic" if wire.name == "messages" else "openai",
        wire.model,
        "HEY",
    )
    # The first reply reports the default Usage (10 in, 5 out, 0 cached).
    assert (executed.input_tokens, executed.output_tokens, executed.cached_tokens) == (17, 8, 2)


def test_structured_output_is_recorded_json_ready_in_prompt_executed(
    server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.json({"greeting": "Hi", "excited": True}))
    session = Session()

    make_adapter().evaluate(STRUCTURED_PROMPT, Greeting(name="Ada"), session=session)

    (executed,) = session.select_all(PromptExecuted)
    assert executed.output == {"greeting": "Hi", "excited": True}
    assert json.loads(executed.text) == executed.output


class Assignment(BaseModel):
    team_name: str = Field(alias="teamName")


def test_an_aliased_output_is_recorded_as_the_model_wrote_it(
    server: FakeProviderServer, make_adapter, tmp_path
) -> None:
    prompt = Prompt(
        ns="tests/adapters",
        key="assign",
        sections=(MarkdownSection(title="T", key="t", template="Pick a team."),),
        output_type=Assignment,
    )
    server.enqueue(Reply.json({"teamName": "billing"}))
    session = Session()

    response = make_adapter().evaluate(prompt, session=session, output_dir=tmp_path)

    assert response.output.team_name == "billing"
    (executed,) = session.select_all(PromptExecuted)
    assert executed.output == {"teamName": "billing"}
    assert json.loads((tmp_path / "response.json").read_text())["output"] == executed.output


def test_tool_handler_sees_the_call_id_and_the_absolute_deadline(
    server: FakeProviderServer, make_adapter
) -> None:
    seen: list[ToolContext] = []

    def remember(params: WordParams, context: ToolContext) -> ToolResult:
        seen.append(context)
        return ToolResult(message="ok")

    prompt: Prompt[None] = Prompt(
        ns="tests/adapters",
        key="context",
        sections=(
            MarkdownSection(
                title="T",
                key="t",
                template="Call it.",
                tools=(
                    Tool(
                        name="remember",
                        description="Remember.",
                        params_type=WordParams,
                        handler=remember,
                    ),
                ),
            ),
        ),
    )
    server.enqueue(
        Reply.tool_calls(ToolCall("remember", {"word": "x"}, call_id="call_ctx")), Reply.text("ok")
    )

    make_adapter().evaluate(prompt, session=Session(), deadline=30)

    (context,) = seen
    assert (context.prompt_ns, context.prompt_key, context.call_id) == (
        "tests/adapters",
        "context",
        "call_ctx",
    )
    assert context.deadline is not None


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"max_tool_rounds": -1}, ValueError, "max_tool_rounds must be 0 or more"),
        ({"max_tool_rounds": 2.5}, TypeError, "max_tool_rounds must be an int"),
        ({"user_message": ""}, ValueError, "user_message must be a non-empty string"),
        ({"deadline": "soon"}, TypeError, "deadline must be seconds"),
    ],
)
def test_evaluate_arguments_are_checked_before_any_request(
    server: FakeProviderServer,
    make_adapter,
    options: dict[str, object],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        make_adapter().evaluate(TEXT_PROMPT, Greeting(name="Ada"), session=Session(), **options)

    assert server.request_count == 0


def test_evaluate_refuses_settings_that_are_not_model_settings(
    server: FakeProviderServer, make_adapter
) -> None:
    with pytest.raises(TypeError, match="settings must be a promptkit ModelSettings, got dict"):
        make_adapter().evaluate(
            TEXT_PROMPT, Greeting(name="Ada"), session=Session(), settings={"seed": 7}
        )

    assert server.request_count == 0


@pytest.mark.parametrize("method", ["evaluate", "aevaluate", "stream", "astream"])
def test_a_misspelt_option_is_refused_by_name_before_any_request(
    server: FakeProviderServer, make_adapter, method: str
) -> None:
    call = getattr(make_adapter(), method)
    options: dict[str, object] = {"max_tool_round": 3}
    expected = (
        rf"\.{method}\(\) got an unexpected keyword argument 'max_tool_round'; its options are"
        r" .*max_tool_rounds"
    )

    with pytest.raises(TypeError, match=expected):
        started = call(TEXT_PROMPT, Greeting(name="Ada"), session=Session(), **options)
        if inspect.iscoroutine(started):  # aevaluate checks its options when awaited
            asyncio.run(started)

    assert server.request_count == 0


@pytest.mark.parametrize("wire", ["messages"], indirect=True)
def test_anthropic_system_block_is_a_prompt_caching_breakpoint(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("add", {"a": 1, "b": 2})), Reply.text("3"))

    make_adapter().evaluate(TOOLS_PROMPT, session=Session())

    for request in server.requests:
        (block,) = request.body["system"]
        assert block["cache_control"] == {"type": "ephemeral"}
        assert block["text"] == "## 1. Tools\n\nUse the tools."
