"""The HTML report of an evaluation: one self-contained file that opens with no network.

Styles are inline, there is no script, and the chart (mean score per override tag, overall and
per case tag) is an inline SVG, so the page references no URL at all and can be attached to a
review or archived as it is. Every text from the run (case ids and tags, replies, errors,
reasons, tool calls with their arguments and results) is redacted of credentials and escaped,
its colons included.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from promptkit.evals._report import CaseToolCall, EvaluationReport, TagSummary
from promptkit.secrets import redact_secrets

# Colour-blind-safe palette (Okabe-Ito), one colour per override tag.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
_CHART_HEIGHT = 180
_BAR_WIDTH = 22
_GROUP_GAP = 26
_LEFT = 40
_TOP = 14

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bad { color: #b00020; }
.good { color: #00695c; }
pre { white-space: pre-wrap; margin: 0; max-width: 48em; }
ul.calls { margin: 0.3em 0; padding-left: 1.2em; font-size: 12px; }
"""


def render_html_report(report: EvaluationReport) -> str:
    """The report as one HTML document."""
    summaries = [report.summary(tag) for tag in report.override_tags]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Evaluation of {_text(report.prompt)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Evaluation of {_text(report.prompt)}</h1>",
        _facts(report),
        "<h2>Mean score per override tag and case tag</h2>",
        score_chart(summaries),
        "<h2>Summary</h2>",
        _summary_table(report, summaries),
        _comparisons(report),
        "<h2>Cases</h2>",
        _case_table(report),
        _invalid_cases(report),
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def score_chart(summaries: Sequence[TagSummary]) -> str:
    """Grouped bars: one group overall and one per case tag, one bar per override tag."""
    groups = ["all", *sorted({tag for s in summaries for tag in s.by_case_tag})]
    group_width = len(summaries) * _BAR_WIDTH + _GROUP_GAP
    width = _LEFT + len(groups) * group_width + 10
    height = _TOP + _CHART_HEIGHT + 60
    shapes = [
        f'<svg width="{width}" height="{height}"'
        f' role="img" aria-label="mean score per override tag">'
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _TOP + _CHART_HEIGHT * (1 - tick)
        shapes.append(
            f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
            f"{tick:g}</text>"
        )
    for index, group in enumerate(groups):
        x0 = _LEFT + index * group_width + _GROUP_GAP / 2
        for position, summary in enumerate(summaries):
            value = summary.mean_score if group == "all" else summary.by_case_tag.get(group)
            colour = _PALETTE[position % len(_PALETTE)]
            x = x0 + position * _BAR_WIDTH
            bar = _CHART_HEIGHT * (value or 0.0)
            label = "n/a" if value is None else f"{value:.2f}"
            shapes.append(
                f'<rect x="{x:.1f}" y="{_TOP + _CHART_HEIGHT - bar:.1f}" width="{_BAR_WIDTH - 3}"'
                f' height="{bar:.1f}" fill="{colour}"><title>{_text(summary.override_tag)}'
                f" / {_text(group)}: {label}</title></rect>"
            )
        centre = x0 + len(summaries) * _BAR_WIDTH / 2
        shapes.append(
            f'<text x="{centre:.1f}" y="{_TOP + _CHART_HEIGHT + 16}" font-size="12"'
            f' text-anchor="middle">{_text(group)}</text>'
        )
    for position, summary in enumerate(summaries):
        x = _LEFT + position * 110
        y = _TOP + _CHART_HEIGHT + 36
        shapes.append(
            f'<rect x="{x}" y="{y}" width="12" height="12"'
            f' fill="{_PALETTE[position % len(_PALETTE)]}"/>'
            f'<text x="{x + 16}" y="{y + 11}" font-size="12">'
            f"{_text(summary.override_tag)}</text>"
        )
    shapes.append("</svg>")
    return "".join(shapes)


def _facts(report: EvaluationReport) -> str:
    rows = [
        ("provider", f"{report.provider} ({redact_secrets(report.model)})"),
        ("dataset", f"{redact_secrets(report.dataset)} (sha256 {report.dataset_hash[:16]}…)"),
        ("cases", str(len(report.case_ids))),
        ("evaluators", ", ".join(map(redact_secrets, report.evaluators)) or "none"),
        ("duration", f"{report.duration_s:.2f} s"),
    ]
    if report.interrupted:
        rows.append(("status", "interrupted: only the finished cases are shown"))
    body = "".join(f"<tr><th>{_text(k)}</th><td>{_text(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _summary_table(report: EvaluationReport, summaries: Sequence[TagSummary]) -> str:
    head = (
        "<tr><th>override tag</th><th>mean score</th><th>finished</th><th>failed</th>"
        "<th>evaluator errors</th><th>not run</th><th>input tokens</th><th>output tokens</th>"
        "<th>cost</th><th>p50 s</th><th>p90 s</th><th>p99 s</th></tr>"
    )
    rows = []
    for s in summaries:
        cells = [
            _number(s.mean_score),
            str(s.finished),
            str(s.failed),
            str(s.evaluator_errors),
            str(s.not_run),
            str(s.input_tokens),
            str(s.output_tokens),
            s.cost_text,
            *(_number(s.latency_s.get(key), 3) for key in ("p50", "p90", "p99")),
        ]
        rows.append(
            f"<tr><th>{_text(s.override_tag)}</th>"
            + "".join(f'<td class="num">{cell}</td>' for cell in cells)
            + "</tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def _comparisons(report: EvaluationReport) -> str:
    if len(report.override_tags) < 2:
        return ""
    baseline = report.override_tags[0]
    parts = [f"<h2>Compared with {_text(baseline)}</h2><ul>"]
    for tag in report.override_tags[1:]:
        comparison = report.compare(baseline, tag)
        delta = comparison.mean_delta
        style = (
            ""
            if delta is None or delta == 0
            else (' class="good"' if delta > 0 else ' class="bad"')
        )
        regressed = ", ".join(_text(d.case_id) for d in comparison.regressed) or "none"
        improved = ", ".join(_text(d.case_id) for d in comparison.improved) or "none"
        parts.append(
            f"<li><b>{_text(tag)}</b>: mean <span{style}>{_signed(delta)}</span>;"
            f" regressed: {regressed}; improved: {improved}</li>"
        )
    parts.append("</ul>")
    return "".join(parts)


def _case_table(report: EvaluationReport) -> str:
    head = (
        "<tr><th>case</th><th>case tags</th>"
        + "".join(f"<th>{_text(tag)}</th>" for tag in report.override_tags)
        + "</tr>"
    )
    rows = []
    for case_id in report.case_ids:
        cells = []
        tags: tuple[str, ...] = ()
        for tag in report.override_tags:
            result = report.result(tag, case_id)
            if result is None:
                cells.append("<td>not run</td>")
                continue
            tags = result.case_tags
            detail = (
                f'<span class="bad">{_text(result.error)}</span>'
                if result.error
                else "<br>".join(
                    f"{_text(e.evaluator)}&#58; "
                    + (f"error {_text(e.error)}" if e.error else _text(e.reason))
                    for e in result.evaluations
                )
            )
            cells.append(
                f"<td><b>{_number(result.score)}</b> <small>{result.latency_s:.2f} s</small>"
                f"<br><small>{detail}</small>{_tool_calls(result.tool_calls)}"
                f"<pre>{_text(result.text or '')}</pre></td>"
            )
        rows.append(
            f"<tr><th>{_text(case_id)}</th><td>{', '.join(map(_text, tags))}</td>"
            f"{''.join(cells)}</tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def _tool_calls(calls: Sequence[CaseToolCall]) -> str:
    """A case's tool calls: each with its arguments, whether it succeeded, and its result."""
    if not calls:
        return ""
    items = "".join(
        ("<li>" if call.success else '<li class="bad">')
        + f"<code>{_text(call.name)}"
        + f"({_text(json.dumps(call.arguments, ensure_ascii=False, sort_keys=True))})</code>"
        + f" {'ok' if call.success else 'FAILED'}&#58; {_text(call.result)}</li>"
        for call in calls
    )
    return f'<ul class="calls">{items}</ul>'


def _invalid_cases(report: EvaluationReport) -> str:
    if not report.invalid_cases:
        return ""
    items = "".join(
        f"<li>{_text(bad.location)} ({_text(bad.id)}): {_text(bad.error)}</li>"
        for bad in report.invalid_cases
    )
    return f'<h2>Cases that did not load</h2><ul class="bad">{items}</ul>'


def _text(value: str) -> str:
    # Redacted before it is escaped: in escaped text a quote or `&` would hide a credential's
    # name or end from the rules. A ':' as a character reference shows the same, but no URL in
    # a model's reply survives as `scheme:` text that a checker could take for a reference.
    return html.escape(redact_secrets(value)).replace(":", "&#58;")


def _number(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"
