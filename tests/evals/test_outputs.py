"""What a run leaves behind: a self-contained HTML report, report.json and manifest.json."""

import json
import re

from promptkit.evals import (
    Case,
    CaseResult,
    Dataset,
    EvaluationReport,
    EvaluatorResult,
    render_html_report,
    write_evaluation_outputs,
)

# A scheme anywhere, or any element or CSS that would make a browser fetch something.
EXTERNAL_REFERENCE = re.compile(
    r"(?i)(https?:|ftp:|url\(|@import|\ssrc=|\shref=|<link|<img|<iframe)"
)


def report(*, interrupted: bool = False) -> EvaluationReport:
    results = [
        CaseResult(
            "fr",
            "latest",
            ("europe",),
            (EvaluatorResult("exact", 0.0, "text is <b>Paris</b> & co"),),
            text="<script>alert(1)</script> see https://example.com",
            input_tokens=10,
            output_tokens=5,
        ),
        CaseResult("fr", "candidate", ("europe",), (EvaluatorResult("exact", 1.0, "equal"),)),
        CaseResult("jp", "latest", ("asia",), error="ProviderServerError: 503 from provider"),
    ]
    if not interrupted:
        results.append(CaseResult("jp", "candidate", ("asia",), (EvaluatorResult("exact", 1.0),)))
    return EvaluationReport(
        prompt="tests.evals/capital",
        provider="openai",
        model="gpt-4.1-mini",
        dataset="capital",
        dataset_hash="ab" * 32,
        override_tags=("latest", "candidate"),
        case_ids=("fr", "jp"),
        results=tuple(results),
        evaluators=("exact",),
        interrupted=interrupted,
        duration_s=1.25,
    )


def test_html_report_is_one_file_that_references_no_external_url():
    page = render_html_report(report())

    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page
    assert EXTERNAL_REFERENCE.search(page) is None
    assert "<script>" not in page


def test_html_report_charts_each_override_tag_overall_and_per_case_tag():
    page = render_html_report(report())

    for label in ("latest / all: 0.00", "candidate / all: 1.00", "candidate / asia: 1.00"):
        assert f"<title>{label}</title>" in page


def test_output_dir_gets_reports_and_a_completed_manifest(tmp_path):
    manifest_path = write_evaluation_outputs(report(), tmp_path / "run")

    manifest = json.loads(manifest_path.read_text())
    assert manifest["status"] == "completed"
    assert manifest["outcome"] == "success"
    assert manifest["artifacts"] == ["report.json", "report.html"]
    assert manifest["metadata"]["mean_scores"] == {"latest": 0.0, "candidate": 1.0}
    assert manifest["metadata"]["failed_cases"] == 1
    document = json.loads((tmp_path / "run" / "report.json").read_text())
    assert document["summaries"][0]["failed"] == 1
    assert (tmp_path / "run" / "report.html").is_file()


def test_interrupted_run_is_recorded_as_failed_with_what_finished(tmp_path):
    manifest = json.loads(write_evaluation_outputs(report(interrupted=True), tmp_path).read_text())

    assert (manifest["status"], manifest["outcome"]) == ("failed", "failure")
    assert manifest["error"] == "interrupted: 3 of 4 evaluations finished"


def test_dataset_built_in_code_reports_no_invalid_cases():
    assert Dataset("d", (Case("a"),)).invalid == ()
