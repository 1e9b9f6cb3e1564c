"""Promotion: a candidate tag replaces `latest` only on evidence, and only the text that was
evaluated; the evidence is written into the promoted file, in the same atomic write."""

import tomllib
from dataclasses import replace

import pytest

from promptkit.errors import PromotionRefusedError
from promptkit.evals import (
    Case,
    Dataset,
    ExactMatch,
    load_dataset,
    promote_overrides,
    run_evaluation,
)
from promptkit.overrides import LocalPromptOverridesStore, check_overrides
from promptkit.testing import FakeProviderServer, RecordedRequest, Reply, reply_script_from

from .conftest import CANDIDATE_WORDING, CAPITAL_PROMPT, Country, openai_adapter

CASES = Dataset(
    "capital",
    (
        Case("fr", (Country("France"),), expected="Paris"),
        Case("jp", (Country("Japan", "Asia"),), expected="Tokyo"),
    ),
)
LATEST_WORDING = "You answer geography questions briefly."


IMPROVING: list[dict[str, object]] = [
    {"when": [CANDIDATE_WORDING, "France"], "text": "Paris"},
    {"when": [CANDIDATE_WORDING, "Japan"], "text": "Tokyo"},
    {"when": "France", "text": "Paris is the capital."},
    {"when": "Japan", "text": "Tokyo"},
]


def evaluate(
    server: FakeProviderServer,
    store: LocalPromptOverridesStore,
    rules: list[dict[str, object]],
    *,
    role_edited_during_run: tuple[str, str] | None = None,
):
    """Both tags on CASES, one case at a time; `role_edited_during_run` (tag, body) is written
    to the store when the first request arrives (on the server's thread), as a write from
    another process would be."""
    script = reply_script_from({"rules": rules})
    pending = [role_edited_during_run] if role_edited_during_run is not None else []

    def reply(request: RecordedRequest) -> Reply:
        while pending:
            tag, body = pending.pop()
            store.set_section_override(CAPITAL_PROMPT, tag=tag, path="role", body=body)
        return script.reply_to(request)

    server.respond_with(reply)
    return run_evaluation(
        CAPITAL_PROMPT,
        CASES,
        openai_adapter(server),
        [ExactMatch()],
        tag=["latest", "candidate"],
        overrides_store=store,
        concurrency=1,
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
    report = evaluate(server, store, IMPROVING)

    result = promote_overrides(
        CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
    )

    promoted = store.resolve(CAPITAL_PROMPT.descriptor, "latest")
    candidate = store.resolve(CAPITAL_PROMPT.descriptor, "candidate")
    assert promoted is not None and candidate is not None
    assert dict(promoted.sections) == dict(candidate.sections)
    evidence = tomllib.loads(result.overrides_file.read_text())["promotion"]
    assert evidence == dict(result.evidence)
    assert evidence["scores"] == {"candidate": 1.0, "latest": 0.5}
    assert evidence["dataset_sha256"] == CASES.content_hash
    assert evidence["model"] == "gpt-4.1-mini"
    assert evidence["case_scores"] == {"fr": {"candidate": 1.0, "latest": 0.0}}
    assert evidence["improved"] == ["fr"]
    assert evidence["settings"]["max_tool_rounds"] == 16
    assert evidence["section_sha256"] == report.overrides["candidate"].sections
    assert evidence["replaced_sha256"] == report.overrides["latest"].content_hash


def test_promoted_text_matches_its_evidence_in_check(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    promote_overrides(
        CAPITAL_PROMPT,
        store,
        evaluate(server, store, IMPROVING),
        from_tag="candidate",
        to_tag="latest",
        min_score=0.9,
    )

    assert check_overrides(store.root, [CAPITAL_PROMPT]) == ()


def test_a_candidate_edited_during_the_evaluation_is_refused(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    edit = "Name the capital city, nothing else."
    report = evaluate(server, store, IMPROVING, role_edited_during_run=("candidate", edit))

    with pytest.raises(
        PromotionRefusedError, match=r"candidate changed since it was evaluated \(section role"
    ):
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
        )
    assert not store.prompt_file(CAPITAL_PROMPT.ns, CAPITAL_PROMPT.key, "latest").exists()


def test_every_case_of_a_run_renders_the_text_read_when_the_run_began(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    edit = "Name the capital city, nothing else."
    evaluate(server, store, IMPROVING, role_edited_during_run=("candidate", edit))

    sent = [request.raw_body.decode() for request in server.requests]
    assert sum(CANDIDATE_WORDING in body for body in sent) == 2
    assert not any(edit in body for body in sent)


def test_a_target_edited_during_the_evaluation_is_refused_and_kept(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    store.set_section_override(CAPITAL_PROMPT, tag="latest", path="role", body=LATEST_WORDING)
    edit = "You answer geography questions, citing the country."
    report = evaluate(server, store, IMPROVING, role_edited_during_run=("latest", edit))

    with pytest.raises(
        PromotionRefusedError, match=r"latest changed since it was evaluated \(section role"
    ):
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
        )
    latest = store.resolve(CAPITAL_PROMPT.descriptor, "latest")
    assert latest is not None and latest.sections[("role",)].body == edit


def test_a_candidate_edited_between_evaluation_and_promotion_is_refused(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    report = evaluate(server, store, IMPROVING)
    store.delete_section_override(
        ns=CAPITAL_PROMPT.ns, prompt_key=CAPITAL_PROMPT.key, tag="candidate", path="role"
    )

    with pytest.raises(PromotionRefusedError, match=r"\(section role removed\)"):
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
        )


def test_a_report_without_overrides_snapshots_is_refused(
    server: FakeProviderServer, store: LocalPromptOverridesStore
):
    report = replace(evaluate(server, store, IMPROVING), overrides={})

    with pytest.raises(PromotionRefusedError, match="no snapshot of the overrides it ran"):
        promote_overrides(
            CAPITAL_PROMPT, store, report, from_tag="candidate", to_tag="latest", min_score=0.9
        )


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
