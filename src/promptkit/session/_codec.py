"""JSON encoding and decoding of slice values, driven by their type annotations.

A codec is built once per type from its annotations and then reused: encoding checks each value
against its annotation (so an unserialisable value is refused where it enters the session, not
when a file is written later) and decoding rebuilds exactly the annotated types: datetimes, enums,
tuples, nested dataclasses, frozen pydantic models. Fields annotated `Any` take JSON values only
(None, bool, int, float, str, lists and string-keyed objects); tuples inside them come back as
lists.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence, Set as AbstractSet
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path, PurePath
from typing import Any

from promptkit.errors import SessionError


@dataclass(frozen=True)
class Codec:
    """Encoder and decoder for one annotated type."""

    type_name: str
    encode_value: Callable[[Any], Any]
    decode_value: Callable[[Any], Any]

    def encode(self, value: Any) -> Any:
        """Return the JSON-ready form of `value`, or raise SessionError naming where it fails."""
        try:
            return self.encode_value(value)
        except _UnfitError as problem:
            raise SessionError(f"cannot serialise {problem.describe(self.type_name)}") from None

    def decode(self, data: Any) -> Any:
        """Rebuild a value from its JSON form, or raise SessionError naming where it fails."""
        try:
            return self.decode_value(data)
        except _UnfitError as problem:
            raise SessionError(f"cannot rebuild {problem.describe(self.type_name)}") from None


def codec_for(annotation: Any) -> Codec:
    """The codec for `annotation`; SessionError when a field type cannot be stored as JSON."""
    try:
        return _cached_codec(annotation)
    except _UnfitError as problem:
        name = type_name(annotation)
        raise SessionError(
            f"{name} cannot be persisted: {problem.describe(name)} "
            "(use JSON-ready field types: str, int, float, bool, None, datetime, date, enums, "
            "tuples, lists, Mapping[str, ...], nested frozen dataclasses or pydantic models)"
        ) from None


def type_name(annotation: Any) -> str:
    """A short readable name for a type or annotation, for messages."""
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


class _UnfitError(Exception):
    """Why a value or type does not fit, with the path to it collected while unwinding."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []

    def at(self, step: str) -> _UnfitError:
        self.path.append(step)
        return self

    def describe(self, root: str) -> str:
        return f"{root}{''.join(reversed(self.path))}: {self.reason}"


_Encoder = Callable[[Any], Any]
_Decoder = Callable[[Any], Any]


# Keyed by annotation; there are only as many entries as annotated types in the program.
@functools.lru_cache(maxsize=1024)
def _cached_codec(annotation: Any) -> Codec:
    encode, decode = _build(annotation, {})
    return Codec(type_name(annotation), encode, decode)


# The codec's decision table: one case per kind of annotation a slice field may have.
def _build(annotation: Any, building: dict[type, _Forward]) -> tuple[_Encoder, _Decoder]:  # noqa: C901
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any or annotation is object:
        return _encode_json, _decode_json
    if annotation is None or annotation is type(None):
        return _expect_none, _expect_none
    if origin is typing.Annotated:
        return _build(args[0], building)
    if origin is typing.Literal:
        return _literal(args)
    if origin is typing.Union or origin is types.UnionType:
        return _union(args, building)
    if origin is tuple or annotation is tuple:
        return _tuple(args, building)
    if origin is list or annotation is list:
        return _sequence(args, list, "a list", building)
    if origin is Sequence:
        return _sequence(args, tuple, "a sequence", building)
    if origin in (frozenset, set, AbstractSet) or annotation in (frozenset, set):
        return _sequence(args, frozenset, "a frozenset", building)
    if origin in (dict, Mapping) or annotation is dict:
        return _mapping(args, building)
    if not isinstance(annotation, type):
        raise _UnfitError(f"unsupported annotation {type_name(annotation)}")
    return _build_class(annotation, building)


