"""Params types: which classes may carry a section's params, what names they expose, and how
params objects are built from JSON (for `promptkit render --params` and the REPL's `ask`)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Hashable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from promptkit.errors import ArgumentValueError, PromptRenderError

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError


def is_params_type(candidate: object) -> bool:
    """Whether `candidate` is a class promptkit accepts as params: a pydantic model or dataclass."""
    return isinstance(candidate, type) and (
        is_pydantic_model(candidate) or dataclasses.is_dataclass(candidate)
    )


def is_pydantic_model(candidate: type[Any]) -> bool:
    """Whether the class `candidate` is a pydantic model.

    Without importing pydantic: a model class exists only once `pydantic.main` has been
    imported, so a program that has not imported it (one whose params are dataclasses) does not
    pay for the import by asking.
    """
    main = sys.modules.get("pydantic.main")
    return main is not None and issubclass(candidate, main.BaseModel)


def param_field(description: str, *, default: Any = dataclasses.MISSING, **constraints: Any) -> Any:
    """A field of a dataclass params type, with its description and the constraints
    `pydantic.Field` takes (`ge`, `le`, `min_length`, `max_length`, ...).

    pydantic reads them from the field's metadata when it first validates the params or builds
    their JSON schema, which comes out as a pydantic model's would; so declaring the class does
    not import pydantic, and a prompt whose tools are never called never does.
    """
    metadata = {"description": description, **constraints}
    return dataclasses.field(default=default, metadata=metadata)


def params_field_names(params_type: type[Any]) -> frozenset[str]:
    """Names a template may read from a params object: fields, computed fields and properties."""
    return _cached_field_names(cast(Hashable, params_type))


@lru_cache(maxsize=512)
def _cached_field_names(params_type: Any) -> frozenset[str]:
    names: set[str] = set()
    if is_pydantic_model(params_type):
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
    from pydantic import TypeAdapter

    return TypeAdapter(target)


def type_name(value: Any) -> str:
    """How messages name a type: its `__name__`, else its repr (a union, a generic)."""
    return getattr(value, "__name__", None) or repr(value)


def describe_validation_error(error: ValidationError, *, limit: int = 10) -> str:
    """A one-line summary of pydantic errors: `field.path: message; ...`."""
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or '<root>'}: {item['msg']}"
        for item in error.errors(include_url=False)[:limit]
    )


def read_params_argument(value: str) -> object:
    """The JSON document of a `--params` value: JSON text, or `@FILE` naming a JSON file."""
    source = ""
    text = value
    if value.startswith("@"):
        source = value[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or type(error).__name__
            raise ArgumentValueError(
                f"@{source}: cannot read the file ({reason}); pass JSON text or @FILE"
            ) from None
    try:
        document: object = json.loads(text)
    except json.JSONDecodeError as error:
        raise ArgumentValueError(
            f"{source + ': ' if source else ''}not valid JSON (line {error.lineno} column"
            f" {error.colno}: {error.msg})"
        ) from None
    return document


def params_from_json(
    params_types: Iterable[type[Any]], document: object, *, prompt_name: str
) -> tuple[Any, ...]:
    """Params objects built from `document`, validated against the prompt's params types.

    `document` is an object keyed by params type name (`{"Task": {"request": "..."}}`); for a
    prompt with a single params type it may also be that type's fields directly.
    """
    by_name = {params_type.__name__: params_type for params_type in params_types}
    accepted = ", ".join(sorted(by_name)) or "none"
    if not isinstance(document, dict):
        raise PromptRenderError(
            f"prompt {prompt_name}: params must be a JSON object keyed by params type name"
            f" (accepted: {accepted}), got {type(document).__name__}"
        )
    items: dict[str, Any] = document
    if len(by_name) == 1 and not (document and document.keys() <= by_name.keys()):
        items = {next(iter(by_name)): document}
    unknown = sorted(set(items) - set(by_name))
    if unknown:
        raise PromptRenderError(
            f"prompt {prompt_name}: no section takes params named {', '.join(unknown)}"
            f" (accepted: {accepted})"
        )
    from pydantic import ValidationError

    values = []
    for name, fields in items.items():
        try:
            values.append(type_adapter(by_name[name]).validate_python(fields))
        except ValidationError as error:
            raise PromptRenderError(
                f"prompt {prompt_name}: params {name}: {describe_validation_error(error)}"
            ) from None
    return tuple(values)
