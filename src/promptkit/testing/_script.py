"""Reply scripts: a YAML or JSON file saying what `FakeProviderServer` answers to which request.

Concurrent requests arrive in any order, so a script matches on content rather than order: the
first rule whose `when` texts all occur in the request (in any string of its JSON body: the
instructions, the user message, the tool results) gives the reply; `default` answers the rest,
and without one an unmatched request gets a loud 500 naming the problem. A file looks like:

    delay: 0.05                      # optional: seconds before every reply
    rules:
      - when: ["Reply in one word", "Paris"]
        text: "Paris"
      - when: "refund"
        json: {"verdict": "approve", "reason": "within 30 days"}
        usage: {input_tokens: 120, output_tokens: 14}
      - when: "overloaded"
        error: {status: 503, message: "try later"}
      - when: "Count the bolts"
        tool_calls:
          - name: count
            arguments: {name: bolts}
            result: "12"             # optional: text the tool's result must contain
      - when: "Count the bolts"
        json: {"count": 12}
    default: {text: "I do not know."}

A rule of `tool_calls` makes its calls once per conversation: a request that already sends back
their results (the model's next turn) goes on to the rules after it, here the answer. A call
with a `result` checks the application's tool: when the result sent back does not contain that
text, the request is answered with a 422 `script_error` naming the tool, the text expected and
the text it returned, so the evaluation of that case fails saying why.

`promptkit eval --provider fake --script FILE` serves a script, so a whole evaluation can be
tried with no model and no key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from promptkit._input_files import open_regular_file, read_limited, yaml_loader
from promptkit.errors import ArgumentTypeError, InputFileError, UsageError
from promptkit.testing._fake_server import RecordedRequest
from promptkit.testing._replies import Reply, ToolCall, Usage

_REPLY_KINDS = ("text", "json", "error", "tool_calls")
_RULE_FIELDS = frozenset({"when", "usage", "delay", *_REPLY_KINDS})
_CALL_FIELDS = frozenset({"name", "arguments", "result"})


MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""A reply script larger than this is refused (it is read whole)."""


class ReplyScriptError(UsageError, ValueError):
    """A reply script file is unreadable or malformed; the message says where (a caller's
    mistake: fix the file)."""


@dataclass(frozen=True)
class ExpectedResult:
    """What the result of a scripted tool call must contain."""

    tool: str
    text: str


@dataclass(frozen=True)
class ScriptRule:
    """A reply and the texts a request must contain to get it (none: any request).

    `expected` maps the id of each scripted call whose result is checked to what it must hold.
    """

    when: tuple[str, ...]
    reply: Reply
    expected: Mapping[str, ExpectedResult] = field(default_factory=dict)

    def matches(self, request_text: str, results: Mapping[str, str]) -> bool:
        """Whether the rule answers a request of this text that sends back `results`: its texts
        occur in it, and its tool calls (if any) were not made yet."""
        if any(call.call_id in results for call in self.reply.calls):
            return False
        return all(needle in request_text for needle in self.when)


@dataclass(frozen=True)
class ReplyScript:
    """Rules tried in order, then the default reply (None: an unmatched request is an error)."""

    rules: tuple[ScriptRule, ...]
    default: Reply | None = None

    def reply_to(self, request: RecordedRequest) -> Reply:
        """What the server answers `request`; usable as a `FakeProviderServer` responder."""
        results = request.tool_results
        mismatch = self._result_mismatch(results)
        if mismatch is not None:
            return Reply.error(422, mismatch, error_type="script_error")
        text = "\n".join(_strings(request.body))
        for rule in self.rules:
            if rule.matches(text, results):
                return rule.reply
        if self.default is not None:
            return self.default
        return Reply.error(
            500,
            "the reply script has no rule matching this request and no `default` reply",
            error_type="script_error",
        )

    def _result_mismatch(self, results: Mapping[str, str]) -> str | None:
        for rule in self.rules:
            for call_id, expected in rule.expected.items():
                returned = results.get(call_id)
                if returned is not None and expected.text not in returned:
                    shown = returned if len(returned) <= 300 else f"{returned[:300]}..."
                    return (
                        f"the reply script expected the result of tool {expected.tool!r} to"
                        f" contain {expected.text!r}; the tool returned {shown!r}"
                    )
        return None


def load_reply_script(path: str | Path) -> ReplyScript:
    """The script in `path` (YAML, or JSON, which YAML reads too)."""
    import yaml

    file = Path(path)
    try:
        with open_regular_file(file) as handle:
            text = read_limited(handle, file, MAX_SCRIPT_BYTES).decode("utf-8")
        loader = yaml_loader(text)
        try:
            document = loader.get_single_data()
        finally:
            loader.dispose()
    except InputFileError as error:
        raise ReplyScriptError(f"cannot use the reply script {error}") from None
    except UnicodeDecodeError:
        raise ReplyScriptError(f"{file}: the reply script is not UTF-8 text") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None)
        detail = f" ({problem})" if problem else ""
        raise ReplyScriptError(
            f"{file}{line}: the reply script is not valid YAML/JSON{detail}"
        ) from None
    return reply_script_from(document, where=str(file))


