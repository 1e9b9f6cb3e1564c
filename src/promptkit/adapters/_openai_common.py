"""What OpenAI's two wire APIs (Responses, Chat Completions) share: tools and output formats as
JSON schemas shaped for OpenAI's strict mode, and token usage.

Schemas are shaped for strict mode where they can be (`shape_for_strict`: closed objects, `$ref`
siblings inlined, unsupported formats and bounds moved into descriptions) and sent non-strict
otherwise, so an optional field is never silently turned into a required nullable one. An output
type whose schema root is not an object (a list) cannot use the native format and relies on the
prompt's "Response Format" section, as does `structured_output="prompt"`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from promptkit.adapters._response import TokenUsage
from promptkit.adapters._schema import shape_for_strict
from promptkit.prompt import RenderedPrompt, Tool, output_schema, schema_for_model
from promptkit.wire import OPENAI_STRICT

_FORMAT_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class JsonSchemaFormat:
    """A schema as OpenAI's structured output takes it: a name, the schema, and `strict`."""

    name: str
    schema: dict[str, Any]
    strict: bool

    def to_json(self) -> dict[str, Any]:
        """The fields both APIs send, each inside its own envelope."""
        return {"name": self.name, "schema": self.schema, "strict": self.strict}


def output_format(output_type: Any) -> JsonSchemaFormat | None:
    """The native format for `output_type`, or None when the schema root is not an object."""
    schema = output_schema(output_type)
    if schema.get("type") != "object":
        return None
    name = _format_name(output_type)
    shaped = shape_for_strict(schema, OPENAI_STRICT, name=name)
    return JsonSchemaFormat(name, shaped.schema, strict=shaped.strict)


def native_output_format(
    rendered: RenderedPrompt[Any], native_output: bool
) -> JsonSchemaFormat | None:
    """The format to ask for natively: None in prompt mode, without an output type, or when
    the schema does not fit."""
    if not native_output or rendered.output_type is None:
        return None
    return output_format(rendered.output_type)


def function_definition(tool: Tool[Any]) -> dict[str, Any]:
    """A tool as both APIs define a function: name, description, parameters schema and whether
    the schema could be shaped for `strict`."""
    shaped = shape_for_strict(
        schema_for_model(tool.parameters_schema), OPENAI_STRICT, name=tool.name
    )
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": shaped.schema,
        "strict": shaped.strict,
    }


def _format_name(output_type: Any) -> str:
    name = getattr(output_type, "__name__", None) or "output"
    return _FORMAT_NAME_CHARS.sub("_", name)[:64] or "output"


def openai_usage(usage: Any, *, sent: str, received: str) -> TokenUsage:
    """An OpenAI `usage` object as `TokenUsage` (all None when the reply carried none). The two
    APIs report the same counts under `input`/`output` and `prompt`/`completion`."""
    if usage is None:
        return TokenUsage()
    cached = getattr(usage, f"{sent}_tokens_details", None)
    reasoning = getattr(usage, f"{received}_tokens_details", None)
    return TokenUsage(
        input_tokens=getattr(usage, f"{sent}_tokens"),
        output_tokens=getattr(usage, f"{received}_tokens"),
        cached_tokens=getattr(cached, "cached_tokens", None),
        cache_write_tokens=getattr(cached, "cache_write_tokens", None),
        reasoning_tokens=getattr(reasoning, "reasoning_tokens", None),
    )
