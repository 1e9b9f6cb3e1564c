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
    default: {text: "I do not know."}

`promptkit eval --provider fake --script FILE` serves a script, so a whole evaluation can be
tried with no model and no key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from promptkit._input_files import open_regular_file, read_limited, yaml_loader
from promptkit.errors import ArgumentTypeError, InputFileError, UsageError
from promptkit.testing._fake_server import RecordedRequest
from promptkit.testing._replies import Reply, Usage

_REPLY_KINDS = ("text", "json", "error")
_RULE_FIELDS = frozenset({"when", "usage", "delay", *_REPLY_KINDS})


MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""A reply script larger than this is refused (it is read whole)."""


class ReplyScriptError(UsageError, ValueError):
    """A reply script file is unreadable or malformed; the message says where (a caller's
    mistake: fix the file)."""


@dataclass(frozen=True)
class ScriptRule:
    """A reply and the texts a request must contain to get it (none: any request)."""

    when: tuple[str, ...]
    reply: Reply

    def matches(self, request_text: str) -> bool:
        return all(needle in request_text for needle in self.when)


@dataclass(frozen=True)
class ReplyScript:
    """Rules tried in order, then the default reply (None: an unmatched request is an error)."""

    rules: tuple[ScriptRule, ...]
    default: Reply | None = None

    def reply_to(self, request: RecordedRequest) -> Reply:
        """What the server answers `request`; usable as a `FakeProviderServer` responder."""
        text = "\n".join(_strings(request.body))
        for rule in self.rules:
            if rule.matches(text):
                return rule.reply
        if self.default is not None:
            return self.default
        return Reply.error(
            500,
            "the reply script has no rule matching this request and no `default` reply",
            error_type="script_error",
        )


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
        _rule(raw, f"{where} rule {number}", delay) for number, raw in enumerate(raw_rules, start=1)
    )
    raw_default = document.get("default")
    default = None if raw_default is None else _rule(raw_default, f"{where} default", delay).reply
    if not rules and default is None:
        raise ReplyScriptError(f"{where}: the script has no rules and no default reply")
    return ReplyScript(rules, default)


def _rule(raw: object, where: str, delay: float) -> ScriptRule:
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
        raise ReplyScriptError(f"{where}: give exactly one of text, json or error")
    try:
        reply = _reply(kinds[0], raw[kinds[0]], _usage(raw.get("usage"), where))
    except (TypeError, ValueError) as error:
        raise ReplyScriptError(f"{where}: {error}") from None
    seconds = _seconds(raw.get("delay", delay), f"{where}: delay")
    return ScriptRule(tuple(needles), replace(reply, delay_seconds=seconds))


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
