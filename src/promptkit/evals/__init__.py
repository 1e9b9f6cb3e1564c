"""Evaluation over datasets: cases, evaluators, runs under several override tags, reports.

`load_dataset` reads `evals/<prompt>.jsonl` (or YAML) and checks each case against the prompt;
`run_evaluation` runs every case under each override tag with bounded concurrency and scores the
replies with evaluators; the `EvaluationReport` gives per case and per tag results and the
differences between tags, as JSON, a terminal table or a self-contained HTML page.
`promote_overrides` copies a tag's overrides over another only when an evaluation shows it is
good enough and regresses no case.
"""

from promptkit.evals.dataset import Case, Dataset, InvalidCase, load_dataset
from promptkit.evals.evaluators import (
    Contains,
    Evaluator,
    ExactMatch,
    FunctionEvaluator,
    JsonFieldEquals,
    Regex,
    Score,
)
from promptkit.evals.judge import JudgeVerdict, LLMJudge
from promptkit.evals.report import (
    CaseDelta,
    CaseResult,
    EvaluationReport,
    EvaluatorResult,
    TagComparison,
    TagSummary,
)
from promptkit.evals.runner import arun_evaluation, run_evaluation

__all__ = [
    "Case",
    "CaseDelta",
    "CaseResult",
    "Contains",
    "Dataset",
    "EvaluationReport",
    "Evaluator",
    "EvaluatorResult",
    "ExactMatch",
    "FunctionEvaluator",
    "InvalidCase",
    "JsonFieldEquals",
    "JudgeVerdict",
    "LLMJudge",
    "Regex",
    "Score",
    "TagComparison",
    "TagSummary",
    "arun_evaluation",
    "load_dataset",
    "run_evaluation",
]
