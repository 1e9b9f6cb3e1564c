"""`promptkit eval` and `promptkit overrides promote`, run as a user runs them: a real
subprocess, a prompt module and dataset in a folder, and a reply script for `--provider fake`."""

import json
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from promptkit.overrides import LocalPromptOverridesStore

from ..conftest import offline_env, run_promptkit, write_files
from .conftest import sigint_as_from_a_terminal

PROMPT_MODULE = """
from dataclasses import dataclass

from promptkit import MarkdownSection, Prompt, TextSection


@dataclass(frozen=True)
class Country:
    name: str


PROMPT = Prompt(
    ns="demo",
    key="capital",
    sections=(
        TextSection(title="Role", key="role", text="You answer geography questions."),
        MarkdownSection(
            title="Question",
            key="question",
            params_type=Country,
            template="What is the capital of {{ name }}?",
        ),
    ),
)
"""

DATASET = (
    '{"id": "fr", "params": {"name": "France"}, "expected": "Paris", "tags": ["europe"]}\n'
    '{"id": "jp", "params": {"name": "Japan"}, "expected": "Tokyo", "tags": ["asia"]}\n'
)

# The candidate's wording ("one word") fixes France and breaks nothing.
IMPROVING = """\
rules:
  - when: ["one word", "France"]
    text: Paris
  - when: France
    text: Paris is the capital.
  - when: Japan
    text: Tokyo
"""

# The candidate's wording breaks Japan.
REGRESSING = """\
rules:
  - when: ["one word", "Japan"]
    text: Kyoto
  - when: France
    text: Paris
  - when: Japan
    text: Tokyo
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_files(
        tmp_path,
        {
            "capitals.py": PROMPT_MODULE,
            "evals/capital.jsonl": DATASET,
            "improving.yaml": IMPROVING,
            "regressing.yaml": REGRESSING,
        },
    )
    # The candidate override is written through the library, as `overrides set` would.
    namespace: dict[str, Any] = {}
    exec(compile(PROMPT_MODULE, "capitals.py", "exec"), namespace)
    LocalPromptOverridesStore(tmp_path / "overrides").set_section_override(
        namespace["PROMPT"], tag="candidate", path="role", body="Answer in one word."
    )
    return tmp_path


def test_eval_compares_tags_in_a_table(project: Path):
    ran = run_promptkit(
        "eval",
        "capitals:PROMPT",
        "--provider",
        "fake",
        "--script",
        "improving.yaml",
        "--tag",
        "latest",
        "--tag",
        "candidate",
        cwd=project,
    )

    assert ran.returncode == 0, ran.stderr
    assert "candidate vs latest: mean +0.500" in ran.stdout
    assert "improved: fr" in ran.stdout
    assert ran.stdout.splitlines()[1].split() == ["fr", "europe", "0.00", "1.00", "+1.00"]
    assert "\r" not in ran.stderr  # no progress bar when stderr is not a terminal


def test_eval_counts_calls_without_a_price_instead_of_adding_zero(project: Path):
    ran = run_promptkit(
        "eval", "capitals:PROMPT", "--provider", "fake", "--script", "improving.yaml", cwd=project
    )

    assert ran.returncode == 0, ran.stderr
    [cost] = [line for line in ran.stdout.splitlines() if line.startswith("cost ")]
    assert cost.split(None, 1)[1] == "2 unpriced"


def test_eval_json_and_output_dir_write_the_report_and_execution_record(project: Path):
    ran = run_promptkit(
        "eval",
        "capitals:PROMPT",
        "--dataset",
        "evals/capital.jsonl",
        "--provider",
        "fake",
        "--script",
        "improving.yaml",
        "--json",
        "--output-dir",
        "run",
        cwd=project,
    )

    assert ran.returncode == 0, ran.stderr
    document = json.loads(ran.stdout)
    assert document["summaries"][0]["mean_score"] == 0.5
    manifest = json.loads((project / "run" / "manifest.json").read_text())
    assert (manifest["status"], manifest["outcome"]) == ("completed", "success")
    assert manifest["metadata"]["model"] == "fake-model"
    assert json.loads((project / "run" / "report.json").read_text()) == document
    assert (project / "run" / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_eval_with_a_bad_case_reports_it_and_exits_one(project: Path):
    (project / "evals" / "capital.jsonl").write_text(
        DATASET + '{"id": "x", "params": {"name": 3}}\n'
    )

    ran = run_promptkit(
        "eval",
        "capitals:PROMPT",
        "--provider",
        "fake",
        "--script",
        "improving.yaml",
        cwd=project,
    )

    assert ran.returncode == 1
    assert "evals/capital.jsonl line 3: case x did not load: params Country" in ran.stdout
    assert "mean score        0.50" in ran.stdout


def test_eval_fake_provider_without_script_says_what_to_pass(project: Path):
    ran = run_promptkit("eval", "capitals:PROMPT", "--provider", "fake", cwd=project)

    assert ran.returncode == 2
    assert "--provider fake needs --script FILE" in ran.stderr


# The first case is answered at once; the second waits until Ctrl-C, so the run is always
# still going when the signal arrives, however slowly the test reads the progress output.
FIRST_CASE_ONLY = """\
rules:
  - when: Land0
    text: x