# The codec's decision table: one case per kind of class a slice field may hold.
def _build_class(cls: type, building: dict[type, _Forward]) -> tuple[_Encoder, _Decoder]:  # noqa: C901
    if cls is bool:
        return _scalar(bool, "a bool", exclude_bool=False)
    if cls is int:
        return _scalar(int, "an int", exclude_bool=True)
    if cls is str:
        return _scalar(str, "a string", exclude_bool=False)
    if cls is float:
        return _encode_float, _decode_float
    if issubclass(cls, enum.Enum):
        return _enum(cls)
    if cls is datetime:
        return _iso(datetime, datetime.fromisoformat)
    if cls is date:
        return _iso(date, date.fromisoformat)
    if _is_uuid(cls):
        return _text(cls)
    if cls in (Path, PurePath):
        return _text(Path)
    if dataclasses.is_dataclass(cls):
        return _dataclass(cls, building)
    if _is_pydantic_model(cls):
        return _pydantic(cls)
    raise _UnfitError(f"{cls.__qualname__} is not a supported field type")


def _scalar(cls: type, label: str, *, exclude_bool: bool) -> tuple[_Encoder, _Decoder]:
    def check(value: Any) -> Any:
        if not isinstance(value, cls) or (exclude_bool and isinstance(value, bool)):
            raise _UnfitError(f"expected {label}, got {type(value).__qualname__}")
        return value

    return check, check


