"""`run_evaluation`: every case under each override tag, compared; failures are per case."""

import signal
from typing import Any

import pytest

from promptkit.adapters import PromptResponse
from promptkit.clock import FakeClock
from promptkit.errors import ArgumentTypeError
from promptkit.evals import (
    Case,
    CaseResult,
    Contains,
    Dataset,
    ExactMatch,
    FunctionEvaluator,
    JsonFieldEquals,
    run_evaluation,
)
from promptkit.evals._report import percentile
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.testing import FakeProviderServer, RecordedRequest, Reply, Usage, reply_script_from

from .conftest import (
    CANDIDATE_WORDING,
    CAPITAL_PROMPT,
    STRUCTURED_PROMPT,
    Country,
    openai_adapter,
)

CASES = Dataset(
    "capital",
    (
        Case("fr", (Country("France"),), expected="Paris", tags=("europe",)),
        Case("jp", (Country("Japan", "Asia"),), expected="Tokyo", tags=("asia",)),
    ),
)

# Under `latest` the fake model is chatty; the candidate's wording makes it answer in one word.
SCRIPT = reply_script_from(
    {
        "rules": [
            {"when": [CANDIDATE_WORDING, "France"], "text": "Paris"},
            {"when": [CANDIDATE_WORDING, "Japan"], "text": "Tokyo"},
            {"when": "France", "text": "Paris is the capital of France."},
            {"when": "Japan", "text": "Tokyo", "usage": {"input_tokens": 30, "output_tokens": 2}},
        ]
    }
)


