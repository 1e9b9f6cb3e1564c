"""GLOBAL digests as reviewed, committed files: written once, with the workspace's provenance,
never over an operator's digest unless told to, and shadowing reported. Offline (static)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from promptkit.cli import _digest as digest_cli
from promptkit.digest import resolve_workspace_digest, set_workspace_digest
from promptkit.errors import OptimizationError
from promptkit.optimize import (
    OperatorOverrideError,
    OptimizationScope,
    StaticDigestWriter,
    choose_digest_writer,
    optimize_workspace_digest,
)
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor, Prompt
from promptkit.repl import ReplSetup, WorkspaceRepl
from promptkit.session import Session, SessionStore

from ..conftest import git
from .conftest import make_prompt

CURATED = "Curated by a person: run `make test` before pushing."


def _optimize_globally(
    repo: Path, session: Session | None = None, *, overwrite_operator: bool = False
) -> Prompt[object]:
    session = session or Session()
    prompt = make_prompt(session, repo)
    optimize_workspace_digest(
        StaticDigestWriter(),
        prompt,
        store_scope=OptimizationScope.GLOBAL,
        overrides_store=LocalPromptOverridesStore(repo / "overrides"),
        overrides_tag="latest",
        session=session,
        overwrite_operator=overwrite_operator,
    )
    return prompt


def _shared_file(repo: Path) -> Path:
    return LocalPromptOverridesStore(repo / "overrides").shared_file("workspace-digest")


def _curate(repo: Path) -> None:
    section = make_prompt(Session(), repo).section_at(("workspace-digest",))
    assert section is not None
    LocalPromptOverridesStore(repo / "overrides").set_shared_section(
        section_key="workspace-digest",
        tag="latest",
        body=CURATED,
        expected_hash=section.content_hash,
        source=OverrideAuthor("operator"),
    )


def _status(repo: Path, state: Path, capsys: pytest.CaptureFixture[str]) -> str:
    parser = argparse.ArgumentParser(prog="promptkit digest")
    digest_cli.register(parser)
    args = parser.parse_args(["status", str(repo), "--state-dir", str(state)])
    assert args.handler(args) == 0
    return capsys.readouterr().out


def test_global_over_an_operator_digest_is_refused_without_force(repo: Path) -> None:
    _curate(repo)
    before = _shared_file(repo).read_text()

    with pytest.raises(OperatorOverrideError, match="an operator wrote") as refused:
        _optimize_globally(repo)

    assert isinstance(refused.value, OptimizationError)
    assert refused.value.location == str(_shared_file(repo))
    assert _shared_file(repo).read_text() == before


def test_global_over_an_operator_digest_replaces_it_when_told_to(repo: Path) -> None:
    _curate(repo)

    _optimize_globally(repo, overwrite_operator=True)

    assert CURATED not in _shared_file(repo).read_text()
    assert 'source = "optimizer"' in _shared_file(repo).read_text()


def test_a_generated_digest_edited_by_hand_is_protected_as_the_operators(repo: Path) -> None:
    _optimize_globally(repo)
    file = _shared_file(repo)
    file.write_text(file.read_text().replace("## ", "## Reviewed: ", 1), encoding="utf-8")

    with pytest.raises(OperatorOverrideError):
        _optimize_globally(repo)


def test_the_git_diff_of_a_global_optimize_holds_the_digest_text_once(repo: Path) -> None:
    session = Session()
    prompt = make_prompt(session, repo)
    LocalPromptOverridesStore(repo / "overrides").set_section_override(
        prompt, path="workspace-digest", body="An older digest of this prompt only.",
        source=OverrideAuthor("optimizer", "older-model"),
    )  # fmt: skip
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "older digest")

    _optimize_globally(repo, session)

    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached")
    added = [line[1:] for line in diff.splitlines() if line.startswith("+")]
    digest_lines = [line for line in added if line.startswith("- ")]
    assert digest_lines
    assert all(added.count(line) == 1 for line in digest_lines)
    assert "An older digest" not in (repo / "overrides" / "tests" / "app" / "review" /
                                     "latest.toml").read_text()  # fmt: skip


def test_a_global_digest_records_the_workspace_provenance(repo: Path) -> None:
    _optimize_globally(repo)

    shared = LocalPromptOverridesStore(repo / "overrides").read_shared_section(
        "workspace-digest", "latest"
    )

    assert shared is not None and shared.provenance is not None
    assert shared.provenance["head_sha"] == git(repo, "rev-parse", "HEAD")
    assert {"strategy", "source", "created_at", "has_history", "is_shallow"} <= set(
        shared.provenance
    )
    assert shared.provenance["left_out"] == "overrides"
    assert isinstance(shared.provenance["content_fingerprint"], str)
    assert shared.workspace == repo


def test_after_a_new_commit_digest_status_reports_a_committed_digest_stale(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _optimize_globally(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "commit the reviewed digest")
    assert "freshness: fresh" in _status(repo, tmp_path / "state", capsys)

    (repo / "src" / "demo" / "cli.py").write_text("def main() -> int:\n    return 1\n")
    git(repo, "commit", "-q", "-am", "change the code")

    out = _status(repo, tmp_path / "state", capsys)
    assert "origin:    shared-override" in out
    assert "freshness: stale (the content of the workspace's files changed" in out


def test_a_session_digest_shadowing_a_reviewed_override_is_reported(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _curate(repo)
    session = Session()
    with SessionStore(tmp_path / "state").attach(session, repo):
        set_workspace_digest(session, "workspace-digest", "A local digest.", workspace=repo)
    prompt = make_prompt(session, repo)
    store = LocalPromptOverridesStore(repo / "overrides")

    with capture_logs() as logs:
        text = prompt.render(overrides_store=store).text

    assert "A local digest." in text
    [record] = [log for log in logs if log["event"] == "workspace_digest_shadows_override"]
    assert str(_shared_file(repo)) in record["override"]
    resolution = resolve_workspace_digest(prompt, overrides_store=store)
    assert resolution.shadowed_override is not None
    assert "shadows:" in _status(repo, tmp_path / "state", capsys)


@pytest.mark.parametrize(("answer", "replaced"), [("n", False), ("y", True)])
def test_the_repl_asks_before_replacing_an_operator_digest(
    repo: Path, tmp_path: Path, answer: str, replaced: bool
) -> None:
    from promptkit.discovery import workspace_prompt

    _curate(repo)
    setup = ReplSetup(
        workspace=repo,
        prompt_source=workspace_prompt,
        choice=choose_digest_writer("static"),
        overrides=LocalPromptOverridesStore(repo / "overrides"),
        tag="latest",
        state=SessionStore(tmp_path / "state"),
    )
    out, err = io.StringIO(), io.StringIO()
    stdin = io.StringIO(f"optimize global\n{answer}\n")
    with WorkspaceRepl.open(setup, stdin=stdin, stdout=out, stderr=err) as repl:
        repl.cmdloop()

    assert "holds a digest an operator wrote; replace it? [y/N]" in out.getvalue()
    assert (CURATED not in _shared_file(repo).read_text()) is replaced
    assert ("an operator wrote" in err.getvalue()) is not replaced
