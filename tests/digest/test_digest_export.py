"""`promptkit digest export`: the stored digest in a marked block of AGENTS.md or CLAUDE.md,
leaving what a person wrote around it alone; `--check` for CI."""

from pathlib import Path

import pytest

from promptkit.digest import set_workspace_digest
from promptkit.digest._export import BLOCK_BEGIN, BLOCK_END, with_digest_block
from promptkit.errors import WorkspaceError
from promptkit.session import Session, SessionStore

from .conftest import run_digest_cli

HAND_WRITTEN_TOP = "# Notes for agents\n\nRun `make test` before pushing.\n"
HAND_WRITTEN_BOTTOM = "\n## Style\n\nOne concept per module.\n"


def run_export(*argv: str) -> int:
    return run_digest_cli("export", *argv)


def store_digest(state: Path, workspace: Path, body: str) -> None:
    session = Session()
    with SessionStore(state).attach(session, workspace):
        set_workspace_digest(session, "workspace-digest", body, workspace=workspace)


def test_hand_written_text_survives_two_exports(git_repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    agents = git_repo / "AGENTS.md"
    agents.write_text(HAND_WRITTEN_TOP, encoding="utf-8")
    store_digest(state, git_repo, "### Commands\n- Test: `make test`")
    assert run_export(str(git_repo), "--state-dir", str(state)) == 0
    with agents.open("a", encoding="utf-8") as handle:
        handle.write(HAND_WRITTEN_BOTTOM)
    store_digest(state, git_repo, "### Commands\n- Test: `pytest`")

    assert run_export(str(git_repo), "--state-dir", str(state)) == 0

    text = agents.read_text(encoding="utf-8")
    assert text.startswith(HAND_WRITTEN_TOP)
    assert text.endswith(HAND_WRITTEN_BOTTOM)
    assert text.count(BLOCK_BEGIN) == 1
    assert "- Test: `pytest`" in text
    assert "- Test: `make test`" not in text.split(BLOCK_BEGIN)[1]


def test_check_fails_after_the_digest_changes(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    store_digest(state, git_repo, "First digest.")
    run_export(str(git_repo), "--state-dir", str(state))
    assert run_export(str(git_repo), "--state-dir", str(state), "--check") == 0
    before = (git_repo / "AGENTS.md").read_text(encoding="utf-8")
    store_digest(state, git_repo, "Second digest.")

    assert run_export(str(git_repo), "--state-dir", str(state), "--check") == 1

    assert "out of date" in capsys.readouterr().err
    assert (git_repo / "AGENTS.md").read_text(encoding="utf-8") == before


def test_claude_md_format_writes_claude_md(git_repo: Path, tmp_path: Path) -> None:
    store_digest(tmp_path / "state", git_repo, "Digest body.")

    run_export(str(git_repo), "--state-dir", str(tmp_path / "state"), "--format", "claude-md")

    assert "Digest body." in (git_repo / "CLAUDE.md").read_text(encoding="utf-8")
    assert not (git_repo / "AGENTS.md").exists()


def test_export_without_a_stored_digest_exits_2_and_writes_nothing(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_export(str(git_repo), "--state-dir", str(tmp_path / "state")) == 2

    assert "run `promptkit optimize` first" in capsys.readouterr().err
    assert not (git_repo / "AGENTS.md").exists()


def test_unbalanced_markers_are_refused_rather_than_guessed() -> None:
    with pytest.raises(WorkspaceError, match="unbalanced"):
        with_digest_block(f"mine\n{BLOCK_BEGIN}\nhalf a block\n", "Digest.")


def test_a_symlinked_agent_file_leaving_the_workspace_is_not_written(
    git_repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("theirs\n", encoding="utf-8")
    (git_repo / "AGENTS.md").symlink_to(outside)
    store_digest(tmp_path / "state", git_repo, "Digest.")

    with pytest.raises(WorkspaceError, match="outside the workspace"):
        run_export(str(git_repo), "--state-dir", str(tmp_path / "state"))

    assert outside.read_text(encoding="utf-8") == "theirs\n"


def test_block_is_written_between_its_markers() -> None:
    text = with_digest_block(None, "Body.")

    assert text.startswith(BLOCK_BEGIN) and text.rstrip().endswith(BLOCK_END)
