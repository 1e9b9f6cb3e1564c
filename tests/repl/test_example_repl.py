"""The code-review example REPL driven through piped stdin in a fresh process, as a user or a
script drives it: optimize, digest, review, overrides, history, and bad input."""

from __future__ import annotations

import tomllib
from pathlib import Path

from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

from .conftest import OPENAI_KEY, openai_env, run_example

REVIEW = {
    "summary": "A small, tidy package; the CLI ignores its exit status.",
    "issues": [
        {
            "file": "src/demo/cli.py",
            "line": 1,
            "severity": "major",
            "description": "main() always returns 0, so failures look like success.",
        },
        {
            "file": "README.md",
            "line": None,
            "severity": "minor",
            "description": "The README does not say how to install the package.",
        },
    ],
    "next_steps": ["Return a non-zero status on failure.", "Document installation."],
}


def provider_args(server: FakeProviderServer) -> tuple[str, ...]:
    return ("--provider", "openai", "--base-url", server.openai_base_url, "--model", "served-model")


def test_optimize_session_then_digest_reports_the_session_origin(
    repo: Path, state_dir: Path
) -> None:
    completed = run_example(repo, state_dir, "optimize session\ndigest\n")

    assert completed.returncode == 0, completed.stderr
    assert "origin:    session (" in completed.stdout
    assert "freshness: fresh" in completed.stdout
    assert "`make test`" in completed.stdout


def test_optimize_global_then_digest_reports_the_override_origin(
    repo: Path, state_dir: Path
) -> None:
    completed = run_example(repo, state_dir, "optimize session\noptimize global\ndigest\n")

    assert completed.returncode == 0, completed.stderr
    shared_file = repo / "overrides" / "_shared" / "workspace-digest" / "latest.toml"
    assert f"origin:    shared override ({shared_file})" in completed.stdout
    assert "freshness: fresh" in completed.stdout
    stored = tomllib.loads(shared_file.read_text(encoding="utf-8"))
    assert "`make test`" in stored["body"]


def test_optimize_global_writes_under_the_given_tag_and_overrides_dir(
    repo: Path, state_dir: Path, tmp_path: Path
) -> None:
    overrides = tmp_path / "curated"

    completed = run_example(
        repo,
        state_dir,
        "optimize global\ndigest\n",
        "--tag",
        "stable",
        "--overrides-dir",
        str(overrides),
    )

    assert completed.returncode == 0, completed.stderr
    assert (overrides / "_shared" / "workspace-digest" / "stable.toml").is_file()
    assert not (overrides / "examples" / "code-review" / "stable.toml").exists()
    assert not (repo / "overrides").exists()


def test_a_session_digest_is_found_by_the_next_repl(repo: Path, state_dir: Path) -> None:
    first = run_example(repo, state_dir, "optimize session\nquit\n")

    second = run_example(repo, state_dir, "digest\n")

    assert first.returncode == 0, first.stderr
    assert "origin:    session (" in second.stdout


def test_review_against_a_provider_prints_the_parsed_response(
    repo: Path, state_dir: Path, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.json(REVIEW, usage=Usage(input_tokens=900, output_tokens=120)))

    completed = run_example(
        repo, state_dir, "review the CLI\n", *provider_args(server), env=openai_env()
    )

    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "summary: A small, tidy package; the CLI ignores its exit status." in out
    assert "  1. [major] src/demo/cli.py:1: main() always returns 0" in out
    assert "  2. [minor] README.md: The README does not say" in out
    assert "  1. Return a non-zero status on failure." in out
    assert "900 input / 120 output tokens" in out
    (request,) = server.requests
    assert request.sent_api_key(OPENAI_KEY)
    assert "the CLI" in request.body["messages"][0]["content"]


