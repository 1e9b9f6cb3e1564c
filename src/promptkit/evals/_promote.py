"""Promotion: a tag's overrides replace another tag's only when an evaluation says so, and only
the text that evaluation ran.

`promote_overrides` takes an `EvaluationReport` that ran both tags on the same dataset. The
candidate (`from_tag`) must reach `min_score` and must not fall below the target (`to_tag`) by
more than `tolerance`, neither in its mean nor on any case, on a run that finished and loaded
every case; otherwise `PromotionRefusedError` says why (naming regressed cases) and nothing is
written.

The report holds the snapshot (`OverridesSnapshot`) of each tag's entries as the run read them.
When the candidate in the store no longer matches its snapshot, or the target no longer matches
its own (someone wrote to either during or after the run), promotion refuses and names the
entries that changed: what is promoted is exactly what was evaluated, and nothing written to
the target meanwhile is overwritten unseen. Otherwise the store replaces the target's entries
with the candidate's and, in the same document and the same atomic write
(`PromotableOverridesStore.replace_entries`), a `[promotion]` table of evidence: scores, the
dataset's file and hash, model and settings, thresholds, the hash of every promoted entry and a
seal over them, so the reviewer sees the proof in the same diff as the new text and
`promptkit overrides check` can tell when the text or the evidence was edited afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import ArgumentValueError, OverridesConflictError, PromotionRefusedError
from promptkit.evals._report import EvaluationReport, TagComparison
from promptkit.overrides import OverridesSnapshot, PromotableOverridesStore, bind_promotion
from promptkit.prompt import Prompt, PromptOverride
from promptkit.secrets import redact_secrets

# The evidence lists the cases whose scores differ between the tags, up to this many (it sits
# in the overrides file, which has a size limit); `cases_differing` counts them all.
MAX_EVIDENCE_CASES = 200


@dataclass(frozen=True)
class PromotionResult:
    """Where the promoted overrides are kept (a file's path for a store of files), the evidence
    written into them, and the comparison behind them."""

    overrides_location: str
    evidence: Mapping[str, Any]
    comparison: TagComparison
    candidate_score: float

    @property
    def overrides_file(self) -> Path:
        """The promoted file, for a store of files."""
        return Path(self.overrides_location)


def promote_overrides(
    prompt: Prompt[Any],
    store: PromotableOverridesStore,
    report: EvaluationReport,
    *,
    from_tag: str,
    to_tag: str,
    min_score: float,
    tolerance: float = 0.0,
    clock: Clock = SYSTEM_CLOCK,
) -> PromotionResult:
    """Replace the overrides of `to_tag` with the candidate's, as evaluated in `report`, when it
    shows the candidate good enough (see the module docstring); PromotionRefusedError, with
    nothing written, otherwise. `clock` dates the evidence."""
    comparison, candidate_score = check_promotion(
        report, from_tag=from_tag, to_tag=to_tag, min_score=min_score, tolerance=tolerance
    )
    evaluated, replaced = report.overrides.get(from_tag), report.overrides.get(to_tag)
    if evaluated is None or replaced is None:
        raise PromotionRefusedError(
            "the evaluation recorded no snapshot of the overrides it ran; run it with"
            " overrides_store= the store to promote in"
        )
    descriptor = prompt.descriptor
    candidate = store.resolve(descriptor, from_tag)
    changes = OverridesSnapshot.of(candidate).changes_since(evaluated)
    if changes:
        raise PromotionRefusedError(
            f"{from_tag} changed since it was evaluated ({', '.join(changes)}); nothing was"
            f" promoted: evaluate {from_tag} again"
        )
    if candidate is None or evaluated.is_empty:
        raise PromotionRefusedError(
            f"{prompt.ns}/{prompt.key} has no overrides under tag {from_tag!r} in {store!r};"
            " nothing to promote"
        )
    evidence = promotion_evidence(
        report,
        comparison,
        min_score=min_score,
        candidate_score=candidate_score,
        promoted_at=clock.now().replace(microsecond=0).isoformat(),
        dataset_file=_dataset_file(report, store),
    )
    promoted = PromptOverride(
        ns=prompt.ns,
        prompt_key=prompt.key,
        tag=to_tag,
        sections=candidate.sections,
        tools=candidate.tools,
        promotion=bind_promotion(candidate, evidence, replaced=replaced),
    )
    try:
        written = store.replace_entries(descriptor, promoted, expected=replaced)
    except OverridesConflictError as conflict:
        raise PromotionRefusedError(
            f"{to_tag} changed since it was evaluated ({', '.join(conflict.changes)}); nothing"
            f" was promoted: evaluate {to_tag} and {from_tag} again"
        ) from None
    assert written.promotion is not None  # replace_entries writes the evidence it was given
    return PromotionResult(
        written.location or repr(store), written.promotion, comparison, candidate_score
    )


def check_promotion(
    report: EvaluationReport, *, from_tag: str, to_tag: str, min_score: float, tolerance: float
) -> tuple[TagComparison, float]:
    """The comparison of `from_tag` against `to_tag` and the candidate's mean score, when the
    promotion rules hold; PromotionRefusedError saying which rule failed otherwise."""
    if not 0.0 <= min_score <= 1.0 or not 0.0 <= tolerance <= 1.0:
        raise ArgumentValueError(
            f"min_score and tolerance are in [0, 1], got {min_score}, {tolerance}"
        )
    missing = [tag for tag in (from_tag, to_tag) if tag not in report.override_tags]
    if missing:
        raise PromotionRefusedError(
            f"the evaluation did not run tag(s) {', '.join(missing)}; run both {from_tag} and"
            f" {to_tag}"
        )
    _require_complete_run(report, from_tag, to_tag)
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


def _require_complete_run(report: EvaluationReport, from_tag: str, to_tag: str) -> None:
    """Refuse evidence that does not cover the dataset as the application runs it: a run that
    was interrupted, cases that did not load, or cases without a workspace digest."""
    if report.interrupted:
        raise PromotionRefusedError("the evaluation was interrupted; promote on a complete run")
    if report.invalid_cases:
        where = ", ".join(bad.location for bad in report.invalid_cases[:5])
        raise PromotionRefusedError(
            f"{len(report.invalid_cases)} case(s) of the dataset did not load ({where}); fix"
            " them so the evidence covers the whole dataset"
        )
    without_digest = [
        f"{r.case_id} [{r.override_tag}]"
        for r in report.results
        if r.placeholder_digest and r.failed and r.override_tag in (from_tag, to_tag)
    ]
    if without_digest:
        raise PromotionRefusedError(
            f"{len(without_digest)} case(s) would render the placeholder workspace digest"
            f" ({', '.join(without_digest[:5])}); store a digest (`promptkit optimize --scope"
            " global`) so the comparison is of the text, or allow it explicitly"
        )


def promotion_evidence(
    report: EvaluationReport,
    comparison: TagComparison,
    *,
    min_score: float,
    candidate_score: float,
    promoted_at: str,
    dataset_file: str | None = None,
) -> dict[str, Any]:
    """The evidence of a promotion, as JSON values: what ran, on what, and how it scored.

    Case ids are redacted of credentials: the evidence is written into an overrides file.
    """
    baseline, candidate = comparison.baseline, comparison.candidate
    differing = {
        redact_secrets(case_id): {
            candidate: _score(report, candidate, case_id),
            baseline: _score(report, baseline, case_id),
        }
        for case_id in report.case_ids
        if _score(report, candidate, case_id) != _score(report, baseline, case_id)
    }
    return {
        "from_tag": candidate,
        "to_tag": baseline,
        "promoted_at": promoted_at,
        "prompt": report.prompt,
        "dataset": report.dataset,
        "dataset_file": dataset_file,
        "dataset_sha256": report.dataset_hash,
        "provider": report.provider,
        "model": report.model,
        "settings": dict(report.settings),
        "evaluators": list(report.evaluators),
        "min_score": min_score,
        "tolerance": comparison.tolerance,
        "cases": len(report.case_ids),
        "scores": {
            candidate: candidate_score,
            baseline: report.summary(baseline).mean_score,
        },
        "improved": [redact_secrets(delta.case_id) for delta in comparison.improved],
        "cases_differing": len(differing),
        "case_scores": dict(list(differing.items())[:MAX_EVIDENCE_CASES]),
    }


def _dataset_file(report: EvaluationReport, store: object) -> str | None:
    """The dataset's file relative to the store's folder, so `check` finds it from any
    directory; None for a dataset built in code."""
    root = getattr(store, "root", None)
    if report.dataset_source is None or not isinstance(root, Path):
        return None
    return Path(os.path.relpath(Path(report.dataset_source).resolve(), root.resolve())).as_posix()


def _score(report: EvaluationReport, tag: str, case_id: str) -> float | None:
    result = report.result(tag, case_id)
    return None if result is None else result.score