default: {text: x, delay: 600}
"""


def _interrupted_eval(project: Path, cases: int, waited_for: str, *options: str):
    """`promptkit eval` on `cases` cases, sent one SIGINT once `waited_for` is on its stderr
    (read without sleeping); its exit status, stdout and stderr."""
    lines = "".join(
        f'{{"id": "c{i}", "params": {{"name": "Land{i}"}}, "expected": "x"}}\n'
        for i in range(cases)
    )
    write_files(project, {"evals/many.jsonl": lines})
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "promptkit",
            "--log-level",
            "info",
            "eval",
            "capitals:PROMPT",
            "--dataset",
            "evals/many.jsonl",
            "--provider",
            "fake",
            "--concurrency",
            "1",
            *options,
        ],
        cwd=project,
        env=offline_env() | {"PYTHONPATH": str(project)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if waited_for in line:
            break
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout, stderr


def test_ctrl_c_stops_the_run_and_reports_what_finished(project: Path):
    write_files(project, {"slow.yaml": FIRST_CASE_ONLY})

    status, stdout, stderr = _interrupted_eval(
        project, 3, "evaluation_case_finished", "--script", "slow.yaml", "--output-dir", "run"
    )

    assert status == 130, stderr
    assert "interrupted: 1 of 3 evaluations finished" in stdout
    assert "not run" in stdout
    manifest = json.loads((project / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert manifest["error"].startswith("interrupted: ")
    assert "Traceback" not in stderr


BLOCKING_EVALUATOR = """
import sys
import threading


def blocking(case, response):
    if case.id == "c1":
        print("evaluator blocking", file=sys.stderr, flush=True)
        threading.Event().wait()
    return 1.0
