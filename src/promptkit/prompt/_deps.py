"""Typed deps: the value a call passes for its tools' handlers, and the checks that keep it the
type every handler reads.

A handler says what it reads by annotating its context (`ToolContext[Repo]`: a `DepsNeed`); a
prompt declares the type a call passes (`deps_type=Repo`). When the prompt is built, every
tool's need must be met by the declared type (`require_declared_deps`); when it is called, the
value must be of it (`require_call_deps`), or nothing is sent. Type checkers check the same
through `Tool[Params, Deps]` and `Prompt[Output, Deps]`; these checks are for code they do not
see (a deps factory named on the command line, an untyped caller).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from promptkit.errors import DepsError, PromptValidationError
from promptkit.prompt._params import type_name


@dataclass(frozen=True)
class DepsNeed:
    """The deps a tool's handler needs, as its context annotation says (`ToolContext[Deps]`).

    `type` is the type itself, or None when the annotation names one that cannot be resolved
    where the handler was defined (a name imported only under `TYPE_CHECKING`): the tool still
    needs deps, but their type is checked by type checkers only. `written` is how the
    annotation spells it, for messages.
    """

    type: Any
    written: str


@dataclass(frozen=True)
class DepsReader:
    """A tool of a prompt that reads deps: its name, its section's path and what it needs."""

    tool: str
    path: tuple[str, ...]
    need: DepsNeed


def require_declared_deps(where: str, deps_type: Any, readers: Sequence[DepsReader]) -> None:
    """Raise `PromptValidationError` unless `deps_type` (what the prompt at `where` declares)
    serves every reader: one is declared when any tool reads deps, and each can use it."""
    for reader in readers:
        tool = f"{where}: tool {reader.tool!r} (section {'/'.join(reader.path)})"
        if deps_type is None:
            raise PromptValidationError(
                f"{tool} reads deps of type {reader.need.written}, but the prompt declares no"
                f" deps type; pass deps_type={reader.need.written} to Prompt(...)"
            )
        if not deps_type_accepts(reader.need.type, deps_type):
            raise PromptValidationError(
                f"{tool} reads deps of type {reader.need.written}, which the prompt's"
                f" deps_type={type_name(deps_type)} is not; declare a deps type every tool can use"
            )


def require_call_deps(
    where: str, deps_type: Any, readers: Sequence[DepsReader], deps: object
) -> None:
    """Raise `DepsError` unless `deps` is what a call of the prompt at `where` must pass: a value
    of `deps_type` (None only when it declares none, or a type that allows it)."""
    if deps_type is None:
        return
    names = ", ".join(repr(reader.tool) for reader in readers)
    read_by = f" (read by tool {names})" if names else ""
    name = type_name(deps_type)
    if deps is None and not deps_accept_none(deps_type):
        raise DepsError(
            f"{where} needs deps of type {name}{read_by} and the call passed none; pass"
            f" deps={name}(...) to the call (or bind them in the App)"
        )
    if not deps_instance_of(deps, deps_type):
        raise DepsError(
            f"{where} needs deps of type {name}{read_by}; the call passed a {type(deps).__name__}"
        )


def require_tool_deps(tool: str, need: DepsNeed | None, deps: object) -> None:
    """Raise `DepsError` when a tool run directly needs deps and `deps` is None."""
    if deps is None and need is not None and not deps_accept_none(need.type):
        raise DepsError(
            f"tool {tool!r} needs deps of type {need.written} and none were passed; pass"
            " deps=... to the call (or bind them in the App)"
        )


def deps_accept_none(deps_type: Any) -> bool:
    """Whether None is a valid value of `deps_type` (`Deps | None`, `Optional[Deps]`)."""
    return deps_type is not None and type(None) in _union_members(deps_type)


def deps_type_accepts(reader: Any, given: Any) -> bool:
    """Whether a value of `given` (the type a prompt declares) is one `reader` (the type a
    handler reads) can use: the same type, a subclass, a member of a union it accepts."""
    if reader is None or given is None:
        return True  # a type only a type checker sees: it checks
    if reader in (Any, object) or reader == given:
        return True
    given_members = _union_members(given)
    if len(given_members) > 1:
        return all(deps_type_accepts(reader, member) for member in given_members)
    if any(deps_type_accepts(member, given) for member in _union_members(reader)[1:]):
        return True
    reader_class = typing.get_origin(reader) or reader
    given_class = typing.get_origin(given) or given
    if not isinstance(reader_class, type) or not isinstance(given_class, type):
        return False
    if typing.get_args(reader) and typing.get_args(reader) != typing.get_args(given):
        return False
    try:
        return issubclass(given_class, reader_class)
    except TypeError:  # a protocol with data members: only a type checker can tell
        return True


def deps_instance_of(deps: object, deps_type: Any) -> bool:
    """Whether `deps` is a value of `deps_type`, as far as `isinstance` can tell (it cannot for
    a parameterised generic's arguments or a protocol with data members: those pass)."""
    if deps_type is None or deps_type in (Any, object):
        return True
    members = _union_members(deps_type)
    if len(members) > 1:
        return any(deps_instance_of(deps, member) for member in members)
    if deps_type is type(None):
        return deps is None
    checked = typing.get_origin(deps_type) or deps_type
    if not isinstance(checked, type):
        return True
    try:
        return isinstance(deps, checked)
    except TypeError:
        return True


def _union_members(deps_type: Any) -> tuple[Any, ...]:
    if typing.get_origin(deps_type) in (typing.Union, types.UnionType):
        return typing.get_args(deps_type)
    return (deps_type,)
