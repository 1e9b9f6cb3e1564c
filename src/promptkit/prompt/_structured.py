"""Structured output: which output types a prompt may declare, their schema, and parsing.

A model's reply is accepted as bare JSON or as exactly one fenced JSON block; anything else
raises `OutputParseError` carrying the raw text so callers can log or retry it.

Schemas are shown to models as `schema_for_model` makes them: without the titles pydantic
derives from class and field names, which say nothing to a model and, for a private class
(`_SetupPlanParams`), leak a name written for developers. `example_instance` writes a value of
a schema with placeholders, for the Response Format section: a small model shown only a schema
tends to answer with the schema itself.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from typing import Any, TypeVar

from promptkit.errors import OutputParseError, PromptValidationError
from promptkit.prompt._params import (
    describe_validation_error,
    is_pydantic_model,
    type_adapter,
    type_name,
)

OutputT = TypeVar("OutputT")

_FENCED_BLOCK = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)


def require_output_type(output_type: object) -> None:
    """Raise unless `output_type` is a pydantic model, a dataclass, or a list of one."""
    item = output_type
    if typing.get_origin(output_type) is list:
        (item,) = typing.get_args(output_type) or (None,)
    if not (isinstance(item, type) and (is_pydantic_model(item) or dataclasses.is_dataclass(item))):
        raise PromptValidationError(
            f"unsupported output_type {output_type!r}: expected a pydantic model, a dataclass,"
            " or list[...] of one"
        )


def output_schema(output_type: Any) -> dict[str, Any]:
    """The JSON schema a model's reply must match, as a model is shown it (`schema_for_model`)."""
    return schema_for_model(type_adapter(output_type).json_schema())


def output_schema_text(output_type: Any) -> str:
    """The schema as indented JSON with sorted keys, byte-identical across processes."""
    return json.dumps(output_schema(output_type), indent=2, sort_keys=True, ensure_ascii=False)


def output_example_text(output_type: Any) -> str:
    """An example reply for `output_type` (`example_instance`), as indented JSON."""
    example = example_instance(output_schema(output_type))
    return json.dumps(example, indent=2, ensure_ascii=False)


# The keywords whose value is one schema, a list of schemas, or a mapping of names to schemas.
_ONE_SCHEMA = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def schema_for_model(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without its `title` keywords (a copy): the rest, descriptions included, is what
    the model needs. A property named `title` is kept."""
    cleaned: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword == "title" and isinstance(value, str):
            continue
        if keyword in _SCHEMA_MAPS and isinstance(value, dict):
            cleaned[keyword] = {
                name: schema_for_model(inner) if isinstance(inner, dict) else inner
                for name, inner in value.items()
            }
        elif keyword in _SCHEMA_LISTS and isinstance(value, list):
            cleaned[keyword] = [
                schema_for_model(inner) if isinstance(inner, dict) else inner for inner in value
            ]
        elif keyword in _ONE_SCHEMA and isinstance(value, dict):
            cleaned[keyword] = schema_for_model(value)
        else:
            cleaned[keyword] = value
    return cleaned


_EXAMPLE_DEPTH = 8


def example_instance(schema: dict[str, Any]) -> Any:
    """A value of `schema` with a placeholder for each leaf: `<name>` for text, the first of an
    enum, 0 for numbers, false for booleans, one item for arrays; references are followed."""
    definitions = schema.get("$defs") or schema.get("definitions") or {}
    return _example(schema, definitions, "value", 0)


def _example(schema: Any, definitions: dict[str, Any], name: str, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > _EXAMPLE_DEPTH:
        return f"<{name}>"
    reference = schema.get("$ref")
    if isinstance(reference, str):
        return _example(definitions.get(reference.rpartition("/")[2]), definitions, name, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for keyword in ("anyOf", "oneOf", "allOf"):
        options = [item for item in schema.get(keyword) or () if item.get("type") != "null"]
        if options:
            return _example(options[0], definitions, name, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {
            key: _example(value, definitions, key, depth + 1) for key, value in properties.items()
        }
    if kind == "array":
        return [_example(schema.get("items"), definitions, name, depth + 1)]
    return {"integer": 0, "number": 0, "boolean": False, "null": None}.get(str(kind), f"<{name}>")


def extract_json_text(text: str) -> str:
    """The JSON part of a reply: the whole text, or the one fenced block it contains."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        return stripped
    blocks = _FENCED_BLOCK.findall(stripped)
    if len(blocks) == 1:
        return str(blocks[0]).strip()
    if len(blocks) > 1:
        raise OutputParseError(
            f"expected bare JSON or one fenced JSON block, found {len(blocks)} fenced blocks",
            raw_text=text,
        )
    return stripped


def parse_structured_output(text: str, output_type: type[OutputT]) -> OutputT:
    """Parse and validate a model's reply into `output_type`.

    Raises `OutputParseError` (with `raw_text`) when the text is not JSON or does not match.
    """
    from pydantic import ValidationError

    candidate = extract_json_text(text)
    try:
        value: OutputT = type_adapter(output_type).validate_json(candidate)
    except ValidationError as error:
        raise OutputParseError(
            f"model output does not match {type_name(output_type)}:"
            f" {describe_validation_error(error)}",
            raw_text=text,
        ) from error
    return value
