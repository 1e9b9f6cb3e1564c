"""The registry of persisted slice types: a stable name for each type whose values are stored.

Snapshots and session logs refer to slice types by these names, never by import path, so a type
can move between modules without breaking stored sessions. Registering a type also proves, once,
that its annotations can be stored as JSON; its values are then checked as they enter a session.
Slice types that are not registered live in memory only (see `docs/sessions.md`); an attached
SessionStore warns about them once, unless `register_in_memory_slice_type` declared the type
in-memory by intent.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from typing import Any

from promptkit._names import require_key
from promptkit.errors import SessionError
from promptkit.logging import get_logger
from promptkit.session._codec import codec_for, is_frozen_pydantic_model

_log = get_logger("promptkit.session")

_lock = threading.Lock()
# The registry is process-wide on purpose: a stored name must mean the same type everywhere.
_types_by_name: dict[str, type[Any]] = {}
_names_by_type: dict[type[Any], str] = {}
# Weak, so a class that is defined again (a reloaded module) does not keep the old one alive.
_in_memory_types: weakref.WeakSet[type[Any]] = weakref.WeakSet()


def register_slice_type(name: str, slice_type: type[Any]) -> None:
    """Persist values of `slice_type` under the stable `name` (the key rule applies).

    `slice_type` must be a frozen dataclass or a frozen pydantic model whose fields can be stored
    as JSON. Registering the same pair again is a no-op; a name or type already registered with
    a different partner is refused. A class that re-defines the registered one (same module and
    qualified name, as when a module or notebook cell runs again) takes its place.
    """
    require_key(name, what="slice type name", error=SessionError)
    if not _is_frozen_value_type(slice_type):
        raise SessionError(
            f"cannot register slice type {name!r}: {_qualified(slice_type)} is not a frozen "
            "dataclass or a frozen pydantic model (declare it with @dataclass(frozen=True) or "
            "model_config = ConfigDict(frozen=True))"
        )
    codec_for(slice_type)
    with _lock:
        existing = _types_by_name.get(name)
        if existing is slice_type:
            return
        if existing is not None and not _redefines(slice_type, existing):
            raise SessionError(
                f"slice type name {name!r} is already registered for {_qualified(existing)}; "
                f"choose another name for {_qualified(slice_type)}"
            )
        if slice_type in _in_memory_types:
            raise SessionError(
                f"{_qualified(slice_type)} was declared in-memory with"
                f" register_in_memory_slice_type, so {name!r} was not added; a type is either"
                " persisted or in-memory: drop one of the two calls"
            )
        other_name = _names_by_type.get(slice_type)
        if other_name is not None:
            raise SessionError(
                f"{_qualified(slice_type)} is already registered as {other_name!r}; "
                f"a type has one stable name, so {name!r} was not added"
            )
        if existing is not None:
            del _names_by_type[existing]
            _log.debug("slice_type_redefined", name=name, type=_qualified(slice_type))
        _types_by_name[name] = slice_type
        _names_by_type[slice_type] = name


def register_in_memory_slice_type(slice_type: type[Any]) -> None:
    """Declare that values of `slice_type` live in memory only, on purpose.

    Such a slice behaves like any unregistered one (snapshots, rollback and clone keep it in the
    process; `to_json` and a SessionStore leave it out), but an attached store does not warn
    about it: the declaration says that not persisting it is intended. Declaring a type again
    is a no-op; a type registered for persistence with `register_slice_type` is refused.
    """
    if not isinstance(slice_type, type):
        raise SessionError(
            f"register_in_memory_slice_type needs a class, got {_qualified(slice_type)}"
        )
    with _lock:
        name = _names_by_type.get(slice_type)
        if name is not None:
            raise SessionError(
                f"{_qualified(slice_type)} is registered as {name!r} and so is persisted; a type"
                " is either persisted or in-memory: drop one of the two calls"
            )
        _in_memory_types.add(slice_type)


def is_in_memory_by_intent(slice_type: type[Any]) -> bool:
    """True when `register_in_memory_slice_type` declared `slice_type` in-memory."""
    return slice_type in _in_memory_types


def slice_name(slice_type: type[Any]) -> str | None:
    """The registered name of `slice_type`, or None when its values live in memory only."""
    return _names_by_type.get(slice_type)


def slice_type_named(name: str) -> type[Any]:
    """The type registered under `name`; SessionError telling how to register it otherwise."""
    try:
        return _types_by_name[name]
    except KeyError:
        raise SessionError(
            f"unknown slice type name {name!r}: import the module that calls "
            f"register_slice_type({name!r}, ...) before loading"
        ) from None


def _is_frozen_value_type(candidate: object) -> bool:
    if not isinstance(candidate, type):
        return False
    if dataclasses.is_dataclass(candidate):
        params = getattr(candidate, "__dataclass_params__", None)
        return bool(getattr(params, "frozen", False))
    return is_frozen_pydantic_model(candidate)


def _redefines(new: type[Any], old: type[Any]) -> bool:
    return (new.__module__, new.__qualname__) == (old.__module__, old.__qualname__)


def _qualified(candidate: object) -> str:
    if isinstance(candidate, type):
        return f"{candidate.__module__}.{candidate.__qualname__}"
    return repr(candidate)
