"""JSON schemas as providers' strict modes accept them, or a clear "no" when they cannot.

Strict structured output (OpenAI `strict: true`, Anthropic `output_config.format`) needs every
object closed with `additionalProperties: false`. `closed_schema` adds that to every object, and
refuses (returns None) when an object is open on purpose: a `dict[str, X]` field, an `Any`-typed
mapping, or `patternProperties`. OpenAI's strict mode also needs every property required and a
type on every value; `is_openai_strict_ready` checks that, so a model with optional fields is sent
non-strict rather than silently changed into one with required nullable fields. Anthropic's
strict mode supports fewer keywords; `uses_only_anthropic_keywords` checks them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

# Keywords whose value is one schema, a list of schemas, or a name -> schema map.
_ONE_SCHEMA = ("items", "not", "contains", "propertyNames", "if", "then", "else")
_SCHEMA_LIST = ("anyOf", "allOf", "oneOf", "prefixItems")
_SCHEMA_MAP = ("properties", "$defs", "definitions", "dependentSchemas")

# A value with one of these says what it is; OpenAI strict mode rejects a bare `{}`.
_TYPED_BY = ("type", "anyOf", "$ref", "enum", "const")

# Anthropic structured outputs: the keywords its constrained decoding accepts.
_ANTHROPIC_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "description",
        "title",
        "default",
        "format",
        "minItems",
    }
)
_ANTHROPIC_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def closed_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of `schema` with every object closed, or None when an object is meant to be open.

    The root must be an object: both providers' strict modes require it.
    """
    if not _is_object(schema):
        return None
    closed = copy.deepcopy(schema)
    for node in _subschemas(closed):
        if not _is_object(node):
            continue
        if "patternProperties" in node or "properties" not in node:
            return None
        if node.get("additionalProperties", False) is not False:
            return None
        node["additionalProperties"] = False
    return closed


def is_openai_strict_ready(schema: dict[str, Any]) -> bool:
    """Whether a closed schema also lists every property as required and types every value."""
    for node in _subschemas(schema):
        if _is_object(node) and set(node.get("required", ())) != set(node["properties"]):
            return False
        for value in node.get("properties", {}).values():
            if not isinstance(value, dict) or not any(key in value for key in _TYPED_BY):
                return False
    return True


def uses_only_anthropic_keywords(schema: dict[str, Any]) -> bool:
    """Whether every keyword of a closed schema is one Anthropic's strict decoding supports."""
    for node in _subschemas(schema):
        if not set(node) <= _ANTHROPIC_KEYWORDS:
            return False
        string_format = node.get("format")
        if string_format is not None and string_format not in _ANTHROPIC_STRING_FORMATS:
            return False
        if node.get("minItems", 0) not in (0, 1):
            return False
    return True


def _is_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" or "properties" in node


def _subschemas(root: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every schema node under `root`, root included; never a data value such as `default`."""
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        _collect(node, pending.append)


def _collect(node: dict[str, Any], add: Callable[[dict[str, Any]], None]) -> None:
    for key in _ONE_SCHEMA:
        value = node.get(key)
        if isinstance(value, dict):
            add(value)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        add(extra)
    for key in _SCHEMA_LIST:
        for value in node.get(key, ()):
            if isinstance(value, dict):
                add(value)
    for key in _SCHEMA_MAP:
        mapping = node.get(key)
        if isinstance(mapping, dict):
            for value in mapping.values():
                if isinstance(value, dict):
                    add(value)
