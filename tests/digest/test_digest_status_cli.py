"""`promptkit digest status`: origin, age and freshness, read from real stores on disk."""

import argparse
import importlib
import uuid
from pathlib import Path

import pytest

from promptkit.cli import digest as digest_cli
from promptkit.digest import WorkspaceDigestSection, set_workspace_digest
from promptkit.errors import PromptValidationError, WorkspaceError
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor
from promptkit.session import Session, SessionStore

from .conftest import commit_file


def run_status(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="promptkit")
    digest_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["digest", "status", *argv])
    status: int = args.handler(args)
    return status


def store_session_digest(state: Path, workspace: Path, body: str) -> Session:
    session = Session()
    with SessionStore(state).attach(session, workspace):
        set_workspace_digest(session, "workspace-digest", body, workspace=workspace)
    return session


def test_status_reports_the_placeholder(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_status(str(git_repo), "--state-dir", str(tmp_path / "state")) == 0

    out = capsys.readouterr().out
    assert "origin:    placeholder" in out
    assert "freshness: none" in out


def test_status_reports_a_fresh_session_digest(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = store_session_digest(tmp_path / "state", git_repo, "Digest.")

    run_status(str(git_repo), "--state-dir", str(tmp_path / "state"))

    out = capsys.readouterr().out
    assert f"origin:    session ({session.session_id})" in out
    assert "author:    operator" in out
    assert "s ago)" in out
    assert "freshness: fresh" in out


def test_status_reports_a_stale_session_digest_after_a_commit(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_session_digest(tmp_path / "state", git_repo, "Digest.")
    new_head = commit_file(git_repo, "src/app.py", "print('x')\n")

    run_status(str(git_repo), "--state-dir", str(tmp_path / "state"))

    out = capsys.readouterr().out
    assert "freshness: stale (the workspace head_sha and fingerprint changed" in out
    assert f"-> {new_head[:12]}" in out


def test_status_reports_a_shared_override_in_the_workspace_overrides_dir(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    section = WorkspaceDigestSection(session=Session())
    LocalPromptOverridesStore(git_repo / "overrides").set_shared_section(
        section_key=section.key,
        tag="latest",
        body="Shared.",
        expected_hash=section.content_hash,
        source=OverrideAuthor("optimizer", "model-x"),
    )

    run_status(str(git_repo), "--state-dir", str(tmp_path / "state"))

    out = capsys.readouterr().out
    assert "origin:    shared-override (tag latest in" in out
    assert "author:    optimizer:model-x" in out
    assert "freshness: unknown (overrides record no workspace provenance)" in out


def test_status_with_a_prompt_reports_its_own_override(
    git_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = f"digest_status_prompt_{uuid.uuid4().hex}"
    (tmp_path / f"{module}.py").write_text(
        "from promptkit.digest import WorkspaceDigestSection\n"
        "from promptkit.prompt import Prompt\n"
        "from promptkit.session import Session\n"
        "PROMPT = Prompt(ns='demo', key='review',"
        " sections=(WorkspaceDigestSection(session=Session()),))\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    prompt = importlib.import_module(module).PROMPT
    overrides = tmp_path / "custom-overrides"
    LocalPromptOverridesStore(overrides).set_section_override(
        prompt, tag="stable", path="workspace-digest", body="Own."
    )

    run_status(
        str(git_repo),
        "--prompt",
        f"{module}:PROMPT",
        "--overrides-dir",
        str(overrides),
        "--tag",
        "stable",
        "--state-dir",
        str(tmp_path / "state"),
    )

    out = capsys.readouterr().out
    assert "prompt:    demo/review" in out
    assert "origin:    override (tag stable in" in out


def test_status_of_a_prompt_without_a_digest_section_is_a_clear_error(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"digest_status_plain_{uuid.uuid4().hex}"
    (tmp_path / f"{module}.py").write_text(
        "from promptkit.prompt import Prompt, TextSection\n"
        "PROMPT = Prompt(ns='demo', key='plain',"
        " sections=(TextSection(title='Role', key='role', text='Be brief.'),))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    with pytest.raises(PromptValidationError, match="no WorkspaceDigestSection"):
        run_status(
            str(git_repo),
            "--prompt",
            f"{module}:PROMPT",
            "--state-dir",
            str(tmp_path / "state"),
        )


def test_status_of_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        run_status(str(tmp_path / "missing"), "--state-dir", str(tmp_path / "state"))


@pytest.mark.parametrize(
    ("seconds", "text"), [(5, "5s"), (192, "3m 12s"), (7500, "2h 5m"), (356400, "4d 3h")]
)
def test_age_is_described_in_two_units(seconds: int, text: str) -> None:
    from datetime import timedelta

    assert digest_cli.describe_age(timedelta(seconds=seconds)) == text
