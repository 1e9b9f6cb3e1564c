"""What an evaluation run found: per case results, per override tag summaries, tag comparisons.

A case's score is the mean of the scores of the evaluators that apply to it; an evaluator that
raised counts as 0 there (and is counted in `evaluator_errors`), and a case whose evaluation
failed (provider error, unparseable output) scores 0, so errors can never raise a tag's mean.
A case no evaluator applies to has no score and is left out of the means. Every value here is
frozen and turns into JSON with `to_json`, which the CLI, the HTML report and promotion share.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from promptkit.evals._dataset import InvalidCase
from promptkit.overrides import OverridesSnapshot
from promptkit.secrets import redact_value

PERCENTILES = (50, 90, 99)


@dataclass(frozen=True)
class EvaluatorResult:
    """One evaluator's judgement of one case: a score and reason, or the error it raised.
    `score` is None when the evaluator did not apply or raised."""

    evaluator: str
    score: float | None
    reason: str = ""
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "evaluator": self.evaluator,
            "score": self.score,
            "reason": self.reason,
            "error": self.error,
        }


TOOL_RESULT_SHOWN = 500
"""How much of a tool's result a report keeps per call (characters)."""


@dataclass(frozen=True)
class CaseToolCall:
    """One tool call a case's evaluation made, as a report shows it: the tool, its arguments
    (JSON values), whether it succeeded, and the start of what the model was sent back; the
    arguments and result are redacted of credentials."""

    name: str
    arguments: Any
    success: bool
    result: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "arguments": self.arguments,
            "success": self.success,
            "result": self.result,
        }


@dataclass(frozen=True)
class CaseResult:
    """One case run under one override tag.

    `tool_calls` are the calls its evaluation made, in order. `placeholder_digest` is set when
    the prompt rendered the placeholder workspace digest (no digest anywhere): the case failed
    for it unless the run allowed it.
    """

    case_id: str
    override_tag: str
    case_tags: tuple[str, ...] = ()
    evaluations: tuple[EvaluatorResult, ...] = ()
    text: str | None = None
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency_s: float = 0.0
    location: str | None = None
    unpriced: int = 0
    """Model calls of this case whose cost is unknown (a model no price source lists)."""
    tool_calls: tuple[CaseToolCall, ...] = ()
    placeholder_digest: bool = False

    @property
    def failed(self) -> bool:
        """Whether the prompt could not be evaluated for this case (the error says why)."""
        return self.error is not None

    @property
    def evaluator_errors(self) -> int:
        return sum(1 for result in self.evaluations if result.error is not None)

    @property
    def score(self) -> float | None:
        """The case's score in [0, 1], or None when no evaluator applied."""
        if self.failed:
            return 0.0
        counted = [
            0.0 if result.error is not None else result.score
            for result in self.evaluations
            if result.error is not None or result.score is not None
        ]
        scores = [value for value in counted if value is not None]
        return sum(scores) / len(scores) if scores else None

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "override_tag": self.override_tag,
            "case_tags": list(self.case_tags),
            "score": self.score,
            "evaluations": [result.to_json() for result in self.evaluations],
            "text": self.text,
            "error": self.error,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "unpriced": self.unpriced,
            "latency_s": round(self.latency_s, 6),
            "location": self.location,
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "placeholder_digest": self.placeholder_digest,
        }


@dataclass(frozen=True)
class TagSummary:
    """The totals of one override tag: counts, mean score (overall and per case tag), tokens,
    cost and latency percentiles (seconds, over every finished case). `cost` adds up the priced
    model calls; `unpriced` counts the others, which it leaves out."""

    override_tag: str
    finished: int
    failed: int
    evaluator_errors: int
    not_run: int
    mean_score: float | None
    by_case_tag: Mapping[str, float | None]
    input_tokens: int
    output_tokens: int
    cost: float | None
    latency_s: Mapping[str, float | None]
    unpriced: int = 0

    @property
    def cost_text(self) -> str:
        """`$0.0012`, `$0.0012 + 2 unpriced`, `2 unpriced` or `n/a`: never an unpriced call as 0."""
        from promptkit.adapters import cost_text

        return cost_text(self.cost, self.unpriced)

    def to_json(self) -> dict[str, Any]:
        return {
            "override_tag": self.override_tag,
            "finished": self.finished,
            "failed": self.failed,
            "evaluator_errors": self.evaluator_errors,
            "not_run": self.not_run,
            "mean_score": self.mean_score,
            "by_case_tag": dict(self.by_case_tag),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "unpriced": self.unpriced,
            "latency_s": dict(self.latency_s),
        }


@dataclass(frozen=True)
class CaseDelta:
    """How one case's score moved from the baseline tag to the candidate tag."""

    case_id: str
    baseline: float | None
    candidate: float | None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline


@dataclass(frozen=True)
class TagComparison:
    """The candidate tag against the baseline: mean difference and the cases that moved by more
    than `tolerance` (a regression is a drop, an improvement a rise)."""

    baseline: str
    candidate: str
    tolerance: float
    mean_delta: float | None
    regressed: tuple[CaseDelta, ...]
    improved: tuple[CaseDelta, ...]

    def to_json(self) -> dict[str, Any]:
        def deltas(items: Sequence[CaseDelta]) -> list[dict[str, Any]]:
            return [
                {"case_id": d.case_id, "baseline": d.baseline, "candidate": d.candidate}
                for d in items
            ]

        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "tolerance": self.tolerance,
            "mean_delta": self.mean_delta,
            "regressed": deltas(self.regressed),
            "improved": deltas(self.improved),
        }


