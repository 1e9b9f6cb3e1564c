"""What each provider's strict structured output accepts, as data, and one checker for it.

`OPENAI_STRICT` and `ANTHROPIC_STRICT` hold the documented rules (the JSON Schema keywords and
string formats strict decoding supports, whether every property must be required, size limits);
`strict_schema_problems` lists where a schema breaks them. The adapters use it to decide whether a
shaped schema can go strict, and `FakeProviderServer` uses it to refuse what the real APIs
refuse, so both read the rules from this one place. Tool names are
checked against `tool_name_pattern` of the same dialect when a request is built.

Sources: OpenAI's "Supported schemas" for Structured Outputs (subset of keywords, formats, every
property required, `$ref` without sibling keywords, 5000 properties and 1000 enum values at most);
Anthropic's "JSON Schema limitations" for structured outputs (keywords, formats including `uri`,
`minItems` 0 or 1, no recursion, at most 16 union-typed and 24 optional parameters).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from promptkit.errors import PromptValidationError

# Keywords whose value is one schema, a list of schemas, or a name -> schema map.
_ONE_SCHEMA = ("items", "not", "contains", "propertyNames", "if", "then", "else")
_SCHEMA_LIST = ("anyOf", "allOf", "oneOf", "prefixItems")
_SCHEMA_MAP = ("properties", "$defs", "definitions", "dependentSchemas")

# A value with one of these says what it is; OpenAI strict mode rejects a bare `{}`.
_TYPED_BY = ("type", "anyOf", "$ref", "enum", "const")

_COMMON_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
        "format",
        "minItems",
    }
)
_COMMON_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)


@dataclass(frozen=True)
class StrictDialect:
    """One provider's strict structured-output rules."""

    provider: str
    keywords: frozenset[str]
    formats: frozenset[str]
    tool_name_pattern: re.Pattern[str]
    every_property_required: bool
    ref_with_siblings: bool
    allows_recursion: bool
    min_items: frozenset[int] | None = None
    max_properties: int | None = None
    max_enum_values: int | None = None
    max_union_types: int | None = None
    max_optional: int | None = None


