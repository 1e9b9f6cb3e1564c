"""Structured output: which output types a prompt may declare, their schema, and parsing.

A model's reply is accepted as bare JSON or as exactly one fenced JSON block; anything else
raises `OutputParseError` carrying the raw text so callers can log or retry it.
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
    """The JSON schema a model's reply must match."""
    schema: dict[str, Any] = type_adapter(output_type).json_schema()
    return schema


def output_schema_text(output_type: Any) -> str:
    """The schema as indented JSON with sorted keys, byte-identical across processes."""
    return json.dumps(output_schema(output_type), indent=2, sort_keys=True, ensure_ascii=False)


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
