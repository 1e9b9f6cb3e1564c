"""JSON schemas shaped into what a provider's strict mode accepts, or sent as they are with the
reason they cannot be.

`shape_for_strict(schema, dialect)` closes every object (`additionalProperties: false`) and
rewrites what strict decoding refuses but can express another way, keeping the meaning for the
model in descriptions:

- a `$ref` with sibling keywords (a described nested model or enum field) is replaced by the
  definition it points to, with the siblings on top (OpenAI);
- a string `format`, numeric or length bound the dialect lacks moves into the description;
- `oneOf` becomes `anyOf`; a tuple's `prefixItems` becomes `items` of the union of its item
  schemas, its order said in the description; a lone `allOf` is merged (OpenAI).

Then `strict_schema_problems` (`promptkit.wire`) checks the result. When the
schema cannot go strict (an object meant to be open, optional properties where OpenAI needs
every one required, Anthropic's union and optional-parameter limits, recursion for Anthropic),
the caller gets the schema unchanged with `strict=False` and the reason, logged at debug. An
optional field is never silently turned into a required nullable one.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from promptkit.logging import get_logger
from promptkit.wire import StrictDialect, strict_schema_problems, walk_schema

_log = get_logger("promptkit.adapters")

# Bounds and hints that only narrow what a value may be: safe to say in words instead.
_DESCRIBABLE = (
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "default",
    "examples",
)


@dataclass(frozen=True)
class ShapedSchema:
    """A schema ready to send: strict (shaped) or not (unchanged), and why not."""

    schema: dict[str, Any]
    strict: bool
    reason: str | None = None


def shape_for_strict(schema: dict[str, Any], dialect: StrictDialect, *, name: str) -> ShapedSchema:
    """`schema` shaped for `dialect`'s strict mode, or unchanged with the reason it cannot be.

    `name` (a tool or output type) only labels the debug log.
    """
    closed = closed_schema(schema)
    if closed is None:
        reason = "an object in it is open (a mapping field or patternProperties), or the root is"
        reason += " not an object"
        return _not_strict(schema, dialect, name, reason)
    for _path, node in walk_schema(closed):
        _shape_node(closed, node, dialect)
    problems = strict_schema_problems(closed, dialect)
    if problems:
        return _not_strict(schema, dialect, name, problems[0])
    return ShapedSchema(closed, strict=True)


def closed_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of `schema` with every object closed, or None when an object is meant to be open.

    The root must be an object: both providers' strict modes require it.
    """
    if not _is_object(schema):
        return None
    closed = copy.deepcopy(schema)
    for _path, node in walk_schema(closed):
        if not _is_object(node):
            continue
        if "patternProperties" in node or "properties" not in node:
            return None
        if node.get("additionalProperties", False) is not False:
            return None
        node["additionalProperties"] = False
    return closed


def _not_strict(
    schema: dict[str, Any], dialect: StrictDialect, name: str, reason: str
) -> ShapedSchema:
    _log.debug("strict_schema_unavailable", provider=dialect.provider, schema=name, reason=reason)
    return ShapedSchema(schema, strict=False, reason=reason)


def _shape_node(root: dict[str, Any], node: dict[str, Any], dialect: StrictDialect) -> None:
    """Rewrite one node in place; its children are walked afterwards."""
    all_of = node.get("allOf")
    if "allOf" not in dialect.keywords and isinstance(all_of, list) and len(all_of) == 1:
        # `allOf: [X]` with siblings is how older generators attach a description to X.
        merged = {**all_of[0], **{key: value for key, value in node.items() if key != "allOf"}}
        node.clear()
        node.update(merged)
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1 and not dialect.ref_with_siblings:
        target = _resolve(root, ref)
        if target is not None:
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            node.clear()
            node.update({**copy.deepcopy(target), **siblings})
    if "oneOf" in node and "anyOf" not in node:
        node["anyOf"] = node.pop("oneOf")
        node.pop("discriminator", None)
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and "items" not in node:
        del node["prefixItems"]
        distinct: list[Any] = []
        for item in prefix:
            if item not in distinct:
                distinct.append(item)
        node["items"] = distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
        kinds = ", ".join(_describe_type(item) for item in prefix)
        _describe(node, f"exactly {len(prefix)} items, in this order: {kinds}")
    for key in _DESCRIBABLE:
        if key in node and not _is_allowed(key, node[key], dialect):
            _describe(node, f"{key}: {json.dumps(node.pop(key))}")


def _is_allowed(key: str, value: Any, dialect: StrictDialect) -> bool:
    if key not in dialect.keywords:
        return False
    if key == "format":
        return value in dialect.formats
    if key == "minItems" and dialect.min_items is not None:
        return value in dialect.min_items
    return True


def _describe(node: dict[str, Any], note: str) -> None:
    description = node.get("description")
    node["description"] = f"{description} ({note})" if description else f"({note})"


def _describe_type(schema: Any) -> str:
    if isinstance(schema, dict):
        kind = schema.get("type") or schema.get("title") or schema.get("$ref", "any").split("/")[-1]
        return str(kind)
    return "any"


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """The local definition `ref` (`#/$defs/Name`) points to, or None."""
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        node = (
            node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
        )
    return node if isinstance(node, dict) else None


def _is_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" or "properties" in node
