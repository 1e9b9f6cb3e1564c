"""How `promptkit eval` shows a run on a terminal: a progress bar while it runs (only when
stderr is a terminal), then a table of scores per case and override tag, the totals, the
differences from the first tag, each case's tool calls, and the cases that failed or did not
load."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from promptkit.evals import CaseResult, CaseToolCall, EvaluationReport
from promptkit.secrets import redact_secrets

_BAR_WIDTH = 30
_ARGUMENTS_SHOWN = 60


class ProgressBar:
    """A one-line bar on `stream`, redrawn on each finished case; silent unless `stream` is a
    terminal, so logs and pipes never get carriage returns."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self._total = max(total, 1)
        self._stream = stream
        self._done = 0
        self._failed = 0
        self._shown = stream.isatty()

    def advance(self, result: CaseResult) -> None:
        self._done += 1
        self._failed += result.failed
        if not self._shown:
            return
        filled = _BAR_WIDTH * self._done // self._total
        failed = f", {self._failed} failed" if self._failed else ""
        self._stream.write(
            f"\r[{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {self._done}/{self._total}{failed}"
        )
        self._stream.flush()

    def close(self) -> None:
        if self._shown and self._done:
            self._stream.write("\n")
            self._stream.flush()


def report_table(report: EvaluationReport) -> str:
    """The report as plain text columns."""
    tags = report.override_tags
    header = ["case", "case tags", *tags]
    if len(tags) > 1:
        header += [f"{tag}-{tags[0]}" for tag in tags[1:]]
    rows = [header]
    for case_id in report.case_ids:
        results = [report.result(tag, case_id) for tag in tags]
        case_tags = next((r.case_tags for r in results if r is not None), ())
        row = [case_id, _joined(case_tags, ","), *(_cell(result) for result in results)]
        base = _score(results[0])
        row += [_delta(base, _score(result)) for result in results[1:]]
        rows.append(row)
    lines = _columns(rows)
    lines.append("")
    lines += _columns(_summary_rows(report))
    lines += _differences(report)
    lines += _tool_calls(report)
    lines += _problems(report)
    if report.interrupted:
        lines.append("")
        lines.append(
            f"interrupted: {len(report.results)} of {len(report.case_ids) * len(tags)}"
            " evaluations finished; the others are shown as 'not run'"
        )
    return "\n".join(lines)


def _summary_rows(report: EvaluationReport) -> list[list[str]]:
    summaries = [report.summary(tag) for tag in report.override_tags]
    rows = [["", *report.override_tags]]
    rows.append(["mean score", *(_number(s.mean_score) for s in summaries)])
    for case_tag in sorted({t for s in summaries for t in s.by_case_tag}):
        rows.append(
            [
                f"  tag {redact_secrets(case_tag)}",
                *(_number(s.by_case_tag.get(case_tag)) for s in summaries),
            ]
        )
    rows += [
        ["finished", *(str(s.finished) for s in summaries)],
        ["failed", *(str(s.failed) for s in summaries)],
        ["evaluator errors", *(str(s.evaluator_errors) for s in summaries)],
        ["not run", *(str(s.not_run) for s in summaries)],
        ["did not load", *(str(len(report.invalid_cases)) for _ in summaries)],
        ["input tokens", *(str(s.input_tokens) for s in summaries)],
        ["output tokens", *(str(s.output_tokens) for s in summaries)],
        ["cost", *(s.cost_text for s in summaries)],
    ]
    for key in ("p50", "p90", "p99"):
        rows.append([f"latency {key} s", *(_number(s.latency_s.get(key), 3) for s in summaries)])
    return rows


def _differences(report: EvaluationReport) -> list[str]:
    tags = report.override_tags
    lines: list[str] = []
    for tag in tags[1:]:
        comparison = report.compare(tags[0], tag)
        mean = "n/a" if comparison.mean_delta is None else f"{comparison.mean_delta:+.3f}"
        lines.append("")
        lines.append(f"{tag} vs {tags[0]}: mean {mean}")
        lines.append(f"  regressed: {_case_list(d.case_id for d in comparison.regressed)}")
        lines.append(f"  improved: {_case_list(d.case_id for d in comparison.improved)}")
    return lines


def _tool_calls(report: EvaluationReport) -> list[str]:
    """`case [tag]: tool(arguments) ok, other(...) FAILED` for each case that called tools."""
    lines = [
        f"  {redact_secrets(result.case_id)} [{result.override_tag}]:"
        f" {', '.join(_call_text(call) for call in result.tool_calls)}"
        for result in report.results
        if result.tool_calls
    ]
    return ["", "tool calls:", *lines] if lines else []


def _call_text(call: CaseToolCall) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    if len(arguments) > _ARGUMENTS_SHOWN:
        arguments = f"{arguments[: _ARGUMENTS_SHOWN - 3]}..."
    return f"{call.name}({arguments}) {'ok' if call.success else 'FAILED'}"


def _problems(report: EvaluationReport) -> list[str]:
    lines: list[str] = []
    for result in report.results:
        where = f" ({redact_secrets(result.location)})" if result.location else ""
        case = f"{redact_secrets(result.case_id)} [{result.override_tag}]{where}"
        if result.error:
            lines.append(f"  {case}: {redact_secrets(result.error)}")
        for evaluation in result.evaluations:
            if evaluation.error:
                lines.append(
                    f"  {case}: evaluator {redact_secrets(evaluation.evaluator)} raised"
                    f" {redact_secrets(evaluation.error)}"
                )
    for bad in report.invalid_cases:
        lines.append(
            f"  {redact_secrets(bad.location)}: case {redact_secrets(bad.id)} did not load:"
            f" {redact_secrets(bad.error)}"
        )
    return ["", "problems:", *lines] if lines else []


def _cell(result: CaseResult | None) -> str:
    if result is None:
        return "not run"
    if result.failed:
        return "FAILED"
    marker = " !" if result.evaluator_errors else ""
    return _number(result.score) + marker


def _score(result: CaseResult | None) -> float | None:
    return None if result is None else result.score


def _delta(base: float | None, other: float | None) -> str:
    return "" if base is None or other is None else f"{other - base:+.2f}"


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _case_list(case_ids: Iterable[str]) -> str:
    return _joined(case_ids, ", ") or "none"


def _joined(texts: Iterable[str], separator: str) -> str:
    """`texts` joined, each redacted first: a credential that is a whole text alone (a key's
    body line) is no longer recognised once other text stands beside it."""
    return separator.join(redact_secrets(text) for text in texts)


def _columns(rows: list[list[str]]) -> list[str]:
    # Case ids and tags are the dataset's text: redacted before the columns are laid out.
    rows = [[redact_secrets(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip()
        for row in rows
    ]
