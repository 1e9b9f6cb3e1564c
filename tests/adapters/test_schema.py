"""Which schemas go to the providers strict, non-strict, or not natively at all."""

from typing import Any

from hypothesis import given, strategies as st
from pydantic import BaseModel

from promptkit.adapters._messages import output_config
from promptkit.adapters._openai_common import output_format
from promptkit.adapters._schema import closed_schema, shape_for_strict
from promptkit.prompt import output_schema
from promptkit.wire import OPENAI_STRICT


class Inner(BaseModel):
    label: str


class Strictable(BaseModel):
    count: int
    inner: Inner
    items: list[Inner]


class WithOptional(BaseModel):
    count: int
    note: str = ""


class WithMapping(BaseModel):
    scores: dict[str, int]


class Bounded(BaseModel):
    count: int

    model_config = {"json_schema_extra": {"properties": {"count": {"minimum": 1}}}}


def test_closed_schema_closes_every_object_including_definitions() -> None:
    closed = closed_schema(output_schema(Strictable))

    assert closed is not None
    assert closed["additionalProperties"] is False
    assert closed["$defs"]["Inner"]["additionalProperties"] is False


def test_closed_schema_leaves_the_original_untouched() -> None:
    schema = output_schema(Strictable)

    closed_schema(schema)

    assert "additionalProperties" not in schema


def test_a_mapping_field_cannot_be_closed() -> None:
    assert closed_schema(output_schema(WithMapping)) is None


def test_a_list_root_cannot_be_closed() -> None:
    assert closed_schema(output_schema(list[Inner])) is None


def test_all_required_fields_go_to_openai_strict() -> None:
    schema_format = output_format(Strictable)

    assert schema_format is not None
    assert schema_format.strict
    assert schema_format.name == "Strictable"


def test_optional_fields_go_to_openai_non_strict_unchanged() -> None:
    schema_format = output_format(WithOptional)

    assert schema_format is not None
    assert not schema_format.strict
    assert schema_format.schema == output_schema(WithOptional)


def test_a_list_output_has_no_native_openai_format() -> None:
    assert output_format(list[Inner]) is None


def test_anthropic_native_format_accepts_optional_fields() -> None:
    config = output_config(WithOptional)

    assert config is not None
    assert config["format"]["schema"]["additionalProperties"] is False


def test_anthropic_says_an_unsupported_bound_in_the_description() -> None:
    config = output_config(Bounded)

    assert config is not None
    assert config["format"]["schema"]["properties"]["count"] == {"description": "(minimum: 1)"}


def test_anthropic_falls_back_to_the_prompt_for_an_open_object() -> None:
    assert output_config(WithMapping) is None


def test_a_value_without_a_type_is_not_openai_strict() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"anything": {"title": "Anything"}},
        "required": ["anything"],
    }
    shaped = shape_for_strict(schema, OPENAI_STRICT, name="anything")

    assert not shaped.strict
    assert shaped.reason is not None and "needs a type" in shaped.reason


@given(
    st.dictionaries(
        st.text(alphabet="abcdefgh", min_size=1, max_size=5),
        st.sampled_from([{"type": "integer"}, {"type": "string"}, {"type": "boolean"}]),
        max_size=6,
    ),
    st.data(),
)
def test_a_flat_object_is_strict_exactly_when_every_property_is_required(
    properties: dict[str, dict[str, str]], data: st.DataObject
) -> None:
    names = sorted(properties)
    required = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    schema = {"type": "object", "properties": properties, "required": required}

    shaped = shape_for_strict(schema, OPENAI_STRICT, name="flat")

    assert shaped.strict == (set(required) == set(properties))
