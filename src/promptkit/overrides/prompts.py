"""Finding prompts for the operator commands: by import reference or by entry point.

`package.module:attr` names a `Prompt`, or a function that takes no arguments and returns one
(for prompts that need a session or other objects built at run time). Installed packages can
list their prompts in the `promptkit.prompts` entry-point group, with the same kind of value.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from promptkit.errors import OverridesError
from promptkit.prompt import Prompt

ENTRY_POINT_GROUP = "promptkit.prompts"


@dataclass(frozen=True)
class EntryPointPrompts:
    """The prompts the `promptkit.prompts` entry points gave, and the ones that failed."""

    prompts: tuple[tuple[str, Prompt[Any]], ...]
    failures: tuple[OverridesError, ...]


def load_prompt(reference: str) -> Prompt[Any]:
    """The prompt named by `package.module:attr` (a Prompt or a no-argument factory of one).

    The current folder is importable, as with `python -m`, so a project's own prompts are
    found when the command runs from the project's root.
    """
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise OverridesError(
            f"invalid prompt reference {reference!r}: expected package.module:attr, for example"
            " myapp.prompts:review_prompt"
        )
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise OverridesError(
            f"prompt reference {reference!r}: cannot import {module_name!r} ({error}); run from"
            " the folder that contains the package, or install it"
        ) from error
    except Exception as error:  # the module's own code failed; say so with its error
        raise OverridesError(
            f"prompt reference {reference!r}: importing {module_name!r} failed:"
            f" {type(error).__name__}: {error}"
        ) from error
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise OverridesError(
                f"prompt reference {reference!r}: {module_name} has no attribute {attribute!r}"
            )
        value = getattr(value, part)
    if not isinstance(value, Prompt) and callable(value):
        try:
            value = value()
        except Exception as error:  # the factory's own code failed
            raise OverridesError(
                f"prompt reference {reference!r}: calling {attribute}() failed:"
                f" {type(error).__name__}: {error}"
            ) from error
    if not isinstance(value, Prompt):
        raise OverridesError(
            f"prompt reference {reference!r} is a {type(value).__name__}, not a Prompt or a"
            " function that returns one"
        )
    return value


def entry_point_prompts() -> EntryPointPrompts:
    """Every prompt listed in the `promptkit.prompts` entry-point group, by entry-point name."""
    prompts: list[tuple[str, Prompt[Any]]] = []
    failures: list[OverridesError] = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            prompts.append((point.name, load_prompt(point.value)))
        except OverridesError as error:
            failures.append(OverridesError(f"entry point {point.name!r}: {error}"))
    return EntryPointPrompts(tuple(prompts), tuple(failures))


def find_prompt(selector: str) -> Prompt[Any]:
    """A prompt by import reference (`module:attr`), or by entry-point name or `ns/key`."""
    if ":" in selector:
        return load_prompt(selector)
    found = entry_point_prompts()
    for name, prompt in found.prompts:
        if selector in (name, f"{prompt.ns}/{prompt.key}"):
            return prompt
    known = ", ".join(f"{name} ({p.ns}/{p.key})" for name, p in found.prompts) or "none"
    problems = "".join(f"; {failure}" for failure in found.failures)
    raise OverridesError(
        f"no prompt {selector!r} among the {ENTRY_POINT_GROUP} entry points (found: {known})"
        f"{problems}; pass --prompt package.module:attr instead"
    )
