"""Evaluation is bounded: a blocking evaluator is abandoned at the case's deadline, special
files are refused unread, a YAML alias is refused, a JSONL line is split on `\\n` only, and a
line too deep or too long is one invalid case while the rest of the dataset loads."""

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptkit.errors import ArgumentValueError, DatasetError
from promptkit.evals import (
    Case,
    Dataset,
    ExactMatch,
    FunctionEvaluator,
    load_dataset,
    run_evaluation,
)
from promptkit.testing import FakeProviderServer, reply_script_from

from .conftest import CAPITAL_PROMPT, Country, openai_adapter

CASES = Dataset(
    "capital",
    (
        Case("fr", (Country("France"),), expected="Paris"),
        Case("jp", (Country("Japan", "Asia"),), expected="Tokyo"),
    ),
)
MAX_CASE_LINE_BYTES = 16 * 1024 * 1024  # the documented size of a JSONL case line
FRANCE = '{"id": "fr", "params": {"name": "France"}, "expected": "Paris"}\n'


@pytest.fixture
def released() -> Iterator[threading.Event]:
    """An event a blocking evaluator waits on, set when the test ends so its thread ends too."""
    event = threading.Event()
    yield event
    event.set()


def test_a_blocking_evaluator_is_abandoned_with_a_typed_error_and_the_run_goes_on(
    server: FakeProviderServer, released: threading.Event
):
    server.respond_with(
        reply_script_from(
            {"rules": [{"when": "France", "text": "Paris"}], "default": {"text": "Tokyo"}}
        ).reply_to
    )

    def blocks_on_france(case: Case, response: Any) -> float:
        if case.id == "fr":
            released.wait()
        return 1.0

    report = run_evaluation(
        CAPITAL_PROMPT,
        CASES,
        openai_adapter(server),
        [FunctionEvaluator(blocks_on_france, "blocking"), ExactMatch()],
        deadline=1.0,
        concurrency=1,
    )

    france, japan = report.results
    blocking, exact = france.evaluations
    assert blocking.error is not None
    assert blocking.error.startswith("CallAbandonedError: evaluator 'blocking'")
    assert "did not finish within" in blocking.error
    assert exact.score == 1.0
    assert [evaluation.score for evaluation in japan.evaluations] == [1.0, 1.0]
    assert not report.interrupted


@pytest.mark.parametrize("deadline", [float("nan"), -1.0, 0.0, float("inf")])
def test_a_deadline_that_is_not_a_positive_finite_time_is_refused(
    server: FakeProviderServer, deadline: float
):
    with pytest.raises(ArgumentValueError, match="deadline must be a positive, finite number"):
        run_evaluation(
            CAPITAL_PROMPT, CASES, openai_adapter(server), [ExactMatch()], deadline=deadline
        )


def test_a_run_without_a_deadline_has_the_default_one(server: FakeProviderServer):
    server.respond_with(reply_script_from({"default": {"text": "Paris"}}).reply_to)

    report = run_evaluation(CAPITAL_PROMPT, CASES, openai_adapter(server), [ExactMatch()])

    assert report.settings["deadline_s"] == 300.0


def test_a_fifo_dataset_is_refused_without_waiting_for_a_writer(tmp_path: Path):
    fifo = tmp_path / "capital.jsonl"
    os.mkfifo(fifo)

    with pytest.raises(DatasetError, match="a FIFO, not a regular file; it was not read"):
        load_dataset(fifo, CAPITAL_PROMPT)


def test_a_dataset_linked_to_a_device_is_refused_unread(tmp_path: Path):
    link = tmp_path / "capital.jsonl"
    link.symlink_to("/dev/zero")

    with pytest.raises(DatasetError, match="a device, not a regular file"):
        load_dataset(link, CAPITAL_PROMPT)


def test_a_yaml_alias_bomb_is_refused_at_the_first_alias(tmp_path: Path):
    levels = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    bomb = tmp_path / "capital.yaml"
    bomb.write_text(
        "- id: fr\n  params: {name: France}\n  expected:\n"
        + "".join(f"    {level}\n" for level in levels)
    )

    with pytest.raises(DatasetError, match=r"capital.yaml line 5: not valid YAML: aliases"):
        load_dataset(bomb, CAPITAL_PROMPT)


def test_a_line_separator_inside_a_json_string_stays_in_its_case(tmp_path: Path):
    text = "Answer\u2028in one line\u2029please\x85now."
    path = tmp_path / "capital.jsonl"
    path.write_text(
        json.dumps({"id": "fr", "params": {"name": "France"}, "input": text}, ensure_ascii=False)
        + "\n"
        + FRANCE.replace('"fr"', '"fr2"'),
        encoding="utf-8",
    )

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert dataset.invalid == ()
    assert [case.input for case in dataset.cases] == [text, None]


def test_a_line_nested_100k_deep_is_one_invalid_case_and_the_rest_load(tmp_path: Path):
    path = tmp_path / "capital.jsonl"
    deep = '{"id": "deep", "params": {"name": "France"}, "expected": ' + "[" * 100_000
    path.write_text(deep + "]" * 100_000 + "}\n" + FRANCE)

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert [case.id for case in dataset.cases] == ["fr"]
    [bad] = dataset.invalid
    assert bad.location == f"{path} line 1"
    assert "nested deeper than 64 levels" in bad.error


def test_a_line_over_the_size_of_a_case_is_one_invalid_case_and_the_rest_load(tmp_path: Path):
    path = tmp_path / "capital.jsonl"
    huge = '{"id": "huge", "input": "' + "x" * MAX_CASE_LINE_BYTES + '"}\n'
    path.write_text(FRANCE + huge + FRANCE.replace('"fr"', '"fr2"'))

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert [case.id for case in dataset.cases] == ["fr", "fr2"]
    [bad] = dataset.invalid
    assert (bad.location, bad.id) == (f"{path} line 2", "line-2")
    assert "over the 16,777,216 bytes a case may take" in bad.error
    assert len(dataset.content_hash) == 64


def test_a_repeated_id_in_a_file_is_one_invalid_case(tmp_path: Path):
    path = tmp_path / "capital.jsonl"
    path.write_text(FRANCE + FRANCE)

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert dataset.case_ids == ("fr",)
    [bad] = dataset.invalid
    assert bad.error == "another case before it has the id 'fr'; ids are unique"


def test_a_dataset_changed_after_it_was_loaded_is_not_run(tmp_path: Path):
    path = tmp_path / "capital.jsonl"
    path.write_text(FRANCE)
    dataset = load_dataset(path, CAPITAL_PROMPT)
    path.write_text(FRANCE.replace("Paris", "Lyon!"))

    with pytest.raises(DatasetError, match="line 1: the dataset changed since it was loaded"):
        list(dataset.cases)


def test_a_file_dataset_reads_its_cases_back_in_order(tmp_path: Path):
    path = tmp_path / "capital.jsonl"
    lines = [FRANCE.replace('"fr"', f'"c{i}"') for i in range(5)]
    path.write_text("".join(lines))

    dataset = load_dataset(path, CAPITAL_PROMPT)

    assert len(dataset.cases) == 5
    assert [case.id for case in dataset.cases] == [f"c{i}" for i in range(5)]
    assert dataset.cases[3].id == "c3"
    assert [case.id for case in dataset.cases[1:3]] == ["c1", "c2"]
