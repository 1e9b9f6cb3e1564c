"""`promptkit optimize` with a small model on a local server, run as a user runs it (a real
process) against a fake server that behaves like llama-cpp-python's: a refused digest, a run
past `--deadline` and Ctrl-C each exit non-zero, store nothing and leave a manifest saying what
happened; `--fallback-static` stores the static digest and says why; `--json` carries the
grounding figures.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptkit.testing import FakeProviderServer, RecordedRequest, Reply, ServerProfile

from ..conftest import offline_env, run_promptkit
from .test_digest_gate import GROUNDED, SCHEMA_BLOB


@pytest.fixture
def local_server() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(profile=ServerProfile.llama_cpp_python()) as server:
        yield server


def _options(server: FakeProviderServer, tmp_path: Path) -> tuple[str, ...]:
    return (
        "--base-url",
        server.openai_base_url,
        "--model",
        "qwen2.5-coder-0.5b-instruct",
        "--state-dir",
        str(tmp_path / "state"),
        "--output-dir",
        str(tmp_path / "run"),
    )


def _manifest(tmp_path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((tmp_path / "run" / "manifest.json").read_text())
    return document


def _sessions(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "state").rglob("sessions/*"))


def test_a_refused_digest_exits_non_zero_stores_nothing_and_leaves_a_manifest(
    local_server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    local_server.enqueue(Reply.text(SCHEMA_BLOB))

    finished = run_promptkit("optimize", str(repo), *_options(local_server, tmp_path), cwd=repo)

    assert finished.returncode == 2
    assert "refused: it is a JSON schema" in finished.stderr
    assert "nothing was stored" in finished.stderr
    assert finished.stdout == ""
    assert _sessions(tmp_path) == []
    assert _manifest(tmp_path)["metadata"]["stopped_by"] == "refusal"


def test_fallback_static_stores_the_static_digest_and_json_says_why(
    local_server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    local_server.enqueue(Reply.text(SCHEMA_BLOB))

    finished = run_promptkit(
        "optimize",
        str(repo),
        *_options(local_server, tmp_path),
        "--fallback-static",
        "--json",
        cwd=repo,
    )

    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    assert "JSON schema" in report["fallback_reason"]
    assert report["grounding"]["paths_named"] == 0
    assert "make test" in report["digest"]
    assert len(_sessions(tmp_path)) == 1


def test_json_reports_the_grounding_of_a_stored_digest(
    local_server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    local_server.enqueue(Reply.json({"digest": GROUNDED}))

    finished = run_promptkit(
        "optimize", str(repo), *_options(local_server, tmp_path), "--json", cwd=repo
    )

    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    assert report["grounding"] == {
        "paths_named": 3,
        "paths_found": 3,
        "commands_named": 3,
        "commands_found": 3,
        "not_found": [],
    }
    assert report["fallback_reason"] is None
    assert "grounding: 3 of 3 paths and 3 of 3 commands" in finished.stderr


def test_a_run_past_the_deadline_exits_non_zero_and_says_so_in_the_manifest(
    local_server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    local_server.enqueue(Reply.delay(10.0, Reply.json({"digest": GROUNDED})))

    finished = run_promptkit(
        "optimize", str(repo), *_options(local_server, tmp_path), "--deadline", "1", cwd=repo
    )

    assert finished.returncode == 2  # the run's failure, not the machine's (74)
    assert "deadline of 1s passed" in finished.stderr
    assert _sessions(tmp_path) == []
    assert _manifest(tmp_path)["metadata"]["stopped_by"] == "deadline"


def test_ctrl_c_while_the_model_thinks_exits_130_and_the_manifest_says_interrupted(
    local_server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    asked, answer = threading.Event(), threading.Event()

    def slow_model(request: RecordedRequest) -> Reply:
        asked.set()
        answer.wait(timeout=60)
        return Reply.json({"digest": GROUNDED})

    local_server.respond_with(slow_model)
    command = [sys.executable, "-m", "promptkit", "optimize", str(repo)]
    process = subprocess.Popen(
        [*command, *_options(local_server, tmp_path)],
        cwd=repo,
        env=offline_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert asked.wait(timeout=60), "the model was never asked"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        answer.set()
        if process.poll() is None:
            process.kill()

    assert process.returncode == 130
    assert "interrupted" in stderr
    manifest = _manifest(tmp_path)
    assert (manifest["status"], manifest["metadata"]["stopped_by"]) == ("failed", "interrupt")
    assert _sessions(tmp_path) == []


def test_without_an_output_dir_the_last_run_is_recorded_in_the_state_folder(
    local_server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    local_server.enqueue(Reply.text(SCHEMA_BLOB))
    options = _options(local_server, tmp_path)[:-2]  # no --output-dir

    finished = run_promptkit("optimize", str(repo), *options, cwd=repo)

    assert finished.returncode == 2
    (manifest,) = (tmp_path / "state").rglob("runs/optimize/manifest.json")
    assert f"run record: {manifest}" in finished.stderr
    assert json.loads(manifest.read_text())["metadata"]["stopped_by"] == "refusal"
