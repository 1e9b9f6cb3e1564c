"""Promotion: a tag's overrides replace another tag's only when an evaluation says so.

`promote_overrides` takes an `EvaluationReport` that ran both tags on the same dataset. The
candidate (`from_tag`) must reach `min_score` and must not fall below the target (`to_tag`) by
more than `tolerance`, neither in its mean nor on any case, on a run that finished and loaded
every case; otherwise `PromotionRefusedError` says why (naming regressed cases) and nothing is
written. When it holds, the target's entries become exactly the candidate's (through the store,
so hashes are checked), and the evidence (scores per case, dataset hash, model, thresholds) is
written next to the promoted file as `<tag>.evidence.json`, so a reviewer sees the proof in the
same diff as the new text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from promptkit.durable import write_atomically
from promptkit.errors import PromotionRefusedError
from promptkit.evals.report import EvaluationReport, TagComparison
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import Prompt, PromptOverride

EVIDENCE_SUFFIX = ".evidence.json"


@dataclass(frozen=True)
class PromotionResult:
    """Where the promoted overrides and their evidence are, and the comparison behind them."""

    overrides_file: Path
    evidence_file: Path
    comparison: TagComparison
    candidate_score: float


def promote_overrides(
    prompt: Prompt[Any],
    store: LocalPromptOverridesStore,
    report: EvaluationReport,
    *,
    from_tag: str,
    to_tag: str,
    min_score: float,
    tolerance: float = 0.0,
) -> PromotionResult:
    """Copy the overrides of `from_tag` over `to_tag` when `report` shows the candidate good
    enough (see the module docstring); PromotionRefusedError, with nothing written, otherwise."""
    comparison, candidate_score = check_promotion(
        report, from_tag=from_tag, to_tag=to_tag, min_score=min_score, tolerance=tolerance
    )
    descriptor = prompt.descriptor
    candidate = store.resolve(descriptor, from_tag)
    if candidate is None:
        raise PromotionRefusedError(
            f"{prompt.ns}/{prompt.key} has no overrides under tag {from_tag!r} in"
            f" {store.root}; nothing to promote"
        )
    current = store.resolve(descriptor, to_tag)
    store.upsert(
        descriptor,
        PromptOverride(
            ns=prompt.ns,
            prompt_key=prompt.key,
            tag=to_tag,
            sections=candidate.sections,
            tools=candidate.tools,
        ),
    )
    # Entries the target had and the candidate lacks would make the promoted text differ from
    # the text that was evaluated.
    if current is not None:
        for path in set(current.sections) - set(candidate.sections):
            store.delete_section_override(
                ns=prompt.ns, prompt_key=prompt.key, tag=to_tag, path=path
            )
        for tool in set(current.tools) - set(candidate.tools):
            store.delete_tool_override(ns=prompt.ns, prompt_key=prompt.key, tag=to_tag, tool=tool)
    overrides_file = store.prompt_file(prompt.ns, prompt.key, to_tag)
    evidence_file = overrides_file.with_name(to_tag + EVIDENCE_SUFFIX)
    evidence = promotion_evidence(
        report, comparison, min_score=min_score, candidate_score=candidate_score
    )
    write_atomically(evidence_file, json.dumps(evidence, indent=2, ensure_ascii=False) + "\n")
    return PromotionResult(overrides_file, evidence_file, comparison, candidate_score)


def check_promotion(
    report: EvaluationReport, *, from_tag: str, to_tag: str, min_score: float, tolerance: float
) -> tuple[TagComparison, float]:
    """The comparison of `from_tag` against `to_tag` and the candidate's mean score, when the
    promotion rules hold; PromotionRefusedError saying which rule failed otherwise."""
    if not 0.0 <= min_score <= 1.0 or not 0.0 <= tolerance <= 1.0:
        raise ValueError(f"min_score and tolerance are in [0, 1], got {min_score}, {tolerance}")
    missing = [tag for tag in (from_tag, to_tag) if tag not in report.override_tags]
    if missing:
        raise PromotionRefusedError(
            f"the evaluation did not run tag(s) {', '.join(missing)}; run both {from_tag} and"
            f" {to_tag}"
        )
    if report.interrupted:
        raise PromotionRefusedError("the evaluation was interrupted; promote on a complete run")
    if report.invalid_cases:
        where = ", ".join(bad.location for bad in report.invalid_cases[:5])
        raise PromotionRefusedError(
            f"{len(report.invalid_cases)} case(s) of the dataset did not load ({where}); fix"
            " them so the evidence covers the whole dataset"
        )
    candidate_score = report.summary(from_tag).mean_score
    if candidate_score is None:
        raise PromotionRefusedError(
            f"no case of the dataset was scored under {from_tag}; give the cases expected"
            " outputs or evaluators that apply to them"
        )
    comparison = report.compare(to_tag, from_tag, tolerance=tolerance)
    problems = []
    if candidate_score < min_score:
        problems.append(f"{from_tag} scores {candidate_score:.3f}, below --min-score {min_score}")
    if comparison.mean_delta is not None and comparison.mean_delta < -tolerance:
        problems.append(
            f"{from_tag}'s mean is {-comparison.mean_delta:.3f} below {to_tag}'s"
            f" (tolerance {tolerance})"
        )
    if comparison.regressed:
        cases = ", ".join(
            f"{d.case_id} ({d.baseline:.2f} -> {d.candidate:.2f})"
            for d in comparison.regressed
            if d.baseline is not None and d.candidate is not None
        )
        problems.append(f"regressed cases: {cases}")
    if problems:
        raise PromotionRefusedError(
            f"not promoting {from_tag} over {to_tag}: {'; '.join(problems)}",
            regressed=tuple(d.case_id for d in comparison.regressed),
        )
    return comparison, candidate_score


def promotion_evidence(
    report: EvaluationReport,
    comparison: TagComparison,
    *,
    min_score: float,
    candidate_score: float,
) -> dict[str, Any]:
    """The JSON document recorded next to promoted overrides."""
    baseline, candidate = comparison.baseline, comparison.candidate
    return {
        "prompt": report.prompt,
        "promoted": {"from": candidate, "to": baseline},
        "promoted_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "dataset": report.dataset,
        "dataset_hash": report.dataset_hash,
        "provider": report.provider,
        "model": report.model,
        "evaluators": list(report.evaluators),
        "min_score": min_score,
        "tolerance": comparison.tolerance,
        "scores": {
            candidate: candidate_score,
            baseline: report.summary(baseline).mean_score,
        },
        "cases": {
            case_id: {
                candidate: _score(report, candidate, case_id),
                baseline: _score(report, baseline, case_id),
            }
            for case_id in report.case_ids
        },
        "improved": [delta.case_id for delta in comparison.improved],
    }


def _score(report: EvaluationReport, tag: str, case_id: str) -> float | None:
    result = report.result(tag, case_id)
    return None if result is None else result.score