def test_history_lists_executed_prompts_and_tool_calls_with_token_usage(
    repo: Path, state_dir: Path, server: FakeProviderServer
) -> None:
    server.enqueue(
        Reply.tool_calls(
            ToolCall("vfs_read_file", {"path": "/src/demo/cli.py"}),
            usage=Usage(input_tokens=700, output_tokens=30),
        ),
        Reply.json(REVIEW, usage=Usage(input_tokens=800, output_tokens=90)),
    )

    completed = run_example(
        repo, state_dir, "review the CLI\nhistory\n", *provider_args(server), env=openai_env()
    )

    assert completed.returncode == 0, completed.stderr
    history = completed.stdout.split("(openai", 1)[1]
    assert "examples/code-review: openai" in history
    assert "1 tool call, 1500 input / 120 output tokens" in history
    read = 'tool vfs_read_file {"limit": 400, "offset": 0, "path": "/src/demo/cli.py"} ok'
    assert read in history


def test_history_says_so_when_nothing_was_executed(repo: Path, state_dir: Path) -> None:
    completed = run_example(repo, state_dir, "history\n")

    assert completed.stdout == "no prompts executed in this session yet\n"


def test_review_without_a_model_says_how_to_configure_one(repo: Path, state_dir: Path) -> None:
    completed = run_example(repo, state_dir, "review the CLI\ndigest\n")

    assert completed.returncode == 1
    (error,) = completed.stderr.splitlines()
    assert error.startswith("error: `review` needs a model")
    assert "OPENAI_API_KEY" in error
    assert "--base-url" in error
    assert "origin:    placeholder" in completed.stdout


def test_a_provider_error_is_one_line_and_the_loop_goes_on(
    repo: Path, state_dir: Path, server: FakeProviderServer
) -> None:
    server.enqueue(Reply.error(400, "the model does not exist"))

    completed = run_example(
        repo, state_dir, "review the CLI\ndigest\n", *provider_args(server), env=openai_env()
    )

    assert completed.returncode == 1
    # The render before the request also logs that no digest exists yet; that is not an error.
    (error,) = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert "HTTP 400" in error
    assert "the model does not exist" in error
    assert "Traceback" not in completed.stderr
    assert "origin:    placeholder" in completed.stdout


def test_an_unknown_command_gets_help_not_a_traceback(repo: Path, state_dir: Path) -> None:
    completed = run_example(repo, state_dir, "frobnicate now\ndigest\n")

    assert completed.returncode == 1
    assert completed.stdout.startswith("unknown command 'frobnicate'\ncommands:\n")
    for command in (
        "optimize [session|global [force]]",
        "review REQUEST",
        "digest",
        "overrides",
    ):
        assert f"\n  {command} " in completed.stdout
    assert "origin:    placeholder" in completed.stdout
    assert "Traceback" not in completed.stderr


def test_a_bad_optimize_scope_is_refused_with_a_one_line_error(repo: Path, state_dir: Path) -> None:
    completed = run_example(repo, state_dir, "optimize everything\n")

    assert completed.returncode == 1
    assert completed.stderr == (
        "error: optimize takes session, global or global force, got 'everything'\n"
    )


def test_piped_input_gets_no_prompt_string_or_banner(repo: Path, state_dir: Path) -> None:
    completed = run_example(repo, state_dir, "help\n")

    assert completed.returncode == 0
    assert completed.stdout.startswith("commands:\n")
    assert "promptkit>" not in completed.stdout


def test_overrides_lists_the_shared_digest_a_global_optimize_wrote(
    repo: Path, state_dir: Path
) -> None:
    completed = run_example(repo, state_dir, "optimize global\noverrides\n")

    assert completed.returncode == 0, completed.stderr
    listing = completed.stdout.split("overrides for examples/code-review", 1)[1]
    assert "tag latest, shared workspace-digest:" in listing
    assert 'sections."workspace-digest": applies; by optimizer (static)' in listing


def test_a_missing_workspace_is_a_one_line_error(tmp_path: Path, state_dir: Path) -> None:
    completed = run_example(tmp_path / "missing", state_dir, "digest\n")

    assert completed.returncode == 2
    assert "does not exist" in completed.stderr
    assert "Traceback" not in completed.stderr
