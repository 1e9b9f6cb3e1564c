"""A local OpenAI-compatible server named only by OPENAI_BASE_URL: the CLI's REPL sends its
requests there with no real key, says where they go, and asks for the served model's name."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptkit.testing import FakeProviderServer, Reply, ServerProfile

from ..conftest import offline_env, run_promptkit
from ..optimize.test_digest_gate import GROUNDED, SCHEMA_BLOB
from .conftest import run_example
from .test_example_repl import REVIEW


@pytest.fixture
def local_server() -> Iterator[FakeProviderServer]:
    """A fake server that behaves like llama-cpp-python's."""
    with FakeProviderServer(profile=ServerProfile.llama_cpp_python()) as server:
        yield server


def local_env(server: FakeProviderServer) -> dict[str, str]:
    env = offline_env()
    env["OPENAI_BASE_URL"] = server.openai_base_url
    return env


def test_cli_with_only_openai_base_url_set_sends_its_requests_there(
    repo: Path, state_dir: Path, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.json(REVIEW))

    completed = run_example(
        repo, state_dir, "review the CLI\n", "--model", "served-model", env=local_env(server)
    )

    assert completed.returncode == 0, completed.stderr
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "served-model"
    assert request.sent_api_key("not-needed")


def test_cli_api_option_picks_the_responses_api_at_a_base_url(
    repo: Path, state_dir: Path, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.json(REVIEW))

    completed = run_example(
        repo,
        state_dir,
        "review the CLI\n",
        *("--model", "served-model", "--api", "responses"),
        env=local_env(server),
    )

    assert completed.returncode == 0, completed.stderr
    assert [request.path for request in server.requests] == ["/v1/responses"]


def test_custom_base_url_without_a_model_is_an_error_saying_to_name_it(
    repo: Path, state_dir: Path, server: FakeProviderServer
) -> None:
    completed = run_example(repo, state_dir, "review the CLI\n", env=local_env(server))

    assert completed.returncode != 0
    assert "name the served model with --model" in completed.stderr
    assert server.request_count == 0


def _repl_optimize(
    server: FakeProviderServer, repo: Path, state_dir: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    return run_promptkit(
        "repl",
        str(repo),
        *("--base-url", server.openai_base_url, "--model", "qwen2.5-coder-0.5b-instruct"),
        *("--state-dir", str(state_dir), *options),
        cwd=repo,
        stdin="optimize\ndigest\n",
    )


def test_the_repls_optimize_refuses_a_digest_the_gate_refuses(
    local_server: FakeProviderServer, repo: Path, state_dir: Path
) -> None:
    local_server.enqueue(Reply.text(SCHEMA_BLOB))

    finished = _repl_optimize(local_server, repo, state_dir)

    assert finished.returncode == 1
    assert "refused: it is a JSON schema" in finished.stderr
    assert "placeholder (no digest yet" in finished.stdout


def test_the_repls_optimize_stores_the_static_digest_with_fallback_static(
    local_server: FakeProviderServer, repo: Path, state_dir: Path
) -> None:
    local_server.enqueue(Reply.text(SCHEMA_BLOB))

    finished = _repl_optimize(local_server, repo, state_dir, "--fallback-static")

    assert finished.returncode == 0, finished.stderr
    assert "stored the 'workspace-digest' digest" in finished.stdout
    assert "make test" in finished.stdout


def test_the_repls_optimize_stops_at_its_deadline(
    local_server: FakeProviderServer, repo: Path, state_dir: Path
) -> None:
    local_server.enqueue(Reply.delay(10.0, Reply.json({"digest": GROUNDED})))

    finished = _repl_optimize(local_server, repo, state_dir, "--deadline", "1")

    assert finished.returncode == 1
    assert "deadline of 1s passed" in finished.stderr
    assert "placeholder (no digest yet" in finished.stdout
