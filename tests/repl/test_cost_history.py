"""The REPL's `history` shows what each answer cost and the session's total."""

from pathlib import Path

from promptkit.testing import FakeProviderServer, Reply, Usage

from .conftest import openai_env, run_example
from .test_example_repl import REVIEW


def test_history_shows_each_answers_cost_and_the_session_total(
    repo: Path, state_dir: Path, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.json(REVIEW, usage=Usage(input_tokens=900, output_tokens=120)))
    provider = ("--provider", "openai", "--base-url", server.openai_base_url)

    completed = run_example(
        repo,
        state_dir,
        "review the CLI\nhistory\n",
        *provider,
        *("--model", "gpt-4.1-mini"),
        env=openai_env(),
    )

    assert completed.returncode == 0, completed.stderr
    # 900 input tokens at $0.40 and 120 output tokens at $1.60 per million.
    assert "900 input / 120 output tokens, $0.000552" in completed.stdout
    assert "total: 900 input / 120 output tokens, $0.000552" in completed.stdout
