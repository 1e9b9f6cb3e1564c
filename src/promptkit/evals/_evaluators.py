"""Evaluators: how one reply to one case is scored, as a `Score` in [0, 1] with a reason.

An evaluator has a `name` and `evaluate(case, response)`, which returns a `Score`, None when it
does not apply to the case (an expected-output check on a case with no expected output), or an
awaitable of either (the LLM judge). The built-in ones compare with the case's expected output:
`ExactMatch` (text, or the whole structured output), `Contains` and `Regex` (text),
`JsonFieldEquals` (one field of the structured output); `FunctionEvaluator` wraps any Python
callable. An evaluator that raises is reported for that case; it never stops a run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from promptkit.errors import ArgumentTypeError, ArgumentValueError
from promptkit.evals._dataset import Case
from promptkit.secrets import redact_secrets

if TYPE_CHECKING:
    from promptkit.adapters import PromptResponse


@dataclass(frozen=True)
class Score:
    """How well a reply did by one evaluator: `value` in [0, 1] (1 is best) and why."""

    value: float
    reason: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise ArgumentTypeError(f"Score.value must be a number in [0, 1], got {self.value!r}")
        if not (math.isfinite(self.value) and 0.0 <= self.value <= 1.0):
            raise ArgumentValueError(f"Score.value must be in [0, 1], got {self.value!r}")
        object.__setattr__(self, "value", float(self.value))

    @classmethod
    def of(cls, passed: bool, reason: str) -> Score:
        """1.0 when `passed`, else 0.0."""
        return cls(1.0 if passed else 0.0, reason)


EvaluatorOutcome = Score | None | Awaitable[Score | None]


class Evaluator(Protocol):
    """Scores one reply to one case."""

    @property
    def name(self) -> str:
        """How reports name this evaluator."""
        ...

    def evaluate(self, case: Case, response: PromptResponse[Any]) -> EvaluatorOutcome:
        """A Score, None when this evaluator does not apply to `case`, or an awaitable of one."""
        ...


@dataclass(frozen=True)
class ExactMatch:
    """The reply equals the expected output: the text (surrounding whitespace ignored) when the
    expected output is a string, else the structured output as JSON."""

    name: str = "exact"

    def evaluate(self, case: Case, response: PromptResponse[Any]) -> Score | None:
        if case.expected is None:
            return None
        if isinstance(case.expected, str):
            matched = response.text.strip() == case.expected.strip()
            return Score.of(matched, "text equals expected" if matched else _differs(response))
        actual = output_json(response)
        matched = actual == case.expected
        return Score.of(
            matched,
            "output equals expected" if matched else f"output is {_short(json.dumps(actual))}",
        )


@dataclass(frozen=True)
class Contains:
    """The reply text contains `needle` (default: the case's expected text)."""

    needle: str | None = None
    case_sensitive: bool = True
    name: str = "contains"

    def evaluate(self, case: Case, response: PromptResponse[Any]) -> Score | None:
        needle = self.needle if self.needle is not None else case.expected
        if not isinstance(needle, str):
            return None
        text = response.text
        if not self.case_sensitive:
            needle, text = needle.casefold(), text.casefold()
        found = needle in text
        return Score.of(found, f"{'found' if found else 'missing'}: {_short(needle)}")


@dataclass(frozen=True)
class Regex:
    """The reply text matches `pattern` somewhere (`re.search`)."""

    pattern: str
    name: str = "regex"
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "compiled", re.compile(self.pattern))
        except re.error as error:
            raise ArgumentValueError(
                f"Regex evaluator: invalid pattern {self.pattern!r}: {error}"
            ) from None

    def evaluate(self, case: Case, response: PromptResponse[Any]) -> Score:
        found = self.compiled.search(response.text) is not None
        return Score.of(found, f"{'matches' if found else 'no match for'} /{self.pattern}/")


_FROM_CASE: Any = object()


@dataclass(frozen=True)
class JsonFieldEquals:
    """One field of the structured output (a dotted path: `verdict`, `items.0.name`) equals the
    same field of the case's expected output, or `value` when given."""

    path: str
    value: Any = _FROM_CASE
    name: str = ""

    def __post_init__(self) -> None:
        if not self.path:
            raise ArgumentValueError(
                "JsonFieldEquals needs a field path such as 'verdict' or 'a.b'"
            )
        if not self.name:
            object.__setattr__(self, "name", f"json:{self.path}")

    def evaluate(self, case: Case, response: PromptResponse[Any]) -> Score | None:
        if self.value is _FROM_CASE:
            found, expected = field_at(case.expected, self.path)
            if not found:
                return None
        else:
            expected = self.value
        present, actual = field_at(output_json(response), self.path)
        if not present:
            return Score(0.0, f"{self.path} is missing from the output")
        matched = actual == expected
        reason = f"{self.path} = {_short(json.dumps(actual))}"
        return Score.of(
            matched, reason if matched else f"{reason}, expected {_short(repr(expected))}"
        )


ScoreFunction = Callable[[Case, "PromptResponse[Any]"], Score | float | bool | None]


@dataclass(frozen=True)
class FunctionEvaluator:
    """A Python callable `(case, response)` returning a Score, a number in [0, 1], a bool, or
    None when it does not apply."""

    function: ScoreFunction
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", getattr(self.function, "__name__", "function"))

    def evaluate(self, case: Case, response: PromptResponse[Any]) -> Score | None:
        result = self.function(case, response)
        if result is None or isinstance(result, Score):
            return result
        if isinstance(result, bool):
            return Score.of(result, "returned True" if result else "returned False")
        return Score(result, f"returned {result:g}")


def as_evaluator(candidate: Evaluator | ScoreFunction) -> Evaluator:
    """`candidate` itself when it is an evaluator, else the callable wrapped."""
    if hasattr(candidate, "evaluate") and hasattr(candidate, "name"):
        return cast(Evaluator, candidate)
    if callable(candidate):
        return FunctionEvaluator(candidate)
    raise ArgumentTypeError(f"not an evaluator or a callable: {candidate!r}")


def output_json(response: PromptResponse[Any]) -> Any:
    """The structured output as JSON values; the reply text parsed as JSON when there is none
    (None when it is not JSON)."""
    if response.output is not None:
        from promptkit._jsonable import json_ready

        return json_ready(response.output)
    try:
        return json.loads(response.text)
    except ValueError:
        return None


def field_at(document: Any, path: str) -> tuple[bool, Any]:
    """(True, value) at the dotted `path` of a JSON document, or (False, None) when absent."""
    current = document
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def _differs(response: PromptResponse[Any]) -> str:
    return f"text is {_short(response.text.strip())}"


def _short(text: str, limit: int = 80) -> str:
    # Redacted before it is flattened and cut: a cut credential is no longer recognised.
    flat = " ".join(redact_secrets(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
