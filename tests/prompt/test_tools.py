"""Tools: names, JSON schema from the params type, contract hash, argument parsing, and the
rule that one prompt offers each tool name once.
"""

import re
from dataclasses import dataclass
from typing import ClassVar

import pytest
from hypothesis import given, strategies as st
from pydantic import BaseModel, ConfigDict, Field

from promptkit import (
    MarkdownSection,
    Prompt,
    PromptValidationError,
    TextSection,
    Tool,
    ToolContext,
    ToolResult,
)
from promptkit.errors import ToolValidationError
from promptkit.prompt import param_field

TOOL_NAME_RULE = re.compile(r"[a-z0-9_-]{1,64}")


class SearchParams(BaseModel):
    query: str = Field(description="Words to look for.")
    limit: int = 10


@dataclass(frozen=True)
class MoveParams:
    x: int
    y: int
    label: str = "here"


def search(params: SearchParams, context: ToolContext) -> ToolResult:
    return ToolResult(message=f"{params.query} x{params.limit} in {context.prompt_key}")


def move(params: MoveParams, context: ToolContext) -> ToolResult:
    return ToolResult(message="moved", value=(params.x, params.y))


def _search_tool(
    name: str = "search", description: str = "Search the notes."
) -> Tool[SearchParams]:
    return Tool(name=name, description=description, params_type=SearchParams, handler=search)


def _move_tool(name: str = "move") -> Tool[MoveParams]:
    return Tool(name=name, description="Move the cursor.", params_type=MoveParams, handler=move)


def test_schema_comes_from_pydantic_params() -> None:
    schema = _search_tool().parameters_schema

    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"query", "limit"}
    assert schema["properties"]["query"]["description"] == "Words to look for."
    assert schema["properties"]["limit"]["default"] == 10
    assert schema["required"] == ["query"]


def test_schema_comes_from_dataclass_params() -> None:
    schema = _move_tool().parameters_schema

    assert schema["type"] == "object"
    assert schema["properties"]["x"]["type"] == "integer"
    assert schema["properties"]["label"]["default"] == "here"
    assert sorted(schema["required"]) == ["x", "y"]


class Page(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File to read.")
    limit: int = Field(default=400, ge=1, le=2000, description="Most lines.")


@dataclass(frozen=True)
class PageFields:
    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}
    path: str = param_field("File to read.")
    limit: int = param_field("Most lines.", default=400, ge=1, le=2000)


def _page_tool(params_type: type[object]) -> Tool[object]:
    return Tool(
        name="page",
        description="Read a page.",
        params_type=params_type,
        handler=lambda params, context: ToolResult(message="ok"),
    )


def test_param_fields_give_a_dataclass_the_schema_and_contract_of_a_model_with_fields() -> None:
    model, fields = _page_tool(Page), _page_tool(PageFields)
    titled = {**fields.parameters_schema, "title": "Page"}

    assert titled == model.parameters_schema
    assert "description" not in fields.parameters_schema


def test_param_field_constraints_are_checked_when_arguments_are_parsed() -> None:
    with pytest.raises(ToolValidationError, match="limit"):
        _page_tool(PageFields).parse_arguments({"path": "a.py", "limit": 0})


def test_contract_hash_changes_when_the_description_changes() -> None:
    assert _search_tool().contract_hash != _search_tool(description="Search.").contract_hash


def test_contract_hash_changes_when_the_params_schema_changes() -> None:
    before = _search_tool()
    after = Tool(
        name="search", description=before.description, params_type=MoveParams, handler=move
    )

    assert before.contract_hash != after.contract_hash


def test_contract_hash_is_the_same_for_equal_tools() -> None:
    assert _search_tool().contract_hash == _search_tool().contract_hash
    assert re.fullmatch(r"[0-9a-f]{64}", _search_tool().contract_hash)


def test_param_descriptions_change_the_schema_and_the_contract_hash() -> None:
    plain = _move_tool()
    described = Tool(
        name="move",
        description="Move the cursor.",
        params_type=MoveParams,
        handler=move,
        param_descriptions={"x": "Column, from 0."},
    )

    assert described.parameters_schema["properties"]["x"]["description"] == "Column, from 0."
    assert "description" not in plain.parameters_schema["properties"]["x"]
    assert described.contract_hash != plain.contract_hash