def reply_script_from(document: object, *, where: str = "reply script") -> ReplyScript:
    """A script from its parsed document (see the module docstring for the shape)."""
    if not isinstance(document, Mapping):
        raise ReplyScriptError(f"{where}: expected a mapping with `rules` and/or `default`")
    unknown = sorted(set(document) - {"rules", "default", "delay"})
    if unknown:
        raise ReplyScriptError(f"{where}: unknown key(s) {', '.join(unknown)}")
    delay = _seconds(document.get("delay", 0.0), f"{where}: delay")
    raw_rules = document.get("rules", [])
    if not isinstance(raw_rules, list):
        raise ReplyScriptError(f"{where}: `rules` must be a list")
    rules = tuple(
        _rule(raw, f"{where} rule {number}", delay, number)
        for number, raw in enumerate(raw_rules, start=1)
    )
    raw_default = document.get("default")
    default = (
        None if raw_default is None else _rule(raw_default, f"{where} default", delay, 0).reply
    )
    if default is not None and default.calls:
        raise ReplyScriptError(
            f"{where} default: a default reply cannot make tool calls; script them in a rule"
        )
    if not rules and default is None:
        raise ReplyScriptError(f"{where}: the script has no rules and no default reply")
    return ReplyScript(rules, default)


def _rule(raw: object, where: str, delay: float, number: int) -> ScriptRule:
    if not isinstance(raw, Mapping):
        raise ReplyScriptError(f"{where}: expected a mapping")
    unknown = sorted(set(raw) - _RULE_FIELDS)
    if unknown:
        raise ReplyScriptError(f"{where}: unknown key(s) {', '.join(unknown)}")
    when = raw.get("when", [])
    needles = [when] if isinstance(when, str) else when
    if not isinstance(needles, list) or not all(isinstance(n, str) and n for n in needles):
        raise ReplyScriptError(f"{where}: `when` must be a text or a list of texts")
    kinds = [kind for kind in _REPLY_KINDS if kind in raw]
    if len(kinds) != 1:
        raise ReplyScriptError(f"{where}: give exactly one of text, json, error or tool_calls")
    usage = _usage(raw.get("usage"), where)
    expected: dict[str, ExpectedResult] = {}
    try:
        if kinds[0] == "tool_calls":
            calls = _calls(raw["tool_calls"], where, number, expected)
            reply = Reply.tool_calls(*calls, usage=usage)
        else:
            reply = _reply(kinds[0], raw[kinds[0]], usage)
    except (TypeError, ValueError) as error:
        raise ReplyScriptError(f"{where}: {error}") from None
    seconds = _seconds(raw.get("delay", delay), f"{where}: delay")
    return ScriptRule(tuple(needles), replace(reply, delay_seconds=seconds), expected)


def _calls(
    raw: object, where: str, number: int, expected: dict[str, ExpectedResult]
) -> list[ToolCall]:
    """The tool calls of a rule, each with an id of its own in the script (so a request that
    answers them is recognised), and what their results must contain, into `expected`."""
    if not isinstance(raw, list) or not raw:
        raise ReplyScriptError(f"{where}: `tool_calls` must be a non-empty list of calls")
    calls: list[ToolCall] = []
    for index, item in enumerate(raw, start=1):
        at = f"{where} tool call {index}"
        if not isinstance(item, Mapping):
            raise ReplyScriptError(f"{at}: expected a mapping with name and arguments")
        unknown = sorted(set(item) - _CALL_FIELDS)
        if unknown:
            raise ReplyScriptError(f"{at}: unknown key(s) {', '.join(map(str, unknown))}")
        name, arguments, result = item.get("name"), item.get("arguments", {}), item.get("result")
        if not isinstance(name, str) or not name:
            raise ReplyScriptError(f"{at}: `name` must be the tool's name")
        if not isinstance(arguments, Mapping):
            raise ReplyScriptError(f"{at}: `arguments` must be a mapping of the tool's params")
        if result is not None and (not isinstance(result, str) or not result):
            raise ReplyScriptError(f"{at}: `result` must be the text the tool's result holds")
        call = ToolCall(name, dict(arguments), call_id=f"script_r{number}_c{index}")
        if result is not None:
            expected[str(call.call_id)] = ExpectedResult(name, result)
        calls.append(call)
    return calls


def _reply(kind: str, value: Any, usage: Usage | None) -> Reply:
    if kind == "text":
        if not isinstance(value, str):
            raise ArgumentTypeError("`text` must be a string")
        return Reply.text(value, usage=usage)
    if kind == "json":
        return Reply.json(value, usage=usage)
    if not isinstance(value, Mapping) or not isinstance(value.get("status"), int):
        raise ArgumentTypeError("`error` must be a mapping with an int `status` and a `message`")
    return Reply.error(value["status"], str(value.get("message", "scripted error")))


def _usage(raw: object, where: str) -> Usage | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ReplyScriptError(f"{where}: `usage` must be a mapping of token counts")
    try:
        return Usage(**dict(raw))
    except (TypeError, ValueError) as error:
        raise ReplyScriptError(f"{where}: usage: {error}") from None


def _seconds(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ReplyScriptError(f"{where} must be a number of seconds >= 0, got {value!r}")
    return float(value)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None and not isinstance(value, bool | int | float):
        yield json.dumps(value, default=repr)