@dataclass(frozen=True)
class EvaluationReport:
    """Everything one run found. `interrupted` is set when it was stopped (Ctrl-C) before every
    case ran; `results` then holds the cases that finished.

    `overrides` holds, per tag, the snapshot of the entries the run rendered with (empty when it
    ran without a store): promotion promotes only that text. `settings` are the run's and the
    model's settings (concurrency, deadline, tool rounds, sampling), `dataset_source` the file
    the cases came from.
    """

    prompt: str
    provider: str
    model: str
    dataset: str
    dataset_hash: str
    override_tags: tuple[str, ...]
    case_ids: tuple[str, ...]
    results: tuple[CaseResult, ...]
    invalid_cases: tuple[InvalidCase, ...] = ()
    evaluators: tuple[str, ...] = ()
    interrupted: bool = False
    duration_s: float = 0.0
    overrides: Mapping[str, OverridesSnapshot] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    dataset_source: str | None = None
    _by_key: Mapping[tuple[str, str], CaseResult] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {(r.override_tag, r.case_id): r for r in self.results})

    def result(self, override_tag: str, case_id: str) -> CaseResult | None:
        """The result of `case_id` under `override_tag`, None when it did not run."""
        return self._by_key.get((override_tag, case_id))

    def summary(self, override_tag: str) -> TagSummary:
        """The totals of `override_tag`."""
        finished = [r for r in self.results if r.override_tag == override_tag]
        scores = [r.score for r in finished]
        case_tags = sorted({tag for r in finished for tag in r.case_tags})
        costs = [r.cost for r in finished if r.cost is not None]
        latencies = sorted(r.latency_s for r in finished)
        return TagSummary(
            override_tag=override_tag,
            finished=len(finished),
            failed=sum(1 for r in finished if r.failed),
            evaluator_errors=sum(r.evaluator_errors for r in finished),
            not_run=len(self.case_ids) - len(finished),
            mean_score=_mean(scores),
            by_case_tag={
                tag: _mean([r.score for r in finished if tag in r.case_tags]) for tag in case_tags
            },
            input_tokens=sum(r.input_tokens or 0 for r in finished),
            output_tokens=sum(r.output_tokens or 0 for r in finished),
            cost=sum(costs) if costs else None,
            latency_s={f"p{p}": percentile(latencies, p) for p in PERCENTILES},
            unpriced=sum(r.unpriced for r in finished),
        )

    def compare(self, baseline: str, candidate: str, *, tolerance: float = 0.0) -> TagComparison:
        """How `candidate` did against `baseline`, case by case."""
        deltas = [
            CaseDelta(
                case_id,
                _score_of(self.result(baseline, case_id)),
                _score_of(self.result(candidate, case_id)),
            )
            for case_id in self.case_ids
        ]
        base_mean = self.summary(baseline).mean_score
        cand_mean = self.summary(candidate).mean_score
        return TagComparison(
            baseline=baseline,
            candidate=candidate,
            tolerance=tolerance,
            mean_delta=None if base_mean is None or cand_mean is None else cand_mean - base_mean,
            regressed=tuple(d for d in deltas if d.delta is not None and d.delta < -tolerance),
            improved=tuple(d for d in deltas if d.delta is not None and d.delta > tolerance),
        )

    def to_json(self) -> dict[str, Any]:
        """The whole report as JSON values: summaries, comparisons of every tag with the first,
        each case result and the cases that did not load. Every text in it (case ids and tags,
        replies, reasons, errors, locations) is redacted of credentials: reports are shared."""
        first = self.override_tags[0] if self.override_tags else None
        document: dict[str, Any] = {
            "prompt": self.prompt,
            "provider": self.provider,
            "model": self.model,
            "dataset": self.dataset,
            "dataset_hash": self.dataset_hash,
            "override_tags": list(self.override_tags),
            "overrides": {
                tag: {"sha256": snapshot.content_hash, **snapshot.to_json()}
                for tag, snapshot in self.overrides.items()
            },
            "settings": dict(self.settings),
            "evaluators": list(self.evaluators),
            "interrupted": self.interrupted,
            "duration_s": round(self.duration_s, 6),
            "cases": len(self.case_ids),
            "summaries": [self.summary(tag).to_json() for tag in self.override_tags],
            "comparisons": [
                self.compare(first, tag).to_json()
                for tag in self.override_tags[1:]
                if first is not None
            ],
            "invalid_cases": [
                {"id": bad.id, "location": bad.location, "error": bad.error}
                for bad in self.invalid_cases
            ],
            "results": [result.to_json() for result in self.results],
        }
        redacted: dict[str, Any] = redact_value(document)
        return redacted


def percentile(sorted_values: Sequence[float], p: float) -> float | None:
    """The `p`th percentile of ascending values, interpolated between ranks; None when empty."""
    if not sorted_values:
        return None
    rank = (len(sorted_values) - 1) * p / 100
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (rank - low)


def _score_of(result: CaseResult | None) -> float | None:
    return None if result is None else result.score


def _mean(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None
