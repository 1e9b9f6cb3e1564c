"""Reply scripts: FakeProviderServer answers by what a request contains, read from a file."""

import os

import openai
import pytest

from promptkit.testing import FakeProviderServer, ReplyScriptError, load_reply_script

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