OPENAI_STRICT = StrictDialect(
    provider="openai",
    keywords=_COMMON_KEYWORDS
    | {"pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    | {"maxItems"},
    formats=_COMMON_FORMATS,
    tool_name_pattern=re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    every_property_required=True,
    ref_with_siblings=False,
    allows_recursion=True,
    max_properties=5000,
    max_enum_values=1000,
)

ANTHROPIC_STRICT = StrictDialect(
    provider="anthropic",
    keywords=_COMMON_KEYWORDS | {"allOf", "default"},
    formats=_COMMON_FORMATS | {"uri"},
    tool_name_pattern=re.compile(r"[a-zA-Z0-9_-]{1,128}"),
    every_property_required=False,
    ref_with_siblings=True,
    allows_recursion=False,
    min_items=frozenset({0, 1}),
    max_union_types=16,
    max_optional=24,
)


def strict_schema_problems(schema: Any, dialect: StrictDialect) -> tuple[str, ...]:
    """Where `schema` breaks `dialect`'s strict rules, as `path: what` lines (empty: none)."""
    if not isinstance(schema, dict):
        return (f"the schema is {type(schema).__name__}, not a JSON object",)
    problems: list[str] = []
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("#: the root must be an object schema (type 'object', no anyOf)")
    unions = optional = properties = enum_values = 0
    for path, node in walk_schema(schema):
        problems += _node_problems(path, node, dialect)
        if "anyOf" in node or isinstance(node.get("type"), list):
            unions += 1
        declared = node.get("properties")
        if isinstance(declared, dict):
            properties += len(declared)
            optional += len(set(declared) - set(node.get("required", ())))
        if isinstance(node.get("enum"), list):
            enum_values += len(node["enum"])
    for count, limit, what in (
        (unions, dialect.max_union_types, "parameters with union types (anyOf, nullable)"),
        (optional, dialect.max_optional, "optional parameters"),
        (properties, dialect.max_properties, "object properties"),
        (enum_values, dialect.max_enum_values, "enum values"),
    ):
        if limit is not None and count > limit:
            problems.append(f"#: {count} {what}, more than the {limit} strict mode allows")
    if not dialect.allows_recursion and _is_recursive(schema):
        problems.append("#: the schema is recursive, which strict mode does not support")
    return tuple(problems)


def check_tool_names(names: Iterator[str] | tuple[str, ...], dialect: StrictDialect) -> None:
    """Raise `PromptValidationError` for a tool name the provider would refuse."""
    for name in names:
        if dialect.tool_name_pattern.fullmatch(name) is None:
            raise PromptValidationError(
                f"tool name {name!r} does not match {dialect.provider}'s pattern"
                f" {dialect.tool_name_pattern.pattern}; rename the tool"
            )


def _node_problems(path: str, node: dict[str, Any], dialect: StrictDialect) -> list[str]:
    problems = [
        f"{path}: keyword {key!r} is not supported in strict mode"
        for key in node
        if key not in dialect.keywords
    ]
    if "$ref" in node and len(node) > 1 and not dialect.ref_with_siblings:
        problems.append(f"{path}: $ref cannot have sibling keywords ({', '.join(sorted(node))})")
    string_format = node.get("format")
    if string_format is not None and string_format not in dialect.formats:
        problems.append(f"{path}: format {string_format!r} is not supported in strict mode")
    if dialect.min_items is not None and node.get("minItems", 0) not in dialect.min_items:
        problems.append(f"{path}: minItems {node['minItems']!r} is not supported (only 0 or 1)")
    declared = node.get("properties")
    if node.get("type") == "object" or isinstance(declared, dict):
        if node.get("additionalProperties") is not False:
            problems.append(f"{path}: an object needs additionalProperties: false")
        names = set(declared) if isinstance(declared, dict) else set()
        missing = names - set(node.get("required", ()))
        if dialect.every_property_required and missing:
            problems.append(f"{path}: every property must be required ({sorted(missing)} not)")
        for name, value in (declared or {}).items():
            if dialect.every_property_required and not (
                isinstance(value, dict) and any(key in value for key in _TYPED_BY)
            ):
                problems.append(f"{path}/properties/{name}: a property needs a type")
    return problems


def walk_schema(root: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node under `root` with its JSON-pointer-like path, root first; never a data
    value such as `default` or `enum`. Nodes may be changed in place while walking: a node's
    children are read after it is yielded."""
    pending: list[tuple[str, dict[str, Any]]] = [("#", root)]
    while pending:
        path, node = pending.pop()
        yield path, node
        pending.extend(
            (child_path, child)
            for child_path, child in _children(path, node)
            if isinstance(child, dict)
        )


def _children(path: str, node: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each value under `node` where a schema may sit, with its path; the caller keeps dicts."""
    for key in (*_ONE_SCHEMA, "additionalProperties"):
        if key in node:
            yield f"{path}/{key}", node[key]
    for key in _SCHEMA_LIST:
        values = node.get(key)
        if isinstance(values, list):
            yield from ((f"{path}/{key}/{index}", value) for index, value in enumerate(values))
    for key in _SCHEMA_MAP:
        mapping = node.get(key)
        if isinstance(mapping, dict):
            yield from ((f"{path}/{key}/{name}", value) for name, value in mapping.items())


def _is_recursive(root: dict[str, Any]) -> bool:
    """Whether a local `$ref` chain leads back to a definition it started from."""
    edges: dict[str, set[str]] = {}
    for path, node in walk_schema(root):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            owner = _definition_of(path)
            edges.setdefault(owner, set()).add(ref)
    visiting: set[str] = set()
    done: set[str] = set()

    def cycles_from(node: str) -> bool:
        if node in visiting:
            return True
        if node in done:
            return False
        visiting.add(node)
        found = any(cycles_from(target) for target in edges.get(node, ()))
        visiting.discard(node)
        done.add(node)
        return found

    return any(cycles_from(start) for start in list(edges))


def _definition_of(path: str) -> str:
    """The `#/$defs/Name` a node at `path` belongs to, or `#` for the root's own tree."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[1] in ("$defs", "definitions"):
        return "/".join(parts[:3])
    return "#"
