"""Structured output: the Response Format section and `parse_structured_output`.

A reply is accepted as bare JSON or exactly one fenced JSON block; anything else raises
`OutputParseError` carrying the reply exactly as received.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from promptkit import OutputParseError, Prompt, PromptValidationError, TextSection
from promptkit.prompt import output_schema, parse_structured_output


class Verdict(BaseModel):
    approved: bool
    reasons: list[str]


@dataclass(frozen=True)
class Point:
    x: int
    y: int


def _prompt(output_type: Any) -> Prompt[Any]:
    return Prompt(
        ns="tests",
        key="structured",
        sections=(TextSection(title="Task", key="task", text="Judge it."),),
        output_type=output_type,
    )


def test_bare_json_parses_into_the_output_type() -> None:
    reply = '  {"approved": true, "reasons": ["tests pass"]}\n'

    assert parse_structured_output(reply, Verdict) == Verdict(approved=True, reasons=["tests pass"])


def test_one_fenced_json_block_among_prose_parses() -> None:
    reply = 'Here is my verdict:\n\n```json\n{"approved": false, "reasons": []}\n```\nThanks!'

    assert parse_structured_output(reply, Verdict) == Verdict(approved=False, reasons=[])


def test_fenced_block_without_a_language_parses() -> None:
    reply = '```\n{"x": 1, "y": 2}\n```'

    assert parse_structured_output(reply, Point) == Point(x=1, y=2)


def test_list_output_type_parses_a_json_array() -> None:
    reply = '[{"x": 1, "y": 2}, {"x": 3, "y": 4}]'

    assert parse_structured_output(reply, list[Point]) == [Point(1, 2), Point(3, 4)]


def test_non_json_reply_raises_output_parse_error_carrying_the_raw_text() -> None:
    reply = "I approve, the tests pass."

    with pytest.raises(OutputParseError) as raised:
        parse_structured_output(reply, Verdict)

    assert raised.value.raw_text == reply


def test_schema_mismatch_raises_output_parse_error_naming_the_field() -> None:
    reply = '{"approved": "maybe", "reasons": "none"}'

    with pytest.raises(OutputParseError) as raised:
        parse_structured_output(reply, Verdict)

    assert raised.value.raw_text == reply
    assert "approved" in str(raised.value)
    assert "reasons" in str(raised.value)
    assert "Verdict" in str(raised.value)


def test_two_fenced_blocks_raise_output_parse_error_carrying_the_raw_text() -> None:
    reply = (
        '```json\n{"approved": true, "reasons": []}\n```\n'
        "or maybe\n"
        '```json\n{"approved": false, "reasons": []}\n```'
    )

    with pytest.raises(OutputParseError) as raised:
        parse_structured_output(reply, Verdict)

    assert raised.value.raw_text == reply
    assert "2" in str(raised.value)


def test_list_output_type_refuses_a_single_object() -> None:
    reply = '{"x": 1, "y": 2}'

    with pytest.raises(OutputParseError) as raised:
        parse_structured_output(reply, list[Point])

    assert raised.value.raw_text == reply


def _fenced_json(text: str) -> list[Any]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", text, re.S)]


def test_output_type_adds_a_final_response_format_section_with_an_example_and_the_schema() -> None:
    text = _prompt(Verdict).render().text

    heading = "## 2. Response Format\n\n"
    assert heading in text
    example, schema = _fenced_json(text.split(heading, 1)[1])
    assert text.endswith("```")
    assert schema == output_schema(Verdict)
    assert set(example) == set(schema["properties"])


def test_response_format_schema_describes_list_output_types() -> None:
    text = _prompt(list[Point]).render().text

    example, schema = _fenced_json(text)
    assert schema["type"] == "array"
    assert schema == output_schema(list[Point])
    assert example == [{"x": 0, "y": 0}]


def test_the_schema_a_model_is_shown_has_no_titles_from_class_names() -> None:
    schema = output_schema(Verdict)

    assert "title" not in json.dumps(schema)


def test_prompt_without_output_type_has_no_response_format_section() -> None:
    assert "Response Format" not in _prompt(None).render().text


def test_rendered_prompt_carries_the_output_type() -> None:
    assert _prompt(Verdict).render().output_type is Verdict


@pytest.mark.parametrize("output_type", [int, str, dict, dict[str, int], list[int], "Verdict"])
def test_unsupported_output_type_is_refused_when_the_prompt_is_built(output_type: Any) -> None:
    with pytest.raises(PromptValidationError, match="output_type"):
        _prompt(output_type)


def test_response_format_key_is_reserved_when_an_output_type_is_set() -> None:
    with pytest.raises(PromptValidationError, match="response-format"):
        Prompt(
            ns="tests",
            key="structured",
            sections=(TextSection(title="Mine", key="response-format", text="x"),),
            output_type=Verdict,
        )
