"""Evaluation over datasets: cases, evaluators, runs under several override tags, reports.

`load_dataset` reads `evals/<prompt>.jsonl` (or YAML) and checks each case against the prompt;
`run_evaluation` runs every case under each override tag with bounded concurrency, as the
application runs it (its `App`: model, settings, prices, deps, or a deps factory per case), and
scores the replies with evaluators; the `EvaluationReport` gives per case and per tag results
and the differences between tags, as JSON, a terminal table or a self-contained HTML page.
`promote_overrides` copies a tag's overrides over another only when an evaluation shows it is
good enough and regresses no case.
"""

# Not `typing.TYPE_CHECKING`: importing typing would triple the cost of this import.
TYPE_CHECKING = False

__all__: list[str]  # assigned below from the export table

if TYPE_CHECKING:
    from promptkit.evals._dataset import (
        Case as Case,
        Dataset as Dataset,
        DepsFactory as DepsFactory,
        InvalidCase as InvalidCase,
        load_dataset as load_dataset,
    )
    from promptkit.evals._evaluators import (
        Contains as Contains,
        Evaluator as Evaluator,
        ExactMatch as ExactMatch,
        FunctionEvaluator as FunctionEvaluator,
        JsonFieldEquals as JsonFieldEquals,
        Regex as Regex,
        Score as Score,
    )
    from promptkit.evals._html_report import render_html_report as render_html_report
    from promptkit.evals._judge import JudgeVerdict as JudgeVerdict, LLMJudge as LLMJudge
    from promptkit.evals._outputs import (
        report_json_text as report_json_text,
        write_evaluation_outputs as write_evaluation_outputs,
    )
    from promptkit.evals._promote import promote_overrides as promote_overrides
    from promptkit.evals._report import (
        CaseDelta as CaseDelta,
        CaseResult as CaseResult,
        CaseToolCall as CaseToolCall,
        EvaluationReport as EvaluationReport,
        EvaluatorResult as EvaluatorResult,
        TagComparison as TagComparison,
        TagSummary as TagSummary,
    )
    from promptkit.evals._runner import (
        arun_evaluation as arun_evaluation,
        run_evaluation as run_evaluation,
    )
    from promptkit.evals._specs import (
        SPEC_HELP as SPEC_HELP,
        evaluator_from_spec as evaluator_from_spec,
    )
else:
    from promptkit._lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(
        __name__,
        {
            "promptkit.evals._dataset": (
                "Case",
                "Dataset",
                "DepsFactory",
                "InvalidCase",
                "load_dataset",
            ),
            "promptkit.evals._evaluators": (
                "Contains",
                "Evaluator",
                "ExactMatch",
                "FunctionEvaluator",
                "JsonFieldEquals",
                "Regex",
                "Score",
            ),
            "promptkit.evals._html_report": ("render_html_report",),
            "promptkit.evals._judge": ("JudgeVerdict", "LLMJudge"),
            "promptkit.evals._outputs": ("report_json_text", "write_evaluation_outputs"),
            "promptkit.evals._promote": ("promote_overrides",),
            "promptkit.evals._report": (
                "CaseDelta",
                "CaseResult",
                "CaseToolCall",
                "EvaluationReport",
                "EvaluatorResult",
                "TagComparison",
                "TagSummary",
            ),
            "promptkit.evals._runner": ("arun_evaluation", "run_evaluation"),
            "promptkit.evals._specs": ("SPEC_HELP", "evaluator_from_spec"),
        },
    )
