"""What an evaluation run leaves in an output directory: `report.json`, `report.html` and the
execution record `manifest.json` (the skill-artifact execution record), each written atomically.

The manifest says `completed`/`success` when every case ran, and `failed`/`failure` with the
reason when the run was interrupted; case failures are results, not a failed run, and are
counted in its metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptkit._durable import write_atomically
from promptkit.adapters import ExecutionRecord, write_manifest
from promptkit.evals._html_report import render_html_report
from promptkit.evals._report import EvaluationReport
from promptkit.secrets import redact_value

REPORT_JSON = "report.json"
REPORT_HTML = "report.html"


def report_json_text(report: EvaluationReport) -> str:
    """The report as indented JSON text (what `--json` prints and `report.json` holds)."""
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def write_evaluation_outputs(report: EvaluationReport, output_dir: str | Path) -> Path:
    """Write the JSON and HTML reports and the manifest into `output_dir`; the manifest's path."""
    folder = Path(output_dir)
    write_atomically(folder / REPORT_JSON, report_json_text(report))
    write_atomically(folder / REPORT_HTML, render_html_report(report))
    error = None
    if report.interrupted:
        error = (
            f"interrupted: {len(report.results)} of"
            f" {len(report.case_ids) * len(report.override_tags)} evaluations finished"
        )
    record = ExecutionRecord(
        status="failed" if error else "completed",
        outcome="failure" if error else "success",
        duration_s=report.duration_s,
        artifacts=(REPORT_JSON, REPORT_HTML),
        metadata=_metadata(report),
        error=error,
    )
    return write_manifest(folder, record)


def _metadata(report: EvaluationReport) -> dict[str, Any]:
    metadata: dict[str, Any] = redact_value(
        {
            "kind": "evaluation",
            "prompt": report.prompt,
            "provider": report.provider,
            "model": report.model,
            "dataset": report.dataset,
            "dataset_hash": report.dataset_hash,
            "override_tags": list(report.override_tags),
            "mean_scores": {tag: report.summary(tag).mean_score for tag in report.override_tags},
            "failed_cases": sum(1 for result in report.results if result.failed),
            "invalid_cases": len(report.invalid_cases),
        }
    )
    return metadata
