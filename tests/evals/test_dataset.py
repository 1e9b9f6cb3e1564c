"""Datasets: JSONL and YAML files become cases checked against the prompt's params types; a bad
case is kept aside with its file and line, a file that is not a dataset is refused whole."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from promptkit.errors import DatasetError
from promptkit.evals import Case, Dataset, load_dataset

from .conftest import CAPITAL_PROMPT, Country

JSONL = (
    '{"id": "fr", "params": {"name": "France"}, "expected": "Paris", "tags": ["easy"]}\n'
    "\n"
    '{"id": "jp", "params": {"Country": {"name": "Japan", "continent": "Asia"}},'
    ' "input": "Answer in English.", "expected": "Tokyo"}\n'
)

YAML = """\
cases:
  - id: fr
    params: {name: France}
    expected: Paris
    tags: [easy]
  - id: jp
    params:
      Country: {name: Japan, continent: Asia}
    input: Answer in English.
    expected: Tokyo
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_dataset_loads_cases_with_typed_params(tmp_path):
    dataset = load_dataset(write(tmp_path, "capital.jsonl", JSONL), CAPITAL_PROMPT)

    assert [case.id for case in dataset.cases] == ["fr", "jp"]
    assert dataset.cases[0].params == (Country(name="France"),)
    assert dataset.cases[0].tags == ("easy",)
    assert dataset.cases[1].params == (Country(name="Japan", continent="Asia"),)
    assert dataset.cases[1].input == "Answer in English."
    assert dataset.cases[1].location == f"{tmp_path / 'capital.jsonl'} line 3"
    assert dataset.invalid == ()


def test_yaml_dataset_loads_the_same_cases_as_jsonl(tmp_path):
    from_yaml = load_dataset(write(tmp_path, "capital.yaml", YAML), CAPITAL_PROMPT)
    from_jsonl = load_dataset(write(tmp_path, "capital.jsonl", JSONL), CAPITAL_PROMPT)

    def strip(case: Case) -> tuple[object, ...]:
        return (case.id, case.params, case.input, case.expected, case.tags)

    assert [strip(c) for c in from_yaml.cases] == [strip(c) for c in from_jsonl.cases]
    assert from_yaml.cases[1].location == f"{tmp_path / 'capital.yaml'} line 6"


def test_case_with_invalid_params_is_reported_with_file_and_line(tmp_path):
    path = write(
        tmp_path,
        "capital.jsonl",
        '{"id": "ok", "params": {"name": "France"}}\n{"id": "bad", "params": {"name": 7}}\n',
    )

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert [case.id for case in dataset.cases] == ["ok"]
    (bad,) = dataset.invalid
    assert (bad.id, bad.location) == ("bad", f"{path} line 2")
    assert "params Country do not validate: name" in bad.error


def test_yaml_case_with_invalid_params_is_reported_with_its_line(tmp_path):
    path = write(
        tmp_path,
        "capital.yaml",
        "- id: ok\n  params: {name: France}\n- id: bad\n  params: {}\n  colour: red\n",
    )

    dataset = load_dataset(path, CAPITAL_PROMPT)

    (bad,) = dataset.invalid
    assert bad.location == f"{path} line 3"
    assert "unknown case field(s) 'colour'" in bad.error


def test_line_that_is_not_json_is_one_invalid_case_and_the_rest_load(tmp_path):
    path = write(tmp_path, "capital.jsonl", '{"params": {"name": "France"}}\n{"params": \n')

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert [case.id for case in dataset.cases] == ["line-1"]
    assert dataset.invalid[0].location == f"{path} line 2"
    assert "not a JSON object" in dataset.invalid[0].error


def test_params_naming_an_unknown_type_are_refused(tmp_path):
    path = write(tmp_path, "capital.jsonl", '{"params": {"City": {"name": "x"}, "Country": {}}}\n')

    (bad,) = load_dataset(path, CAPITAL_PROMPT).invalid

    assert bad.error == (
        "`params` keys must be params type names of the prompt (Country); found City"
    )


def test_yaml_that_does_not_parse_names_file_and_line(tmp_path):
    path = write(tmp_path, "capital.yaml", "- id: fr\n  params: {name: France\n- id: de\n")

    with pytest.raises(DatasetError, match=r"capital\.yaml line \d+: not valid YAML"):
        load_dataset(path, CAPITAL_PROMPT)


def test_yaml_that_is_not_a_list_of_cases_is_refused(tmp_path):
    path = write(tmp_path, "capital.yaml", "name: France\n")

    with pytest.raises(DatasetError, match="line 1: a YAML dataset is a list of cases"):
        load_dataset(path, CAPITAL_PROMPT)


def test_a_jsonl_line_that_is_not_utf8_is_one_invalid_case(tmp_path):
    path = tmp_path / "capital.jsonl"
    path.write_bytes(b'{"params": {"name": "France"}}\n{"params": {"name": "\xff"}}\n')

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert [case.id for case in dataset.cases] == ["line-1"]
    [bad] = dataset.invalid
    assert (bad.location, bad.error) == (f"{path} line 2", "the line is not UTF-8 text")


def test_a_yaml_dataset_that_is_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "capital.yaml"
    path.write_bytes(b"- params: {name: France}\n- params: {name: \xff}\n")

    with pytest.raises(DatasetError, match="line 2: the dataset is not UTF-8"):
        load_dataset(path, CAPITAL_PROMPT)


def test_unknown_dataset_suffix_is_refused(tmp_path):
    with pytest.raises(DatasetError, match=r"use \.jsonl, \.yaml or \.yml"):
        load_dataset(write(tmp_path, "capital.csv", "a,b\n"), CAPITAL_PROMPT)


def test_duplicate_case_ids_are_refused(tmp_path):
    with pytest.raises(DatasetError, match="two cases have the id 'fr'"):
        Dataset("capital", (Case("fr"), Case("fr")))


def test_dataset_hash_is_the_file_hash_and_changes_with_content(tmp_path):
    first = load_dataset(write(tmp_path, "a.jsonl", JSONL), CAPITAL_PROMPT)
    second = load_dataset(write(tmp_path, "b.jsonl", JSONL + "\n"), CAPITAL_PROMPT)

    assert len(first.content_hash) == 64
    assert first.content_hash != second.content_hash


@given(names=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5, unique=True))
def test_dataset_built_in_code_has_a_hash_of_its_cases(names):
    def build() -> Dataset:
        return Dataset("d", tuple(Case(name, (Country(name=name),)) for name in names))

    assert build().content_hash == build().content_hash
    assert build().content_hash != Dataset("d", ()).content_hash
