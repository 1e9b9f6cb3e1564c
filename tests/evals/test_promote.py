"""Promotion: a candidate tag replaces `latest` only on evidence, recorded beside the file."""

import json

import pytest

from promptkit.errors import PromotionRefusedError
from promptkit.evals import Case, Dataset, ExactMatch, load_dataset, run_evaluation
from promptkit.evals.promote import promote_overrides
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.testing import FakeProviderServer, reply_script_from

from .conftest import CANDIDATE_WORDING, CAPITAL_PROMPT, Country, openai_adapter

CASES = Dataset(
    "capital",
    (
        Case("fr", (Country("France"),), expected="Paris"),
        Case("jp", (Country("Japan", "Asia"),), expected="Tokyo"),
    ),
)
LATEST_WORDING = "You answer geography questions briefly."


def evaluate(
    server: FakeProviderServer, store: LocalPromptOverridesStore, rules: list[dict[str, object]]
):
    server.respond_with(reply_script_from({"rules": rules}).reply_to)
    return run_evaluation(
        CAPITAL_PROMPT,
        CASES,
        openai_adapter(server),
        [ExactMatch()],
        tag=["latest", "candidate"],
        overrides_store=store,
    )


def test_promotion_is_refused_on_a_regression_and_nothing_is_written(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    store.set_section_override(CAPITAL_PROMPT, tag="latest", path="role", body=LATEST_WORDING)
    latest_file = store.prompt_file(CAPITAL_PROMPT.ns, CAPITAL_PROMPT.key, "latest")
    before = latest_file.read_bytes()
    report = evaluate(
        server,
        store,
        [
            {"when": [CANDIDATE_WORDING, "France"], "text": "Paris"},
            {"when": [CANDIDATE_WORDING, "Japan"], "text": "Kyoto"},
            {"when": "France", "text": "Paris"},
            {"when": "Japan", "text": "Tokyo"},
        ],
    )

    with pytest.raises(
        PromotionRefusedError, match=r"regressed cases: jp \(1.00 -> 0.00\)"
    ) as refused:
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.4
        )

    assert refused.value.regressed == ("jp",)
    assert latest_file.read_bytes() == before
    assert not latest_file.with_name("latest.evidence.json").exists()


def test_promotion_below_the_minimum_score_is_refused(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    report = evaluate(
        server, store, [{"when": "France", "text": "Paris"}, {"when": "Japan", "text": "?"}]
    )

    with pytest.raises(
        PromotionRefusedError, match=r"candidate scores 0\.500, below --min-score 0\.9"
    ):
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
        )


def test_promotion_on_an_improvement_copies_overrides_and_records_evidence(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    store.set_section_override(CAPITAL_PROMPT, tag="latest", path="role", body=LATEST_WORDING)
    report = evaluate(
        server,
        store,
        [
            {"when": [CANDIDATE_WORDING, "France"], "text": "Paris"},
            {"when": [CANDIDATE_WORDING, "Japan"], "text": "Tokyo"},
            {"when": "France", "text": "Paris is the capital."},
            {"when": "Japan", "text": "Tokyo"},
        ],
    )

    result = promote_overrides(
        CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
    )

    promoted = store.resolve(CAPITAL_PROMPT.descriptor, "latest")
    candidate = store.resolve(CAPITAL_PROMPT.descriptor, "candidate")
    assert promoted is not None and candidate is not None
    assert dict(promoted.sections) == dict(candidate.sections)
    assert result.evidence_file == result.overrides_file.with_name("latest.evidence.json")
    evidence = json.loads(result.evidence_file.read_text())
    assert evidence["scores"] == {"candidate": 1.0, "latest": 0.5}
    assert evidence["dataset_hash"] == CASES.content_hash
    assert evidence["model"] == "gpt-4.1-mini"
    assert evidence["cases"]["fr"] == {"candidate": 1.0, "latest": 0.0}
    assert evidence["improved"] == ["fr"]


def test_promotion_needs_both_tags_in_the_report(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    server.respond_with(reply_script_from({"default": {"text": "Paris"}}).reply_to)
    report = run_evaluation(CAPITAL_PROMPT, CASES, openai_adapter(server), [ExactMatch()])

    with pytest.raises(PromotionRefusedError, match="did not run tag"):
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.0
        )


def test_promotion_is_refused_when_cases_did_not_load(
    server: FakeProviderServer, store: LocalPromptOverridesStore, tmp_path
):
    path = tmp_path / "capital.jsonl"
    path.write_text(
        '{"id": "fr", "params": {"name": "France"}, "expected": "Paris"}\n{"id": 5.5}\n'
    )
    server.respond_with(reply_script_from({"default": {"text": "Paris"}}).reply_to)
    report = run_evaluation(
        CAPITAL_PROMPT,
        load_dataset(path, CAPITAL_PROMPT),
        openai_adapter(server),
        [ExactMatch()],
        tag=["latest", "candidate"],
        overrides_store=store,
    )

    with pytest.raises(PromotionRefusedError, match=r"1 case\(s\) of the dataset did not load"):
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.5
        )