def test_two_tags_are_compared_case_by_case(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    server.respond_with(SCRIPT.reply_to)

    report = run_evaluation(
        CAPITAL_PROMPT,
        CASES,
        openai_adapter(server),
        [ExactMatch()],
        tag=["latest", "candidate"],
        overrides_store=store,
    )

    assert report.summary("latest").mean_score == 0.5
    assert report.summary("candidate").mean_score == 1.0
    comparison = report.compare("latest", "candidate")
    assert comparison.mean_delta == 0.5
    assert [d.case_id for d in comparison.improved] == ["fr"]
    assert comparison.regressed == ()
    assert report.to_json()["comparisons"][0]["mean_delta"] == 0.5


def test_summary_reports_scores_per_case_tag_and_tokens(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    server.respond_with(SCRIPT.reply_to)

    summary = run_evaluation(
        CAPITAL_PROMPT, CASES, openai_adapter(server), [ExactMatch()], overrides_store=store
    ).summary("latest")

    assert dict(summary.by_case_tag) == {"asia": 1.0, "europe": 0.0}
    assert (summary.input_tokens, summary.output_tokens) == (10 + 30, 5 + 2)
    assert (summary.finished, summary.failed, summary.not_run) == (2, 0, 0)


def test_provider_failing_one_case_is_reported_and_the_run_continues(server: FakeProviderServer):
    server.respond_with(
        reply_script_from(
            {
                "rules": [{"when": "Japan", "error": {"status": 400, "message": "bad case"}}],
                "default": {"text": "Paris"},
            }
        ).reply_to
    )

    report = run_evaluation(CAPITAL_PROMPT, CASES, openai_adapter(server), [ExactMatch()])

    failed = report.result("latest", "jp")
    assert failed is not None and failed.failed
    assert failed.error is not None and failed.error.startswith("ProviderBadRequestError")
    assert failed.score == 0.0
    summary = report.summary("latest")
    assert (summary.finished, summary.failed, summary.mean_score) == (2, 1, 0.5)


def test_evaluator_that_raises_is_counted_and_scores_zero(server: FakeProviderServer):
    server.respond_with(reply_script_from({"default": {"text": "Paris"}}).reply_to)

    def broken(case: Case, response: PromptResponse[Any]) -> float:
        raise KeyError("no such field")

    report = run_evaluation(
        CAPITAL_PROMPT, CASES, openai_adapter(server), [Contains(), FunctionEvaluator(broken)]
    )

    result = report.result("latest", "fr")
    assert result is not None
    assert [e.error for e in result.evaluations] == [None, "KeyError: 'no such field'"]
    assert result.score == 0.5
    assert report.summary("latest").evaluator_errors == 2


def test_concurrency_of_one_sends_cases_in_dataset_order(server: FakeProviderServer):
    server.respond_with(reply_script_from({"default": {"text": "x"}}).reply_to)
    cases = Dataset("many", tuple(Case(f"c{i}", (Country(f"Land{i}"),)) for i in range(6)))

    run_evaluation(CAPITAL_PROMPT, cases, openai_adapter(server), [], concurrency=1)

    sent = [request.body["instructions"] for request in server.requests]
    assert [next(f"c{i}" for i in range(6) if f"Land{i} " in text) for text in sent] == [
        f"c{i}" for i in range(6)
    ]


def test_structured_output_is_scored_field_by_field(server: FakeProviderServer):
    server.enqueue(
        Reply.json({"capital": "Paris", "confidence": 0.9}, usage=Usage(12, 8)),
    )
    dataset = Dataset("s", (Case("fr", (Country("France"),), expected={"capital": "Paris"}),))

    report = run_evaluation(
        STRUCTURED_PROMPT, dataset, openai_adapter(server), [JsonFieldEquals("capital")]
    )

    result = report.result("latest", "fr")
    assert result is not None and result.score == 1.0


def test_latencies_come_from_the_injected_clock(server: FakeProviderServer):
    clock = FakeClock()

    def answer_half_a_second_later(request: RecordedRequest) -> Reply:
        clock.advance(0.5)
        return Reply.text("Paris")

    server.respond_with(answer_half_a_second_later)

    report = run_evaluation(
        CAPITAL_PROMPT, CASES, openai_adapter(server), [ExactMatch()], concurrency=1, clock=clock
    )

    assert [r.latency_s for r in report.results] == [0.5, 0.5]
    assert report.duration_s == 1.0
    assert report.summary("latest").latency_s == {"p50": 0.5, "p90": 0.5, "p99": 0.5}


def test_a_clock_that_is_not_a_promptkit_clock_is_refused(server: FakeProviderServer):
    with pytest.raises(ArgumentTypeError, match="clock must be a promptkit Clock"):
        run_evaluation(
            CAPITAL_PROMPT,
            CASES,
            openai_adapter(server),
            [ExactMatch()],
            clock=lambda: 0.0,  # type: ignore[arg-type]
        )
    assert server.request_count == 0


def test_percentile_interpolates_between_ranks():
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 90) == 4.6
    assert percentile([], 50) is None


def test_run_evaluation_closes_the_client_it_built_for_its_event_loop(
    server: FakeProviderServer,
):
    server.respond_with(lambda request: Reply.text("Paris"))
    adapter = openai_adapter(server)
    used: list[Any] = []

    run_evaluation(
        CAPITAL_PROMPT,
        CASES,
        adapter,
        [ExactMatch()],
        on_result=lambda result: used.append(adapter.async_client()),
    )

    assert len(used) == 2 and used[0] is used[1]
    assert used[0].is_closed()


@pytest.mark.usefixtures("terminal_sigint")
def test_ctrl_c_reports_the_cases_that_finished_and_starts_no_other(server: FakeProviderServer):
    server.respond_with(reply_script_from({"default": {"text": "x"}}).reply_to)
    cases = Dataset("many", tuple(Case(f"c{i}", (Country(f"Land{i}"),)) for i in range(6)))

    def press_ctrl_c_after_the_second(result: CaseResult) -> None:
        if result.case_id == "c1":
            signal.raise_signal(signal.SIGINT)

    report = run_evaluation(
        CAPITAL_PROMPT,
        cases,
        openai_adapter(server),
        [],
        concurrency=1,
        on_result=press_ctrl_c_after_the_second,
    )

    assert report.interrupted
    assert [result.case_id for result in report.results] == ["c0", "c1"]
    assert len(server.requests) == 2
