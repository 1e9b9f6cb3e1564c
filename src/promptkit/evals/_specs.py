"""Evaluators named in text, as the command line takes them (`--evaluator SPEC`).

exact               ExactMatch against the case's expected output
contains[:TEXT]     Contains TEXT (default: the expected text)
icontains[:TEXT]    the same, ignoring case
regex:PATTERN       Regex
json:FIELD.PATH     JsonFieldEquals against the same field of the expected output
judge:CRITERIA      LLMJudge on CRITERIA, run through the judge adapter
package.module:attr an Evaluator object, or a callable (case, response) -> score
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptkit.errors import ArgumentValueError
from promptkit.evals._evaluators import (
    Contains,
    Evaluator,
    ExactMatch,
    JsonFieldEquals,
    Regex,
    as_evaluator,
)

if TYPE_CHECKING:
    from promptkit.adapters import ProviderAdapter

SPEC_HELP = (
    "exact, contains[:TEXT], icontains[:TEXT], regex:PATTERN, json:FIELD, judge:CRITERIA, or"
    " package.module:attr (an evaluator or a callable (case, response) -> score)"
)


def evaluator_from_spec(spec: str, *, judge_adapter: ProviderAdapter | None = None) -> Evaluator:
    """The evaluator `spec` names; ValueError saying what is accepted when it names none."""
    kind, has_argument, argument = spec.partition(":")
    if kind == "exact" and not has_argument:
        return ExactMatch()
    if kind in ("contains", "icontains"):
        return Contains(
            argument if has_argument else None,
            case_sensitive=kind == "contains",
            name=spec,
        )
    if kind == "regex" and argument:
        return Regex(argument, name=spec)
    if kind == "json" and argument:
        return JsonFieldEquals(argument)
    if kind == "judge" and argument:
        if judge_adapter is None:
            raise ArgumentValueError(f"evaluator {spec!r} needs a model to judge with")
        from promptkit.evals._judge import LLMJudge

        return LLMJudge(judge_adapter, argument)
    if kind and argument and kind not in ("exact", "regex", "json", "judge"):
        return as_evaluator(_import(kind, argument, spec))
    raise ArgumentValueError(f"unknown evaluator {spec!r}: use {SPEC_HELP}")


def _import(module_name: str, attribute: str, spec: str) -> Any:
    # As with `python -m`, the current folder is importable, so a project's own evaluators load.
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ArgumentValueError(
            f"evaluator {spec!r}: cannot import {module_name}: {error}"
        ) from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ArgumentValueError(
            f"evaluator {spec!r}: {module_name} has no {attribute!r}"
        ) from None
