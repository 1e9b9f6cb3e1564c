"""The planted credential corpus in case ids, case tags, expected values, replies, tool results
and evaluator errors reaches none of an evaluation's outputs: the HTML report, the `--json`
text, report.json, the execution record, the terminal table, or the spans (content capture on
and off)."""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.cli._eval_table import report_table
from promptkit.evals import (
    Case,
    ExactMatch,
    FunctionEvaluator,
    load_dataset,
    render_html_report,
    report_json_text,
    run_evaluation,
    write_evaluation_outputs,
)
from promptkit.testing import FakeProviderServer, RecordedRequest, Reply, ToolCall

from ..credentials import PLANTED, leaked_values
from .conftest import openai_adapter


@dataclass(frozen=True)
class Ticket:
    number: int


@dataclass(frozen=True)
class NoParams:
    pass


def _read_config(params: NoParams, context: ToolContext) -> ToolResult:
    # The tool's result holds the line of the case that called it (its number is in the call id).
    return ToolResult(message=PLANTED[int(context.call_id.removeprefix("call-"))].line)


PROMPT: Prompt[None] = Prompt(
    ns="tests.evals",
    key="planted",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            params_type=Ticket,
            template="Answer ticket <{{ number }}>.",
            tools=(
                Tool(
                    name="read_config",
                    description="Read the configuration.",
                    params_type=NoParams,
                    handler=_read_config,
                ),
            ),
        ),
    ),
)


def _reply(request: RecordedRequest) -> Reply:
    """Each case's first request is answered with a tool call, the second with its line."""
    body = request.raw_body.decode()
    found = re.search(r"ticket <(\d+)>", body)
    assert found is not None
    number = int(found.group(1))
    if "read_config" in body and ("tool_call_id" in body or "function_call_output" in body):
        return Reply.text(f"Use this: {PLANTED[number].line}")
    return Reply.tool_calls(ToolCall("read_config", {}, call_id=f"call-{number}"))


def _dataset_file(tmp_path: Path) -> Path:
    path = tmp_path / "planted.jsonl"
    lines = [
        json.dumps(
            {
                "id": planted.line,
                "params": {"number": number},
                "expected": f"Use this: {planted.line}",
                "tags": [planted.line],
            }
        )
        for number, planted in enumerate(PLANTED)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _raises_with_the_line(case: Case, response: Any) -> float:
    raise ValueError(f"could not score {case.expected}")


def _span_text(spans: InMemorySpanExporter) -> str:
    parts: list[str] = []
    for span in spans.get_finished_spans():
        parts.append(span.name)
        parts.extend(str(value) for value in (span.attributes or {}).values())
        parts.append(str(span.status.description))
        for event in span.events:
            parts.extend(str(value) for value in (event.attributes or {}).values())
    return "\n".join(parts)


@pytest.mark.parametrize("capture", ["true", "false"])
def test_planted_credentials_reach_no_evaluation_output(
    tmp_path: Path,
    server: FakeProviderServer,
    spans: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
    capture: str,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", capture)
    server.respond_with(_reply)
    dataset = load_dataset(_dataset_file(tmp_path), PROMPT)
    assert len(dataset.cases) == len(PLANTED) and dataset.invalid == ()

    report = run_evaluation(
        PROMPT,
        dataset,
        openai_adapter(server),
        [ExactMatch(), FunctionEvaluator(_raises_with_the_line, "raising")],
        concurrency=4,
    )
    write_evaluation_outputs(report, tmp_path / "run")

    assert report.summary("latest").failed == 0
    assert report.summary("latest").evaluator_errors == len(PLANTED)
    outputs = {
        "--json": report_json_text(report),
        "HTML": render_html_report(report),
        "table": report_table(report),
        **{path.name: path.read_text() for path in (tmp_path / "run").iterdir()},
        "spans": _span_text(spans),
    }
    assert {name: leaked_values(text) for name, text in outputs.items()} == {
        name: [] for name in outputs
    }
