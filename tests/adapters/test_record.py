"""The execution record: `manifest.json` (the skill-artifact record format) written for a success
and a failure, with the reply or the raw unparsed output as artifacts.
"""

import json
from pathlib import Path

import pytest
from pydantic import BaseModel
from structlog.testing import capture_logs

from promptkit import MarkdownSection, OutputParseError, Prompt, PromptRenderError
from promptkit.adapters import ExecutionRecord, write_manifest
from promptkit.errors import ProviderServerError
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, Usage


class Topic(BaseModel):
    topic: str


class Summary(BaseModel):
    title: str


PROMPT: Prompt[Summary] = Prompt(
    ns="tests/adapters",
    key="summary",
    name="Summariser",
    sections=(
        MarkdownSection(
            title="Task", key="task", template="Summarise {{ topic }}.", params_type=Topic
        ),
    ),
    output_type=Summary,
)


def _manifest(output_dir: Path) -> dict[str, object]:
    document: dict[str, object] = json.loads((output_dir / "manifest.json").read_text())
    return document


def test_manifest_records_a_success_with_the_response_artifact(
    wire, server: FakeProviderServer, make_adapter, tmp_path: Path
) -> None:
    server.enqueue(Reply.json({"title": "Tides"}, usage=Usage(input_tokens=9, output_tokens=2)))
    output_dir = tmp_path / "run"

    make_adapter().evaluate(PROMPT, Topic(topic="tides"), session=Session(), output_dir=output_dir)

    manifest = _manifest(output_dir)
    assert manifest["status"] == "completed"
    assert manifest["outcome"] == "success"
    assert "error" not in manifest
    assert str(manifest["duration"]).endswith("s")
    assert manifest["artifacts"] == ["response.json"]
    metadata = manifest["metadata"]
    assert isinstance(metadata, dict)
    assert metadata["provider"] == ("anthropic" if wire.name == "messages" else "openai")
    assert (metadata["api"], metadata["model"]) == (wire.name, wire.model)
    assert (metadata["prompt_ns"], metadata["prompt_key"]) == ("tests/adapters", "summary")
    assert {
        key: metadata["usage"][key] for key in ("input_tokens", "output_tokens", "cached_tokens")
    } == {
        "input_tokens": 9,
        "output_tokens": 2,
        "cached_tokens": 0,
    }
    response = json.loads((output_dir / "response.json").read_text())
    assert response["output"] == {"title": "Tides"}
    assert sorted(path.name for path in output_dir.iterdir()) == ["manifest.json", "response.json"]


def test_manifest_records_a_provider_failure_with_its_error(
    server: FakeProviderServer, make_adapter, tmp_path: Path
) -> None:
    server.enqueue(Reply.error(500, "upstream exploded"))

    with pytest.raises(Exception, match="upstream exploded"):
        make_adapter().evaluate(
            PROMPT, Topic(topic="tides"), session=Session(), output_dir=tmp_path
        )

    manifest = _manifest(tmp_path)
    assert (manifest["status"], manifest["outcome"]) == ("failed", "failure")
    assert str(manifest["error"]).startswith("ProviderServerError: ")
    assert "upstream exploded" in str(manifest["error"])
    assert manifest["artifacts"] == []


def test_unwritable_output_dir_leaves_the_evaluations_own_error_to_the_caller(
    server: FakeProviderServer, make_adapter, tmp_path: Path
) -> None:
    server.enqueue(Reply.error(500, "upstream exploded"))
    not_a_directory = tmp_path / "taken"
    not_a_directory.write_text("a file where the output directory should be")

    with capture_logs() as logs, pytest.raises(ProviderServerError, match="upstream exploded"):
        make_adapter().evaluate(
            PROMPT, Topic(topic="tides"), session=Session(), output_dir=not_a_directory
        )

    failed = [log for log in logs if log["event"] == "execution_record_failed"]
    assert [log["output_dir"] for log in failed] == [str(not_a_directory)]


def test_manifest_of_an_unparsable_reply_keeps_the_raw_output(
    server: FakeProviderServer, make_adapter, tmp_path: Path
) -> None:
    server.enqueue(Reply.text("no JSON here"))

    with pytest.raises(OutputParseError):
        make_adapter().evaluate(
            PROMPT, Topic(topic="tides"), session=Session(), output_dir=tmp_path, output_retries=0
        )

    manifest = _manifest(tmp_path)
    assert manifest["outcome"] == "failure"
    assert str(manifest["error"]).startswith("OutputParseError: ")
    assert manifest["artifacts"] == ["raw_output.txt"]
    assert (tmp_path / "raw_output.txt").read_text() == "no JSON here"


def test_manifest_records_a_render_failure_before_any_request(
    server: FakeProviderServer, make_adapter, tmp_path: Path
) -> None:
    with pytest.raises(PromptRenderError):
        make_adapter().evaluate(PROMPT, session=Session(), output_dir=tmp_path)

    manifest = _manifest(tmp_path)
    assert str(manifest["error"]).startswith("PromptRenderError: ")
    metadata = manifest["metadata"]
    assert isinstance(metadata, dict)
    assert (metadata["prompt_key"], metadata["requests"]) == ("summary", 0)
    assert server.request_count == 0


def test_manifest_error_is_redacted_of_credentials(tmp_path: Path) -> None:
    record = ExecutionRecord(
        status="failed",
        outcome="failure",
        duration_s=1.5,
        error="ProviderError: key sk-proj-abcdefghijklmnopqrstuvwxyz0123 was refused",
    )

    write_manifest(tmp_path, record)

    manifest = _manifest(tmp_path)
    assert manifest["duration"] == "1.500s"
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz0123" not in str(manifest["error"])
    assert "[REDACTED:openai-project-key]" in str(manifest["error"])


def test_rewriting_a_manifest_replaces_it_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    write_manifest(tmp_path, ExecutionRecord(status="running", outcome="needs_human", duration_s=0))
    write_manifest(tmp_path, ExecutionRecord(status="completed", outcome="success", duration_s=2))

    assert [path.name for path in tmp_path.iterdir()] == ["manifest.json"]
    assert _manifest(tmp_path)["status"] == "completed"


@pytest.mark.parametrize(
    ("outcome", "error"), [("failure", None), ("success", "boom"), ("needs_human", "boom")]
)
def test_error_is_given_exactly_for_a_failure(outcome: str, error: str | None) -> None:
    with pytest.raises(ValueError, match="exactly when the outcome is 'failure'"):
        ExecutionRecord(status="failed", outcome=outcome, duration_s=0, error=error)  # type: ignore[arg-type]
