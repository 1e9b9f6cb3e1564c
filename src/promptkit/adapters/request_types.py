"""JSON values checked against, and cut down to, the SDKs' own request types (TypedDicts).

The SDKs declare every request field as a TypedDict: which keys exist, which are required, and
for a union of item kinds, the `type` (or `role`) literal that tells them apart. Two uses:

- `declared_only(value, annotation)` keeps the keys the request type declares, so a reply
  replayed as conversation input never carries a field the request does not accept (a field a
  newer API version added to the response, or one only responses have);
- `request_type_problems(value, annotation)` lists unknown keys and missing required keys, which
  `FakeProviderServer` refuses as the real APIs do.

Only structure is checked: keys and the item kinds of unions; scalar values are the SDK's and
the provider's business.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import typing_extensions

_WRAPPERS = (
    typing_extensions.Annotated,
    typing_extensions.Required,
    typing_extensions.NotRequired,
    typing_extensions.ReadOnly,
)
_DISCRIMINATORS = ("type", "role")


def request_type_problems(value: Any, annotation: Any, path: str = "") -> list[str]:
    """Where `value` has a key `annotation` does not declare, or lacks a required one."""
    shape = _unwrap(annotation)
    if _is_typed_dict(shape):
        return _typed_dict_problems(value, shape, path) if isinstance(value, Mapping) else []
    members = _union_members(shape)
    if members is not None:
        return _union_problems(value, members, path)
    element = _element_type(shape)
    if element is not None and isinstance(value, list):
        problems: list[str] = []
        for index, item in enumerate(value):
            problems += request_type_problems(item, element, f"{path}[{index}]")
        return problems
    return []


def declared_only(value: Any, annotation: Any) -> Any:
    """`value` with only the keys `annotation` declares, at every depth; a key that is not
    required and holds None is dropped too (the request would send `null` for "absent")."""
    shape = _unwrap(annotation)
    if _is_typed_dict(shape) and isinstance(value, Mapping):
        hints = _hints(shape)
        required = _required_keys(shape)
        return {
            key: declared_only(item, hints[key])
            for key, item in value.items()
            if key in hints and (item is not None or key in required)
        }
    members = _union_members(shape)
    if members is not None:
        chosen = _best_member(value, members)
        return value if chosen is None else declared_only(value, chosen)
    element = _element_type(shape)
    if element is not None and isinstance(value, list):
        return [declared_only(item, element) for item in value]
    return value


def _typed_dict_problems(value: Mapping[str, Any], shape: Any, path: str) -> list[str]:
    hints = _hints(shape)
    problems = [f"unknown parameter '{_join(path, key)}'" for key in value if key not in hints]
    problems += [
        f"missing required parameter '{_join(path, key)}'"
        for key in sorted(_required_keys(shape))
        if key not in value
    ]
    for key, item in value.items():
        if key in hints:
            problems += request_type_problems(item, hints[key], _join(path, key))
    return problems


def _union_problems(value: Any, members: tuple[Any, ...], path: str) -> list[str]:
    candidates = _candidates(value, members)
    if candidates is None or (isinstance(value, Mapping) and _has_free_mapping(members)):
        return []
    best: list[str] | None = None
    for member in candidates:
        problems = request_type_problems(value, member, path)
        if not problems:
            return []
        if best is None or len(problems) < len(best):
            best = problems
    return best or []


def _best_member(value: Any, members: tuple[Any, ...]) -> Any:
    candidates = _candidates(value, members)
    if candidates is None:
        return None
    best = min(candidates, key=lambda member: len(request_type_problems(value, member)))
    # A union that also takes a free-form mapping keeps whole what no typed member fits.
    misfit = isinstance(value, Mapping) and bool(request_type_problems(value, best))
    return None if misfit and _has_free_mapping(members) else best


def _candidates(value: Any, members: tuple[Any, ...]) -> list[Any] | None:
    """The typed members a mapping or list value could be, or None (scalars are not checked)."""
    if isinstance(value, Mapping):
        typed = [member for member in members if _is_typed_dict(_unwrap(member))]
        return (_discriminated(value, typed) or typed) or None
    if isinstance(value, list):
        lists = [member for member in members if _element_type(_unwrap(member)) is not None]
        return lists or None
    return None


def _has_free_mapping(members: tuple[Any, ...]) -> bool:
    return any(_is_free_mapping(_unwrap(member)) for member in members)


def _is_free_mapping(shape: Any) -> bool:
    origin = typing_extensions.get_origin(shape) or shape
    return (
        shape is object
        or shape is Any
        or (isinstance(origin, type) and issubclass(origin, Mapping) and not _is_typed_dict(shape))
    )


def _discriminated(value: Mapping[str, Any], members: list[Any]) -> list[Any]:
    """The members whose `type` and `role` literals admit the value's."""
    kept = []
    for member in members:
        hints = _hints(_unwrap(member))
        fits = True
        for key in _DISCRIMINATORS:
            allowed = _literal_values(hints.get(key))
            if allowed is not None and key in value and value[key] not in allowed:
                fits = False
        if fits:
            kept.append(member)
    return kept


def _literal_values(annotation: Any) -> tuple[Any, ...] | None:
    if annotation is None:
        return None
    shape = _unwrap(annotation)
    if typing_extensions.get_origin(shape) is typing_extensions.Literal:
        return typing_extensions.get_args(shape)
    return None


def _unwrap(annotation: Any) -> Any:
    while typing_extensions.get_origin(annotation) in _WRAPPERS:
        annotation = typing_extensions.get_args(annotation)[0]
    return annotation


def _union_members(shape: Any) -> tuple[Any, ...] | None:
    origin = typing_extensions.get_origin(shape)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return tuple(
            member for member in typing_extensions.get_args(shape) if member is not type(None)
        )
    return None


def _element_type(shape: Any) -> Any:
    origin = typing_extensions.get_origin(shape)
    if (
        isinstance(origin, type)
        and issubclass(origin, Iterable)
        and not issubclass(origin, Mapping | str | bytes)
    ):
        args = typing_extensions.get_args(shape)
        return args[0] if args else None
    return None


def _is_typed_dict(shape: Any) -> bool:
    return isinstance(shape, type) and typing_extensions.is_typeddict(shape)


@functools.cache
def _hints(shape: Any) -> dict[str, Any]:
    return typing_extensions.get_type_hints(shape, include_extras=True)


@functools.cache
def _required_keys(shape: Any) -> frozenset[str]:
    # Read from the resolved hints: the SDK modules use `from __future__ import annotations`,
    # so `__required_keys__` was computed from strings and misses `Required[...]`.
    total = getattr(shape, "__total__", True)
    required = set()
    for key, hint in _hints(shape).items():
        wrappers = set()
        while typing_extensions.get_origin(hint) in _WRAPPERS:
            wrappers.add(typing_extensions.get_origin(hint))
            hint = typing_extensions.get_args(hint)[0]
        if typing_extensions.Required in wrappers or (
            total and typing_extensions.NotRequired not in wrappers
        ):
            required.add(key)
    return frozenset(required)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
