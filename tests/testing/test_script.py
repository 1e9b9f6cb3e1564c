"""Reply scripts: FakeProviderServer answers by what a request contains, read from a file; a
script can make tool calls, which run the application's tools, and check their results."""

import os

import anthropic
import openai
import pytest

from promptkit import MarkdownSection, Prompt
from promptkit.adapters import AnthropicAdapter, OpenAIAdapter, WireAdapter
from promptkit.errors import ProviderError
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, ReplyScriptError, load_reply_script

from ..stock import Item, Shelf, count_tool

SCRIPT = """\
rules:
  - when: ["capital", "France"]
    text: Paris
  - when: overloaded
    error: {status: 400, message: no such thing}
default:
  json: {"answer": null}
"""


def ask(server: FakeProviderServer, question: str) -> str:
    with openai.OpenAI(
        api_key="sk-test-script", base_url=server.openai_base_url, max_retries=0
    ) as client:
        return client.responses.create(model="m", input=question).output_text


def test_first_rule_whose_texts_all_occur_answers(tmp_path, server: FakeProviderServer):
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT)
    server.respond_with(load_reply_script(path).reply_to)

    assert ask(server, "What is the capital of France?") == "Paris"
    assert ask(server, "France?") == '{"answer": null}'
    with pytest.raises(openai.BadRequestError, match="no such thing"):
        ask(server, "overloaded")


def test_request_no_rule_matches_gets_a_loud_error(tmp_path, server: FakeProviderServer):
    path = tmp_path / "script.json"
    path.write_text('{"rules": [{"when": "x", "text": "y"}]}')
    server.respond_with(load_reply_script(path).reply_to)

    with pytest.raises(openai.InternalServerError, match="no rule matching this request"):
        ask(server, "something else")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [\n", r"script\.yaml line 2: the reply script is not valid YAML"),
        ("rules: []\n", "no rules and no default reply"),
        ("rules:\n  - when: a\n    text: b\n    json: {}\n", "rule 1: give exactly one of"),
        ("rules:\n  - text: b\n    usage: {tokens: 3}\n", "rule 1: usage: "),
        ("default: {text: b}\ndelay: -1\n", "delay must be a number of seconds >= 0"),
    ],
)
def test_malformed_script_says_where(tmp_path, text, message):
    path = tmp_path / "script.yaml"
    path.write_text(text)

    with pytest.raises(ReplyScriptError, match=message):
        load_reply_script(path)


def test_a_reply_script_with_an_alias_is_refused_at_the_alias(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(
        'a: &a ["x", "x", "x", "x", "x", "x", "x", "x"]\n'
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        "default: {text: *b}\n"
    )

    with pytest.raises(ReplyScriptError, match=r"bomb.yaml line 2: .*aliases \(\*name\) are not"):
        load_reply_script(path)


def test_a_reply_script_that_is_a_fifo_is_refused_without_waiting(tmp_path):
    path = tmp_path / "replies.yaml"
    os.mkfifo(path)

    with pytest.raises(ReplyScriptError, match="a FIFO, not a regular file; it was not read"):
        load_reply_script(path)


STOCK: Prompt[None, Shelf] = Prompt(
    ns="tests/script",
    key="stock",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Count the bolts.",
            tools=(count_tool(),),
        ),
    ),
    deps_type=Shelf,
)

TOOL_SCRIPT = """\
rules:
  - when: Count the bolts.
    tool_calls:
      - name: count
        arguments: {name: bolts}
        result: "12"
  - when: Count the bolts.
    text: There are 12.
"""


def adapter_of(api: str, server: FakeProviderServer) -> WireAdapter:
    if api == "messages":
        client = anthropic.Anthropic(
            api_key="sk-ant-test-script", base_url=server.anthropic_base_url, max_retries=0
        )
        return AnthropicAdapter(model="claude-haiku-4-5", client=client)
    openai_client = openai.OpenAI(
        api_key="sk-test-script", base_url=server.openai_base_url, max_retries=0
    )
    return OpenAIAdapter(model="gpt-4.1-mini", client=openai_client, api=api)  # type: ignore[arg-type]


@pytest.fixture(params=["responses", "chat", "messages"])
def scripted(request, tmp_path, server: FakeProviderServer) -> WireAdapter:
    path = tmp_path / "tools.yaml"
    path.write_text(TOOL_SCRIPT)
    server.respond_with(load_reply_script(path).reply_to)
    return adapter_of(request.param, server)


def test_a_scripted_tool_call_is_made_once_then_the_next_rule_answers(
    scripted: WireAdapter,
) -> None:
    response = scripted.evaluate(STOCK, session=Session(), deps=Shelf({"bolts": 12}))

    assert [(call.name, call.params, call.result.message) for call in response.tool_calls] == [
        ("count", Item(name="bolts"), "12")
    ]
    assert response.text == "There are 12."


def test_a_tool_result_the_script_does_not_expect_fails_the_call_naming_the_tool(
    scripted: WireAdapter,
) -> None:
    with pytest.raises(
        ProviderError,
        match="expected the result of tool 'count' to contain '12'; the tool returned '7'",
    ):
        scripted.evaluate(STOCK, session=Session(), deps=Shelf({"bolts": 7}))


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        ("[]", "`tool_calls` must be a non-empty list"),
        ("[{arguments: {}}]", "tool call 1: `name` must be"),
        ("[{name: count, arguments: [1]}]", "`arguments` must be a mapping"),
        ("[{name: count, result: 12}]", "`result` must be the text"),
        ("[{name: count, returns: x}]", "unknown key"),
    ],
)
def test_a_malformed_scripted_tool_call_says_where(tmp_path, calls: str, message: str) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(f"rules:\n  - when: a\n    tool_calls: {calls}\n")

    with pytest.raises(ReplyScriptError, match=f"rule 1 .*{message}|rule 1: {message}"):
        load_reply_script(path)
