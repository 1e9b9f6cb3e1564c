"""`promptkit digest status`: origin, age and freshness, read from real stores on disk; the
prompt named by `--prompt` in each form a reference can take, and bad references."""

import importlib
import os
import uuid
from pathlib import Path

import pytest

from promptkit.digest import WorkspaceDigestSection, set_workspace_digest
from promptkit.errors import PromptValidationError, WorkspaceError
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor
from promptkit.session import Session, SessionStore

from ..conftest import REPO_ROOT, offline_env, run_promptkit
from .conftest import commit_file, run_digest_cli

DEMO_PROMPTS = """\
from promptkit.digest import WorkspaceDigestSection
from promptkit.prompt import Prompt
from promptkit.session import Session


def build():
    return Prompt(ns="demo", key="review", sections=(WorkspaceDigestSection(session=Session()),))


PROMPT = build()
"""
"""A module with a digest prompt `demo/review`, bound to a session of its own, as a ready Prompt
(`PROMPT`) and as a factory without arguments (`build`)."""


def run_status(*argv: str) -> int:
    return run_digest_cli("status", *argv)


def prompt_module(folder: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """Write `source` as a module of a unique name into `folder`, make it importable, and
    return the name (unique, so no test sees another's module in sys.modules)."""
    module = f"digest_status_prompts_{uuid.uuid4().hex}"
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return module


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


def test_a_session_digest_stays_fresh_when_the_state_folder_is_inside_the_workspace(
    git_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = git_repo / ".promptkit-state"
    store_session_digest(state, git_repo, "Digest.")  # its session files land in the workspace

    run_status(str(git_repo), "--state-dir", str(state))

    assert "freshness: fresh" in capsys.readouterr().out


def test_a_shared_digest_stays_fresh_while_sessions_are_written_inside_the_workspace(
    git_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = git_repo / ".promptkit-state"
    optimized = run_promptkit(
        "optimize",
        ".",
        "--provider",
        "static",
        "--scope",
        "global",
        "--state-dir",
        str(state),
        cwd=git_repo,
    )
    assert optimized.returncode == 0, optimized.stderr
    with SessionStore(state).attach(Session(), git_repo):
        pass

    run_status(str(git_repo), "--state-dir", str(state))

    out = capsys.readouterr().out
    assert "origin:    shared-override" in out
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
    assert "origin:    shared-override of tag 'latest' in" in out
    assert "author:    optimizer:model-x" in out
    assert "freshness: unknown (the override records no workspace provenance)" in out


def test_status_of_a_tag_without_a_digest_reports_the_projects_it_falls_back_to(
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

    run_status(str(git_repo), "--state-dir", str(tmp_path / "state"), "--tag", "candidate")

    out = capsys.readouterr().out
    assert "origin:    shared-override of tag 'latest' (tag 'candidate' has none) in" in out


def test_status_with_a_prompt_reports_its_own_override(
    git_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = prompt_module(tmp_path, monkeypatch, DEMO_PROMPTS)
    monkeypatch.chdir(tmp_path)
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
    assert "origin:    override of tag 'stable' in" in out


def test_status_of_a_prompt_without_a_digest_section_is_a_clear_error(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = prompt_module(
        tmp_path,
        monkeypatch,
        "from promptkit.prompt import Prompt, TextSection\n"
        "PROMPT = Prompt(ns='demo', key='plain',"
        " sections=(TextSection(title='Role', key='role', text='Be brief.'),))\n",
    )

    with pytest.raises(PromptValidationError, match="no WorkspaceDigestSection"):
        run_status(
            str(git_repo),
            "--prompt",
            f"{module}:PROMPT",
            "--state-dir",
            str(tmp_path / "state"),
        )


def test_status_binds_a_factory_of_session_and_workspace_to_the_stored_session(
    git_repo: Path, tmp_path: Path
) -> None:
    reference = "examples.code_reviewer_example:build_review_prompt"
    state = str(tmp_path / "state")
    optimized = run_promptkit(
        "optimize", str(git_repo), "--provider", "static", "--prompt", reference,
        "--state-dir", state, cwd=REPO_ROOT,
    )  # fmt: skip

    result = run_promptkit(
        "digest", "status", str(git_repo), "--prompt", reference, "--state-dir", state,
        cwd=REPO_ROOT,
    )  # fmt: skip

    assert optimized.returncode == 0, optimized.stderr
    assert result.returncode == 0, result.stderr
    assert "prompt:    examples/code-review" in result.stdout
    assert "origin:    session (" in result.stdout


def test_status_binds_a_factory_without_arguments_to_the_stored_session(
    git_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = prompt_module(tmp_path, monkeypatch, DEMO_PROMPTS)
    session = store_session_digest(tmp_path / "state", git_repo, "Digest.")

    run_status(str(git_repo), "--prompt", f"{module}:build", "--state-dir", str(tmp_path / "state"))

    out = capsys.readouterr().out
    assert "prompt:    demo/review" in out
    assert f"origin:    session ({session.session_id})" in out


def test_status_finds_a_prompt_by_entry_point_name(git_repo: Path, tmp_path: Path) -> None:
    dist_info = tmp_path / "site" / "review_app-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: review-app\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[promptkit.prompts]\ncode-review = examples.code_reviewer_example:build_review_prompt\n",
        encoding="utf-8",
    )
    pythonpath = os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")])
    env = {**offline_env(), "PYTHONPATH": pythonpath}

    result = run_promptkit(
        "digest", "status", str(git_repo), "--prompt", "code-review",
        "--state-dir", str(tmp_path / "state"), cwd=REPO_ROOT, env=env,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert "prompt:    examples/code-review" in result.stdout


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_such_module:PROMPT", "cannot import 'no_such_module'"),
        ("promptkit.discovery:MISSING", "has no attribute 'MISSING'"),
        (
            "promptkit.discovery:DEFAULT_PROMPT_REFERENCE",
            "is a str, not a Prompt or a function that returns one",
        ),
        ("unknown-name", "no prompt 'unknown-name' among the promptkit.prompts entry points"),
    ],
)
def test_a_bad_prompt_reference_exits_2_with_a_clear_message(
    git_repo: Path, tmp_path: Path, reference: str, message: str
) -> None:
    result = run_promptkit(
        "digest", "status", str(git_repo), "--prompt", reference,
        "--state-dir", str(tmp_path / "state"), cwd=tmp_path,
    )  # fmt: skip

    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_status_of_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        run_status(str(tmp_path / "missing"), "--state-dir", str(tmp_path / "state"))


@pytest.mark.parametrize(
    ("seconds", "text"), [(5, "5s"), (192, "3m 12s"), (7500, "2h 5m"), (356400, "4d 3h")]
)
def test_age_is_described_in_two_units(seconds: int, text: str) -> None:
    from datetime import timedelta

    from promptkit.repl._report import describe_age

    assert describe_age(timedelta(seconds=seconds)) == text