def test_param_descriptions_for_unknown_parameters_are_refused() -> None:
    with pytest.raises(PromptValidationError, match="z"):
        Tool(
            name="move",
            description="Move.",
            params_type=MoveParams,
            handler=move,
            param_descriptions={"z": "No such parameter."},
        )


@pytest.mark.parametrize(
    "name", ["", "Search", "has space", "dot.name", "slash/name", "ü", "a" * 65, "name\n"]
)
def test_invalid_tool_names_are_refused_naming_the_name(name: str) -> None:
    with pytest.raises(PromptValidationError, match=re.escape(repr(name))):
        _search_tool(name=name)


@given(st.text(max_size=80).filter(lambda name: TOOL_NAME_RULE.fullmatch(name) is None))
def test_any_name_outside_the_tool_name_rule_is_refused(name: str) -> None:
    with pytest.raises(PromptValidationError):
        _search_tool(name=name)


@given(st.from_regex(TOOL_NAME_RULE, fullmatch=True))
def test_any_name_following_the_tool_name_rule_is_accepted(name: str) -> None:
    assert _search_tool(name=name).name == name


def test_params_type_that_is_neither_model_nor_dataclass_is_refused() -> None:
    with pytest.raises(PromptValidationError, match="'search'"):
        Tool(name="search", description="Search.", params_type=dict, handler=search)  # type: ignore[arg-type]


def test_empty_description_is_refused() -> None:
    with pytest.raises(PromptValidationError, match="'search'"):
        _search_tool(description="  ")


def test_duplicate_tool_names_in_one_prompt_are_refused_naming_both_sections() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Prompt(
            ns="tests",
            key="tools",
            sections=(
                TextSection(title="One", key="one", text="x", tools=(_search_tool(),)),
                TextSection(
                    title="Two",
                    key="two",
                    text="y",
                    children=(
                        TextSection(title="Deep", key="deep", text="z", tools=(_search_tool(),)),
                    ),
                ),
            ),
        )

    message = str(raised.value)
    assert "'search'" in message
    assert "one" in message
    assert "two/deep" in message


def test_rendered_prompt_offers_tools_in_section_order() -> None:
    first, second, third = _move_tool("first"), _search_tool("second"), _move_tool("third")
    prompt: Prompt[None] = Prompt(
        ns="tests",
        key="tools",
        sections=(
            TextSection(
                title="A",
                key="a",
                text="x",
                tools=(first,),
                children=(TextSection(title="B", key="b", text="y", tools=(second,)),),
            ),
            MarkdownSection(title="C", key="c", template="z", tools=(third,)),
        ),
    )

    rendered = prompt.render()

    assert rendered.tools == (first, second, third)
    assert rendered.tool("second") is second
    assert rendered.tool("missing") is None


def test_parse_arguments_accepts_a_json_string_or_a_mapping() -> None:
    tool = _move_tool()

    assert tool.parse_arguments('{"x": 1, "y": 2}') == MoveParams(x=1, y=2)
    assert tool.parse_arguments({"x": 3, "y": 4, "label": "there"}) == MoveParams(3, 4, "there")


def test_parse_arguments_with_a_wrong_type_raises_naming_the_field() -> None:
    with pytest.raises(ToolValidationError) as raised:
        _move_tool().parse_arguments('{"x": "left", "y": 2}')

    message = str(raised.value)
    assert "'move'" in message
    assert "x" in message


def test_parse_arguments_with_a_missing_field_raises_naming_the_field() -> None:
    with pytest.raises(ToolValidationError, match=r"query"):
        _search_tool().parse_arguments({"limit": 3})


def test_parse_arguments_with_malformed_json_raises_tool_validation_error() -> None:
    with pytest.raises(ToolValidationError, match="'search'"):
        _search_tool().parse_arguments('{"query": ')


def test_run_passes_params_and_context_to_the_handler() -> None:
    tool = _search_tool()
    context = ToolContext(prompt_ns="tests", prompt_key="tools", call_id="call-1")

    result = tool.run(tool.parse_arguments({"query": "digest", "limit": 2}), context)

    assert result == ToolResult(message="digest x2 in tools")


def test_encoded_arguments_parse_back_to_the_same_params() -> None:
    tool = _move_tool()
    params = MoveParams(x=5, y=-1, label="ü")

    assert tool.parse_arguments(tool.encode_arguments(params)) == params