def _encode_float(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _UnfitError(f"expected a float, got {type(value).__qualname__}")
    if not math.isfinite(value):
        raise _UnfitError(f"{value!r} is not a JSON number")
    return float(value)


def _decode_float(data: Any) -> Any:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise _UnfitError(f"expected a number, got {type(data).__qualname__}")
    return float(data)


def _expect_none(value: Any) -> Any:
    if value is not None:
        raise _UnfitError(f"expected None, got {type(value).__qualname__}")
    return None


def _encode_json(value: Any) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _encode_float(value)
    if isinstance(value, list | tuple):
        return [_item(index, _encode_json, item) for index, item in enumerate(value)]
    if isinstance(value, Mapping):
        return _encode_object(value, _encode_json)
    raise _UnfitError(
        f"a value of type {type(value).__qualname__} is not JSON-ready (fields typed Any take "
        "None, bool, int, float, str, lists and string-keyed mappings)"
    )


def _encode_object(value: Mapping[Any, Any], encode_value: _Encoder) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise _UnfitError(f"mapping key {key!r} is not a string")
        encoded[key] = _item(key, encode_value, item)
    return encoded


def _item(where: int | str, convert: Callable[[Any], Any], item: Any) -> Any:
    """`convert(item)`; a failure is located at `[where]`, an index or a mapping key."""
    try:
        return convert(item)
    except _UnfitError as problem:
        raise problem.at(f"[{where!r}]") from None


def _decode_json(data: Any) -> Any:
    # json.loads already produced JSON values; there is nothing narrower to rebuild.
    return data


def _literal(choices: tuple[Any, ...]) -> tuple[_Encoder, _Decoder]:
    for choice in choices:
        if not isinstance(choice, str | int | bool) and choice is not None:
            raise _UnfitError(f"literal {choice!r} is not a JSON scalar")

    def check(value: Any) -> Any:
        if not any(value == c and type(value) is type(c) for c in choices):
            raise _UnfitError(f"{value!r} is not one of {list(choices)!r}")
        return value

    return check, check


def _union(arms: tuple[Any, ...], building: dict[type, _Forward]) -> tuple[_Encoder, _Decoder]:
    built = [_build(arm, building) for arm in arms]

    def encode(value: Any) -> Any:
        if value is None and type(None) in arms:
            return None
        reasons = []
        for arm_encode, _ in built:
            try:
                return arm_encode(value)
            except _UnfitError as problem:
                reasons.append(problem.reason)
        raise _UnfitError(f"matches no member of the union ({'; '.join(reasons)})")

    def decode(data: Any) -> Any:
        if data is None and type(None) in arms:
            return None
        reasons = []
        # Members are tried in declaration order; the first that accepts the data wins.
        for _, arm_decode in built:
            try:
                return arm_decode(data)
            except _UnfitError as problem:
                reasons.append(problem.reason)
        raise _UnfitError(f"matches no member of the union ({'; '.join(reasons)})")

    return encode, decode


def _tuple(args: tuple[Any, ...], building: dict[type, _Forward]) -> tuple[_Encoder, _Decoder]:
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        return _sequence(args[:1], tuple, "a tuple", building)
    items = [_build(arg, building) for arg in args]

    def encode(value: Any) -> Any:
        if not isinstance(value, tuple) or len(value) != len(items):
            raise _UnfitError(f"expected a tuple of {len(items)} items, got {_describe(value)}")
        return [
            _item(index, item_encode, item)
            for index, ((item_encode, _), item) in enumerate(zip(items, value, strict=True))
        ]

    def decode(data: Any) -> Any:
        if not isinstance(data, list) or len(data) != len(items):
            raise _UnfitError(f"expected an array of {len(items)} items, got {_describe(data)}")
        return tuple(
            _item(index, item_decode, item)
            for index, ((_, item_decode), item) in enumerate(zip(items, data, strict=True))
        )

    return encode, decode


def _sequence(
    args: tuple[Any, ...],
    container: Callable[[list[Any]], Any],
    label: str,
    building: dict[type, _Forward],
) -> tuple[_Encoder, _Decoder]:
    item_encode, item_decode = _build(args[0], building) if args else (_encode_json, _decode_json)
    accepted = (frozenset, set) if container is frozenset else (list, tuple)

    def encode(value: Any) -> Any:
        if not isinstance(value, accepted):
            raise _UnfitError(f"expected {label}, got {type(value).__qualname__}")
        return [_item(index, item_encode, item) for index, item in enumerate(value)]

    def decode(data: Any) -> Any:
        if not isinstance(data, list):
            raise _UnfitError(f"expected an array, got {_describe(data)}")
        return container([_item(index, item_decode, item) for index, item in enumerate(data)])

    return encode, decode


def _mapping(args: tuple[Any, ...], building: dict[type, _Forward]) -> tuple[_Encoder, _Decoder]:
    if args and args[0] is not str:
        raise _UnfitError(f"mapping keys must be str, not {type_name(args[0])}")
    value_encode, value_decode = _build(args[1], building) if args else (_encode_json, _decode_json)

    def encode(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise _UnfitError(f"expected a mapping, got {type(value).__qualname__}")
        return _encode_object(value, value_encode)

    def decode(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _UnfitError(f"expected an object, got {_describe(data)}")
        return {key: _item(key, value_decode, item) for key, item in data.items()}

    return encode, decode


def _enum(cls: type[enum.Enum]) -> tuple[_Encoder, _Decoder]:
    for member in cls:
        if not isinstance(member.value, str | int) or isinstance(member.value, bool):
            raise _UnfitError(
                f"{cls.__qualname__}.{member.name} has a value that is not str or int"
            )

    def encode(value: Any) -> Any:
        if not isinstance(value, cls):
            raise _UnfitError(f"expected {cls.__qualname__}, got {type(value).__qualname__}")
        return value.value

    def decode(data: Any) -> Any:
        try:
            return cls(data)
        except ValueError:
            raise _UnfitError(f"{data!r} is not a {cls.__qualname__} value") from None

    return encode, decode


def _iso(cls: type[date], parse: Callable[[str], Any]) -> tuple[_Encoder, _Decoder]:
    def encode(value: Any) -> Any:
        # datetime is a subclass of date; a date field must not silently hold a datetime.
        if not isinstance(value, cls) or (cls is date and isinstance(value, datetime)):
            raise _UnfitError(f"expected a {cls.__name__}, got {type(value).__qualname__}")
        return value.isoformat()

    def decode(data: Any) -> Any:
        if not isinstance(data, str):
            raise _UnfitError(f"expected an ISO 8601 string, got {_describe(data)}")
        try:
            return parse(data)
        except ValueError:
            raise _UnfitError(f"{data!r} is not an ISO 8601 {cls.__name__}") from None

    return encode, decode


def _text(cls: type) -> tuple[_Encoder, _Decoder]:
    def encode(value: Any) -> Any:
        if not isinstance(value, cls if cls is not Path else PurePath):
            raise _UnfitError(f"expected a {cls.__name__}, got {type(value).__qualname__}")
        return str(value)

    def decode(data: Any) -> Any:
        if not isinstance(data, str):
            raise _UnfitError(f"expected a string, got {_describe(data)}")
        try:
            return cls(data)
        except ValueError:
            raise _UnfitError(f"{data!r} is not a {cls.__name__}") from None

    return encode, decode


class _Forward:
    """Stands in for a dataclass codec while it is being built, so recursive types work."""

    def __init__(self) -> None:
        self.encode: _Encoder = _unbuilt
        self.decode: _Decoder = _unbuilt


def _unbuilt(value: Any) -> Any:
    raise _UnfitError("codec used before it was built")


# The encoder and decoder are closures over the fields: McCabe counts their paths here.
def _dataclass(cls: type, building: dict[type, _Forward]) -> tuple[_Encoder, _Decoder]:  # noqa: C901
    if cls in building:
        forward = building[cls]
        return (lambda value: forward.encode(value)), (lambda data: forward.decode(data))
    forward = building[cls] = _Forward()
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except (NameError, TypeError) as exc:
        raise _UnfitError(f"annotations of {cls.__qualname__} cannot be resolved ({exc})") from None
    fields: list[tuple[str, _Encoder, _Decoder]] = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        try:
            encode, decode = _build(hints[field.name], building)
        except _UnfitError as problem:
            raise problem.at(f".{field.name}") from None
        fields.append((field.name, encode, decode))
    names = frozenset(name for name, _, _ in fields)

    def encode_dataclass(value: Any) -> Any:
        if type(value) is not cls:
            raise _UnfitError(
                f"expected exactly {cls.__qualname__}, got {type(value).__qualname__}"
            )
        encoded = {}
        for name, field_encode, _ in fields:
            try:
                encoded[name] = field_encode(getattr(value, name))
            except _UnfitError as problem:
                raise problem.at(f".{name}") from None
        return encoded

    def decode_dataclass(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _UnfitError(f"expected an object, got {_describe(data)}")
        unknown = data.keys() - names
        if unknown:
            raise _UnfitError(f"unknown fields {sorted(unknown)} for {cls.__qualname__}")
        kwargs = {}
        for name, _, field_decode in fields:
            if name in data:
                try:
                    kwargs[name] = field_decode(data[name])
                except _UnfitError as problem:
                    raise problem.at(f".{name}") from None
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise _UnfitError(f"{cls.__qualname__}(...) refused the stored fields: {exc}") from None

    forward.encode, forward.decode = encode_dataclass, decode_dataclass
    del building[cls]
    return encode_dataclass, decode_dataclass


def _is_uuid(cls: type) -> bool:
    # uuid (and the platform module it imports) is only consulted when something already
    # imported it: no UUID field can exist otherwise.
    uuid = sys.modules.get("uuid")
    return uuid is not None and cls is uuid.UUID


def _is_pydantic_model(cls: type) -> bool:
    # pydantic is only consulted when something already imported it: no model can exist otherwise.
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and issubclass(cls, pydantic.BaseModel)


def is_frozen_pydantic_model(cls: type) -> bool:
    """Whether `cls` is a pydantic model class configured with `frozen=True`."""
    if not _is_pydantic_model(cls):
        return False
    config: Mapping[str, Any] = getattr(cls, "model_config", {})
    return bool(config.get("frozen", False))


def _pydantic(cls: type) -> tuple[_Encoder, _Decoder]:
    import pydantic
    import pydantic_core

    model = cls
    if not issubclass(model, pydantic.BaseModel):
        raise _UnfitError(f"{cls.__qualname__} is not a pydantic model")

    def encode(value: Any) -> Any:
        if type(value) is not model:
            raise _UnfitError(
                f"expected exactly {model.__qualname__}, got {type(value).__qualname__}"
            )
        try:
            dumped = value.model_dump(mode="json")
        except (pydantic_core.PydanticSerializationError, ValueError, TypeError) as exc:
            raise _UnfitError(f"pydantic could not serialise it: {exc}") from None
        # model_dump(mode="json") can still carry NaN or infinity, which JSON cannot hold.
        return _encode_json(dumped)

    def decode(data: Any) -> Any:
        try:
            return model.model_validate(data)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise _UnfitError(f"{where or 'value'}: {first['msg']}") from None

    return encode, decode


def _describe(data: Any) -> str:
    if isinstance(data, list | tuple):
        return f"{type(data).__qualname__} of {len(data)} items"
    return type(data).__qualname__
