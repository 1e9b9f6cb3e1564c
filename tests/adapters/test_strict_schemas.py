"""Schemas shaped per provider, through the real SDK clients against FakeProviderServer (which
refuses what each provider's strict mode refuses): described nested models and enums, URLs and
tuples go strict and their replies parse; wide Anthropic schemas fall back to the prompt; tool
names are checked when the request is built.
"""

import logging
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from enum import Enum
from typing import Any

import pytest
import structlog
from pydantic import AnyUrl, BaseModel, Field

from promptkit import MarkdownSection, Prompt, PromptValidationError, Tool, ToolContext, ToolResult
from promptkit.adapters._messages import output_config
from promptkit.adapters._openai_common import output_format
from promptkit.adapters._schema import shape_for_strict
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall
from promptkit.wire import (
    ANTHROPIC_STRICT,
    OPENAI_STRICT,
    check_tool_names,
    strict_schema_problems,
)


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Author(BaseModel):
    name: str


class Release(BaseModel):
    author: Author = Field(description="Who wrote the release notes.")
    colour: Colour = Field(description="The release's colour.")
    homepage: AnyUrl
    version: tuple[int, int, str]


RELEASE_JSON = {
    "author": {"name": "Ada"},
    "colour": "blue",
    "homepage": "https://example.org/releases",
    "version": [1, 2, "rc1"],
}

Nullable = int | None


class Wide(BaseModel):
    """Seventeen nullable fields: one more union than Anthropic's strict decoding allows."""

    f01: Nullable
    f02: Nullable
    f03: Nullable
    f04: Nullable
    f05: Nullable
    f06: Nullable
    f07: Nullable
    f08: Nullable
    f09: Nullable
    f10: Nullable
    f11: Nullable
    f12: Nullable
    f13: Nullable
    f14: Nullable
    f15: Nullable
    f16: Nullable
    f17: Nullable


TASK = MarkdownSection(title="Task", key="task", template="Describe the release.")
RELEASE_PROMPT: Prompt[Release] = Prompt(
    ns="tests/strict", key="release", sections=(TASK,), output_type=Release
)
WIDE_PROMPT: Prompt[Wide] = Prompt(
    ns="tests/strict", key="wide", sections=(TASK,), output_type=Wide
)


@contextmanager
def debug_logs() -> Iterator[list[MutableMapping[str, Any]]]:
    """Every record, debug included, logged inside the block; the configuration is restored."""
    previous = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with structlog.testing.capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(**previous)


def publish(params: Release, context: ToolContext) -> ToolResult:
    return ToolResult(message=f"published {params.version[2]} by {params.author.name}")


RELEASE_TOOL_PROMPT: Prompt[None] = Prompt(
    ns="tests/strict",
    key="publish",
    sections=(
        MarkdownSection(
            title="Tools",
            key="tools",
            template="Publish it.",
            tools=(
                Tool(
                    name="publish",
                    description="Publish a release.",
                    params_type=Release,
                    handler=publish,
                ),
            ),
        ),
    ),
)


def test_described_nested_models_enums_urls_and_tuples_go_strict_and_parse(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.json(RELEASE_JSON))

    response = make_adapter().evaluate(RELEASE_PROMPT, session=Session())

    assert response.output == Release.model_validate(RELEASE_JSON)
    body = server.requests[0].body
    if wire.name == "responses":
        assert body["text"]["format"]["strict"] is True
    elif wire.name == "chat":
        assert body["response_format"]["json_schema"]["strict"] is True
    else:
        assert "output_config" in body


@pytest.mark.parametrize("wire", ["responses", "chat"], indirect=True)
def test_a_strict_tool_with_described_nested_models_runs_with_its_arguments(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("publish", RELEASE_JSON)), Reply.text("done"))

    response = make_adapter().evaluate(RELEASE_TOOL_PROMPT, session=Session())

    assert response.tool_calls[0].result.message == "published rc1 by Ada"
    tools = server.requests[0].body["tools"]
    definition = tools[0] if wire.name == "responses" else tools[0]["function"]
    assert definition["strict"] is True


def test_openai_shaping_inlines_a_described_ref_and_keeps_its_description() -> None:
    schema_format = output_format(Release)

    assert schema_format is not None and schema_format.strict
    author = schema_format.schema["properties"]["author"]
    assert "$ref" not in author
    assert author["description"] == "Who wrote the release notes."
    assert author["properties"] == {"name": {"type": "string"}}
    colour = schema_format.schema["properties"]["colour"]
    assert colour["enum"] == ["red", "blue"]


def test_openai_shaping_moves_an_unsupported_format_into_the_description() -> None:
    schema_format = output_format(Release)

    assert schema_format is not None
    homepage = schema_format.schema["properties"]["homepage"]
    assert "format" not in homepage
    assert '(format: "uri")' in homepage["description"]


def test_a_tuple_becomes_items_of_its_item_types_with_the_order_described() -> None:
    schema_format = output_format(Release)

    assert schema_format is not None
    version = schema_format.schema["properties"]["version"]
    assert "prefixItems" not in version
    assert version["items"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert "in this order: integer, integer, string" in version["description"]
    assert (version["minItems"], version["maxItems"]) == (3, 3)


def test_anthropic_keeps_uri_format_which_its_strict_mode_supports() -> None:
    config = output_config(Release)

    assert config is not None
    assert config["format"]["schema"]["properties"]["homepage"]["format"] == "uri"


@pytest.mark.parametrize("wire", ["messages"], indirect=True)
def test_an_anthropic_output_type_with_17_nullable_fields_still_works(
    wire, server: FakeProviderServer, make_adapter
) -> None:
    answer = {f"f{index:02d}": None for index in range(1, 18)}
    server.enqueue(Reply.json(answer))

    with debug_logs() as logs:
        response = make_adapter().evaluate(WIDE_PROMPT, session=Session())

    assert response.output == Wide.model_validate(answer)
    assert "output_config" not in server.requests[0].body
    [unavailable] = [entry for entry in logs if entry["event"] == "strict_schema_unavailable"]
    assert "17 parameters with union types" in unavailable["reason"]


def test_anthropic_refuses_more_than_24_optional_parameters() -> None:
    properties = {f"p{index}": {"type": "string"} for index in range(25)}
    schema = {"type": "object", "properties": properties, "required": []}

    shaped = shape_for_strict(schema, ANTHROPIC_STRICT, name="optional")

    assert not shaped.strict
    assert shaped.reason == "#: 25 optional parameters, more than the 24 strict mode allows"


def test_a_recursive_schema_is_not_anthropic_strict_but_is_openai_strict() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "required": ["children"],
            }
        },
    }

    assert not shape_for_strict(schema, ANTHROPIC_STRICT, name="tree").strict
    assert shape_for_strict(schema, OPENAI_STRICT, name="tree").strict


def test_shaped_schemas_pass_the_rules_the_fake_server_enforces() -> None:
    shaped = shape_for_strict(Release.model_json_schema(), OPENAI_STRICT, name="Release")

    assert strict_schema_problems(shaped.schema, OPENAI_STRICT) == ()


def test_a_tool_name_outside_the_provider_pattern_is_refused_when_the_request_is_built() -> None:
    with pytest.raises(PromptValidationError, match="does not match openai's pattern"):
        check_tool_names(("x" * 65,), OPENAI_STRICT)

    check_tool_names(("x" * 65,), ANTHROPIC_STRICT)
