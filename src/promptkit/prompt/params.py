"""Params types: which classes may carry a section's params, and what names they expose."""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from functools import lru_cache
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter, ValidationError


def is_params_type(candidate: object) -> bool:
    """Whether `candidate` is a class promptkit accepts as params: a pydantic model or dataclass."""
    return isinstance(candidate, type) and (
        issubclass(candidate, BaseModel) or dataclasses.is_dataclass(candidate)
    )


def params_field_names(params_type: type[Any]) -> frozenset[str]:
    """Names a template may read from a params object: fields, computed fields and properties."""
    return _cached_field_names(cast(Hashable, params_type))


@lru_cache(maxsize=512)
def _cached_field_names(params_type: Any) -> frozenset[str]:
    names: set[str] = set()
    if issubclass(params_type, BaseModel):
        names.update(params_type.model_fields)
        names.update(params_type.model_computed_fields)
    elif dataclasses.is_dataclass(params_type):
        names.update(f.name for f in dataclasses.fields(params_type))
    names.update(
        name
        for name, value in vars(params_type).items()
        if isinstance(value, property) and not name.startswith("_")
    )
    return frozenset(names)


def type_adapter(target: Any) -> TypeAdapter[Any]:
    """A cached pydantic TypeAdapter: building one costs far more than using it."""
    return _cached_type_adapter(cast(Hashable, target))


@lru_cache(maxsize=512)
def _cached_type_adapter(target: Any) -> TypeAdapter[Any]:
    return TypeAdapter(target)


def describe_validation_error(error: ValidationError, *, limit: int = 10) -> str:
    """A one-line summary of pydantic errors: `field.path: message; ...`."""
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or '<root>'}: {item['msg']}"
        for item in error.errors(include_url=False)[:limit]
    )
