"""JSON values checked against, and cut down to, the SDKs' own request types (TypedDicts).

The SDKs declare every request field as a TypedDict: which keys exist, which are required, and
for a union of item kinds, the `type` (or `role`) literal that tells them apart. Two uses:

- `declared_only(value, annotation)` keeps the keys the request type declares, so a reply
  replayed as conversation input never carries a field the request does not accept (a field a
  newer API version added to the response, or one only responses have);
- `request_type_problems(value, annotation)` lists unknown keys and missing required keys, which
  `FakeProviderServer` refuses as the real APIs do (`WireFormat.request_type` is the annotation).

Only structure is checked: keys and the item kinds of unions; scalar values are the SDK's and
the provider's business. Both run once per reply item and per request, so an annotation is read
once into a `_Shape` (its declared keys, required keys, union members and discriminating
literals) and the walks over values only look those up.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import typing_extensions

_WRAPPERS = (
    typing_extensions.Annotated,
    typing_extensions.Required,
    typing_extensions.NotRequired,
    typing_extensions.ReadOnly,
)
_DISCRIMINATORS = ("type", "role")
_NOT_ELEMENTS = (Mapping, str, bytes)


def request_type_problems(value: Any, annotation: Any, path: str = "") -> list[str]:
    """Where `value` has a key `annotation` does not declare, or lacks a required one."""
    return _problems(value, _shape(annotation), path)


def declared_only(value: Any, annotation: Any) -> Any:
    """`value` with only the keys `annotation` declares, at every depth; a key that is not
    required and holds None is dropped too (the request would send `null` for "absent")."""
    return _declared_only(value, _shape(annotation))


@dataclass(frozen=True, eq=False)
class _TypedDict:
    """A TypedDict: its declared keys with their annotations, the required ones (sorted, as
    problems list them), and the literals its `type` and `role` keys admit."""

    hints: Mapping[str, Any]
    required: tuple[str, ...]
    discriminators: tuple[tuple[str, tuple[Any, ...]], ...]

    def admits(self, value: Mapping[str, Any]) -> bool:
        return all(
            key not in value or value[key] in allowed for key, allowed in self.discriminators
        )


@dataclass(frozen=True, eq=False)
class _Union:
    """A union, by the members that are checked: TypedDicts (for mappings) and lists."""

    typed: tuple[_TypedDict, ...]
    lists: tuple[_List, ...]
    takes_free_mapping: bool


@dataclass(frozen=True, eq=False)
class _List:
    """A list, tuple, sequence or iterable of `element`."""

    element: Any


_Shape = _TypedDict | _Union | _List | None
"""None: a scalar, a free-form mapping or anything else whose inside is not checked."""

# Keyed by the annotation's id, with the annotation kept so the id cannot be reused: hashing a
# union of two dozen item types costs more than the lookup it would serve. The SDKs declare a
# few hundred annotations; the bound only matters for callers that build their own.
_SHAPES: dict[int, tuple[Any, _Shape]] = {}
_MAX_SHAPES = 4096


def _shape(annotation: Any) -> _Shape:
    cached = _SHAPES.get(id(annotation))
    if cached is not None and cached[0] is annotation:
        return cached[1]
    shape = _read_shape(annotation)
    if len(_SHAPES) >= _MAX_SHAPES:
        _SHAPES.clear()
    _SHAPES[id(annotation)] = (annotation, shape)
    return shape


def _read_shape(annotation: Any) -> _Shape:
    shape = _unwrap(annotation)
    if _is_typed_dict(shape):
        return _typed_dict(shape)
    members = _union_members(shape)
    if members is not None:
        return _Union(
            typed=tuple(
                _typed_dict(_unwrap(member))
                for member in members
                if _is_typed_dict(_unwrap(member))
            ),
            lists=tuple(
                _List(_element_type(_unwrap(member)))
                for member in members
                if _element_type(_unwrap(member)) is not None
            ),
            takes_free_mapping=any(_is_free_mapping(_unwrap(member)) for member in members),
        )
    element = _element_type(shape)
    return None if element is None else _List(element)


def _typed_dict(shape: Any) -> _TypedDict:
    cached = _SHAPES.get(id(shape))
    if cached is not None and cached[0] is shape and isinstance(cached[1], _TypedDict):
        return cached[1]
    hints = typing_extensions.get_type_hints(shape, include_extras=True)
    discriminators = tuple(
        (key, allowed)
        for key in _DISCRIMINATORS
        if (allowed := _literal_values(hints.get(key))) is not None
    )
    typed = _TypedDict(hints, tuple(sorted(_required_keys(shape, hints))), discriminators)
    _SHAPES[id(shape)] = (shape, typed)
    return typed


# -- walks over values ------------------------------------------------------------------------


def _problems(value: Any, shape: _Shape, path: str) -> list[str]:
    if isinstance(shape, _TypedDict):
        return _typed_dict_problems(value, shape, path) if isinstance(value, Mapping) else []
    if isinstance(shape, _Union):
        return _union_problems(value, shape, path)
    if isinstance(shape, _List) and isinstance(value, list):
        element = _shape(shape.element)
        problems: list[str] = []
        for index, item in enumerate(value):
            problems += _problems(item, element, f"{path}[{index}]")
        return problems
    return []


def _declared_only(value: Any, shape: _Shape) -> Any:
    if isinstance(shape, _TypedDict):
        if not isinstance(value, Mapping):
            return value
        hints = shape.hints
        return {
            key: _declared_only(item, _shape(hints[key]))
            for key, item in value.items()
            if key in hints and (item is not None or key in shape.required)
        }
    if isinstance(shape, _Union):
        chosen = _best_member(value, shape)
        return value if chosen is None else _declared_only(value, chosen)
    if isinstance(shape, _List) and isinstance(value, list):
        element = _shape(shape.element)
        return [_declared_only(item, element) for item in value]
    return value


def _typed_dict_problems(value: Mapping[str, Any], shape: _TypedDict, path: str) -> list[str]:
    hints = shape.hints
    problems = [f"unknown parameter '{_join(path, key)}'" for key in value if key not in hints]
    problems += [
        f"missing required parameter '{_join(path, key)}'"
        for key in shape.required
        if key not in value
    ]
    for key, item in value.items():
        if key in hints:
            problems += _problems(item, _shape(hints[key]), _join(path, key))
    return problems


def _union_problems(value: Any, shape: _Union, path: str) -> list[str]:
    candidates = _candidates(value, shape)
    if not candidates or (isinstance(value, Mapping) and shape.takes_free_mapping):
        return []
    best: list[str] | None = None
    for member in candidates:
        problems = _problems(value, member, path)
        if not problems:
            return []
        if best is None or len(problems) < len(best):
            best = problems
    return best or []


def _best_member(value: Any, shape: _Union) -> _TypedDict | _List | None:
    """The member `value` fits with the fewest problems (the first of those), or None."""
    best: _TypedDict | _List | None = None
    fewest = 0
    for member in _candidates(value, shape):
        problems = len(_problems(value, member, ""))
        if problems == 0:
            return member
        if best is None or problems < fewest:
            best, fewest = member, problems
    # A union that also takes a free-form mapping keeps whole what no typed member fits.
    misfit = isinstance(value, Mapping) and best is not None
    return None if misfit and shape.takes_free_mapping else best


def _candidates(value: Any, shape: _Union) -> tuple[_TypedDict, ...] | tuple[_List, ...]:
    """The typed members a mapping or list value could be (scalars are not checked)."""
    if isinstance(value, Mapping):
        return tuple(member for member in shape.typed if member.admits(value)) or shape.typed
    if isinstance(value, list):
        return shape.lists
    return ()


# -- reading annotations ----------------------------------------------------------------------


def _is_free_mapping(shape: Any) -> bool:
    origin = typing_extensions.get_origin(shape) or shape
    return (
        shape is object
        or shape is Any
        or (isinstance(origin, type) and issubclass(origin, Mapping) and not _is_typed_dict(shape))
    )


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
        and not issubclass(origin, _NOT_ELEMENTS)
    ):
        args = typing_extensions.get_args(shape)
        return args[0] if args else None
    return None


def _is_typed_dict(shape: Any) -> bool:
    return isinstance(shape, type) and typing_extensions.is_typeddict(shape)


def _required_keys(shape: Any, hints: Mapping[str, Any]) -> frozenset[str]:
    # Read from the resolved hints: the SDK modules use `from __future__ import annotations`,
    # so `__required_keys__` was computed from strings and misses `Required[...]`.
    total = getattr(shape, "__total__", True)
    required = set()
    for key, hint in hints.items():
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