"""


def test_one_ctrl_c_stops_a_run_held_by_a_blocking_evaluator(project: Path):
    write_files(
        project, {"answer.yaml": "default: {text: x}\n", "slow_eval.py": BLOCKING_EVALUATOR}
    )

    status, stdout, stderr = _interrupted_eval(
        project,
        2,
        "evaluator blocking",
        "--script",
        "answer.yaml",
        "--evaluator",
        "slow_eval:blocking",
    )

    assert status == 130, stderr
    assert "interrupted: 1 of 2 evaluations finished" in stdout
    assert "Traceback" not in stderr


@pytest.mark.parametrize("deadline", ["nan", "-1", "0", "inf", "soon"])
def test_a_deadline_that_is_not_a_positive_finite_time_is_a_usage_error(
    project: Path, deadline: str
):
    ran = run_promptkit(
        "eval",
        "capitals:PROMPT",
        "--provider",
        "fake",
        "--script",
        "improving.yaml",
        "--deadline",
        deadline,
        cwd=project,
    )

    assert ran.returncode == 2
    assert "argument --deadline: expected a" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_promote_refuses_a_regression_and_names_the_case(project: Path):
    ran = run_promptkit(
        "overrides",
        "promote",
        "capitals:PROMPT",
        "--from",
        "candidate",
        "--to",
        "latest",
        "--dataset",
        "evals/capital.jsonl",
        "--min-score",
        "0.5",
        "--provider",
        "fake",
        "--script",
        "regressing.yaml",
        cwd=project,
    )

    assert ran.returncode == 1
    assert "regressed cases: jp (1.00 -> 0.00)" in ran.stderr
    assert not (project / "overrides" / "demo" / "capital" / "latest.toml").exists()


def _promote(project: Path) -> subprocess.CompletedProcess[str]:
    return run_promptkit(
        "overrides",
        "promote",
        "capitals:PROMPT",
        "--from",
        "candidate",
        "--to",
        "latest",
        "--dataset",
        "evals/capital.jsonl",
        "--min-score",
        "0.9",
        "--provider",
        "fake",
        "--script",
        "improving.yaml",
        cwd=project,
    )


def _check(project: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return run_promptkit("overrides", "check", "--prompt", "capitals:PROMPT", *options, cwd=project)


def test_promote_accepts_an_improvement_and_writes_evidence(project: Path):
    ran = _promote(project)

    assert ran.returncode == 0, ran.stderr
    folder = project / "overrides" / "demo" / "capital"
    promoted = tomllib.loads((folder / "latest.toml").read_text())
    assert "one word" in promoted["sections"]["role"]["body"]
    assert promoted["promotion"]["scores"] == {"candidate": 1.0, "latest": 0.5}
    assert promoted["promotion"]["dataset_file"] == "../evals/capital.jsonl"
    checked = _check(project, "--evidence", "error")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_check_reports_a_hand_edit_after_promotion_as_a_warning_or_an_error(project: Path):
    assert _promote(project).returncode == 0
    latest = project / "overrides" / "demo" / "capital" / "latest.toml"
    latest.write_text(latest.read_text().replace("Answer in one word.", "Answer at length."))

    warned = _check(project)
    failed = _check(project, "--evidence", "error")

    assert warned.returncode == 0, warned.stdout
    assert "warning: " in warned.stdout
    assert "section role edited since it was promoted from candidate" in warned.stdout
    assert failed.returncode == 1
    assert "section role edited since it was promoted from candidate" in failed.stdout


def test_check_reports_evidence_edited_after_promotion(project: Path):
    assert _promote(project).returncode == 0
    latest = project / "overrides" / "demo" / "capital" / "latest.toml"
    latest.write_text(latest.read_text().replace("latest = 0.5", "latest = 0.1"))

    checked = _check(project, "--evidence", "error", "--json")

    assert checked.returncode == 1
    [problem] = json.loads(checked.stdout)["problems"]
    assert problem["kind"] == "evidence"
    assert "evidence_sha256 no longer matches" in problem["message"]
    assert problem["line"] == latest.read_text().splitlines().index("[promotion]") + 1


def test_check_reports_a_dataset_changed_after_promotion(project: Path):
    assert _promote(project).returncode == 0
    dataset = project / "evals" / "capital.jsonl"
    dataset.write_text(dataset.read_text().replace("Tokyo", "Kyoto"))

    checked = _check(project, "--evidence", "error")

    assert checked.returncode == 1
    assert "capital.jsonl changed since the promotion was evaluated on it" in checked.stdout


def test_eval_with_an_llm_judge_and_an_html_report(project: Path):
    write_files(
        project,
        {
            "judged.yaml": (
                "rules:\n"
                '  - when: "You grade one reply"\n'
                "    json: {verdict: pass, score: 0.75, reason: names the city}\n"
                "default: {text: Paris}\n"
            )
        },
    )

    ran = run_promptkit(
        "eval",
        "capitals:PROMPT",
        "--provider",
        "fake",
        "--script",
        "judged.yaml",
        "--evaluator",
        "judge:Names the capital city.",
        "--json",
        "--html",
        "report.html",
        cwd=project,
    )

    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)["results"][0]
    assert result["evaluations"] == [
        {"evaluator": "judge", "score": 0.75, "reason": "pass: names the city", "error": None}
    ]
    assert "<svg" in (project / "report.html").read_text()
