"""Command-line conventions every subcommand shares: global options on either side of the
subcommand, one-line usage errors with exit status 2, an example and the exit statuses in every
`--help`, `--overrides-dir` and the positional PATH, `--json` reports and `render --params`.

Most tests call `promptkit.cli.main` in this process; one runs the real `promptkit` command to
show that a bad value reaches the terminal as one line and no traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptkit.cli import main
from promptkit.cli._app import build_parser, every_command

from ..conftest import run_promptkit

PARAMS_PROMPT = """\
from dataclasses import dataclass

from promptkit.prompt import MarkdownSection, Prompt


@dataclass(frozen=True)
class Ticket:
    title: str
    priority: int = 3


TRIAGE = Prompt(
    ns="team",
    key="triage",
    sections=(
        MarkdownSection(
            title="Ticket",
            key="ticket",
            template="{{ title }} (priority {{ priority }})",
            params_type=Ticket,
        ),
    ),
)
"""


@pytest.fixture
def params_prompt(repo: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (repo / "team_prompts.py").write_text(PARAMS_PROMPT, encoding="utf-8")
    monkeypatch.chdir(repo)
    monkeypatch.syspath_prepend(str(repo))
    return "team_prompts:TRIAGE"


def _every_command_words() -> list[list[str]]:
    return [list(words) for words, _ in every_command(build_parser())]


@pytest.mark.parametrize("words", _every_command_words(), ids=lambda words: " ".join(words))
def test_every_help_shows_an_example_and_the_exit_statuses(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*words, "--help"])

    shown = capsys.readouterr().out
    assert exited.value.code == 0
    assert "example:\n  " in shown and "promptkit " in shown.split("example:")[1]
    assert "exit status:" in shown and "130  interrupted" in shown


@pytest.mark.parametrize(
    "argv",
    [
        ["optimize", ".", "--provider", "static", "--exclude", "vendor"],
        ["--log-level", "debug", "render", "repo", "--log-format", "json"],
        ["digest", "status", "--json"],
        ["overrides", "list", "--overrides-dir", "overrides"],
        ["eval", "app.prompts:review", "--dataset", "cases.jsonl"],
    ],
    ids=["optimize", "render", "digest", "overrides", "eval"],
)
def test_a_line_reads_the_same_whether_its_command_is_filled_in_on_demand_or_up_front(
    argv: list[str],
) -> None:
    # `main` fills in only the parser of the command a line names, so the others' imports
    # are not paid.
    filled = build_parser()
    for _ in every_command(filled):
        pass

    assert vars(build_parser().parse_args(argv)) == vars(filled.parse_args(argv))


@pytest.mark.parametrize("place", ["before", "after"])
def test_global_options_are_accepted_before_or_after_the_subcommand(
    place: str, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A render with no digest stored logs `workspace_digest_missing` at warning level.
    options = ["--log-format", "json", "--log-level", "WARNING"]
    command = ["render", str(repo), "--state-dir", str(tmp_path / "state")]
    argv = [*options, *command] if place == "before" else [*command, *options]

    assert main(argv) == 0
    # Beside the log records, render says on stderr where the digest came from.
    lines = capsys.readouterr().err.splitlines()
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert any(record["event"] == "workspace_digest_missing" for record in records)


def test_an_option_after_the_subcommand_wins_over_the_one_before(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state")
    argv = ["--log-level", "error", "render", str(repo), "--state-dir", state]

    assert main(argv) == 0
    assert "workspace_digest_missing" not in capsys.readouterr().err
    assert main([*argv, "--log-level", "warning"]) == 0
    assert "workspace_digest_missing" in capsys.readouterr().err


def test_a_bad_option_value_is_one_line_on_stderr_and_exit_status_2(repo: Path) -> None:
    completed = run_promptkit("digest", "status", ".", "--log-level", "loud", cwd=repo)

    assert completed.returncode == 2
    assert completed.stdout == ""
    (line,) = completed.stderr.splitlines()
    assert line.startswith("promptkit digest status: error: argument --log-level: invalid choice")
    assert "Traceback" not in completed.stderr


def test_render_takes_the_workspace_as_positional_path(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["render", str(repo), "--state-dir", str(tmp_path / "state")]) == 0
    assert "Workspace Digest" in capsys.readouterr().out


def test_render_params_fill_a_prompt_with_required_params(
    params_prompt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = '{"title": "Login fails", "priority": 1}'
    argv = ["render", ".", "--prompt", params_prompt, "--state-dir", str(tmp_path / "s")]

    assert main([*argv, "--params", params]) == 0
    assert "Login fails (priority 1)" in capsys.readouterr().out


def test_render_params_are_read_from_a_file_keyed_by_type_name(
    params_prompt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params_file = tmp_path / "ticket.json"
    params_file.write_text('{"Ticket": {"title": "Crash on save"}}', encoding="utf-8")
    argv = ["render", ".", "--prompt", params_prompt, "--state-dir", str(tmp_path / "s")]

    assert main([*argv, "--params", f"@{params_file}"]) == 0
    assert "Crash on save (priority 3)" in capsys.readouterr().out


def test_render_params_that_do_not_validate_are_one_error_line(
    params_prompt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["render", ".", "--prompt", params_prompt, "--state-dir", str(tmp_path / "s")]

    assert main([*argv, "--params", '{"priority": "high"}']) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("promptkit: error: prompt team/triage: params Ticket: title:")


def test_render_params_that_are_not_json_are_a_usage_error(
    params_prompt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["render", ".", "--prompt", params_prompt, "--params", "{title: 1}"])

    assert exited.value.code == 2
    assert "argument --params: not valid JSON (line 1 column 2" in capsys.readouterr().err


def test_digest_status_json_reports_where_the_digest_comes_from(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state")

    assert main(["digest", "status", str(repo), "--state-dir", state, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["origin"] == "placeholder"
    assert (status["session_id"], status["updated_at"], status["is_stale"]) == (None, None, None)


def test_optimize_json_reports_the_digest_and_where_it_was_stored(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    argv = ["optimize", str(repo), "--provider", "static", "--state-dir", str(state), "--json"]

    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert "make test" in report["digest"]
    assert report["scope"] == "session"
    (stored_in,) = report["stored_in"]
    assert Path(stored_in).is_dir() and Path(stored_in).is_relative_to(state)


def test_overrides_list_json_names_each_file_and_reports_an_invalid_one(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = repo / "store"
    (store / "team" / "triage").mkdir(parents=True)
    (store / "team" / "triage" / "latest.toml").write_text("not = [toml", encoding="utf-8")

    assert main(["overrides", "list", "--overrides-dir", str(store), "--json"]) == 1
    listing = json.loads(capsys.readouterr().out)
    (entry,) = listing["files"]
    assert entry["kind"] == "invalid"
    assert "latest.toml" in entry["problem"]


def test_overrides_show_json_for_a_prompt_without_overrides_says_the_file_does_not_exist(
    params_prompt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["overrides", "show", "--overrides-dir", "store", "--prompt", params_prompt]

    assert main([*argv, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["exists"], shown["prompt"], shown["entries"]) == (False, "team/triage", [])


def test_the_earlier_root_option_still_names_the_overrides_folder(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["overrides", "list", "--root", str(repo / "nothing-here")]) == 0
    assert "no override files under" in capsys.readouterr().out


def test_overrides_check_json_lists_each_problem_with_its_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = repo / "store"
    (store / "team" / "triage").mkdir(parents=True)
    (store / "team" / "triage" / "latest.toml").write_text("not = [toml", encoding="utf-8")

    assert main(["overrides", "check", "--overrides-dir", str(store), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    (problem,) = report["problems"]
    assert problem["file"].endswith("latest.toml")
    assert report["files"] == 1
