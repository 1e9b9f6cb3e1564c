"""A local OpenAI-compatible server named only by OPENAI_BASE_URL: the CLI's REPL sends its
requests there with no real key, says where they go, and asks for the served model's name."""

from pathlib import Path

from promptkit.testing import FakeProviderServer, Reply

from ..conftest import offline_env
from .conftest import run_example
from .test_example_repl import REVIEW


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
