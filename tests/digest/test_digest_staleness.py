"""Staleness: a digest whose workspace moved on is still rendered, with one warning per state."""

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from promptkit.digest import WorkspaceDigestSection, resolve_workspace_digest, set_workspace_digest
from promptkit.errors import PromptValidationError
from promptkit.hostfiles import describe_workspace
from promptkit.prompt import Prompt
from promptkit.session import Session
from promptkit.testing import FakeClock

from .conftest import commit_file


def stale_warnings(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["event"] == "workspace_digest_stale"]


def prompt_for(session: Session, *, freshness_interval_s: float = 2.0) -> Prompt[None]:
    section = WorkspaceDigestSection(session=session, freshness_interval_s=freshness_interval_s)
    return Prompt(ns="tests", key="stale", sections=(section,))


def test_new_commit_makes_the_digest_stale_but_still_rendered(git_repo: Path) -> None:
    session = Session()
    stored = set_workspace_digest(session, "workspace-digest", "Old digest.", workspace=git_repo)
    new_head = commit_file(git_repo, "src/app.py", "print('new')\n")

    with capture_logs() as logs:
        text = prompt_for(session).render().text

    assert text.endswith("Old digest.")
    (warning,) = stale_warnings(logs)
    assert warning["log_level"] == "warning"
    assert stored.provenance is not None
    assert warning["recorded_head_sha"] == stored.provenance.head_sha
    assert warning["current_head_sha"] == new_head
    assert warning["recorded_fingerprint"] == stored.provenance.fingerprint
    assert warning["current_fingerprint"] == describe_workspace(git_repo).fingerprint
    assert warning["section_key"] == "workspace-digest"
    assert (warning["prompt_ns"], warning["prompt_key"]) == ("tests", "stale")


def test_stale_warning_is_logged_once_per_workspace_state(git_repo: Path) -> None:
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Old digest.", workspace=git_repo)
    commit_file(git_repo, "src/app.py", "print('new')\n")
    prompt = prompt_for(session)

    with capture_logs() as logs:
        prompt.render()
        prompt.render()
        prompt_for(session).render()

    assert len(stale_warnings(logs)) == 1


def test_a_further_change_warns_again(git_repo: Path) -> None:
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Old digest.", workspace=git_repo)
    prompt = prompt_for(session, freshness_interval_s=0)
    commit_file(git_repo, "src/app.py", "print('one')\n")

    with capture_logs() as logs:
        prompt.render()
        commit_file(git_repo, "src/app.py", "print('two')\n")
        prompt.render()

    first, second = stale_warnings(logs)
    assert first["current_head_sha"] != second["current_head_sha"]


def test_renders_within_the_freshness_interval_reuse_the_last_check(git_repo: Path) -> None:
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Old digest.", workspace=git_repo)
    prompt = prompt_for(session, freshness_interval_s=3600)

    with capture_logs() as logs:
        prompt.render()
        commit_file(git_repo, "src/app.py", "print('new')\n")
        prompt.render()

    assert stale_warnings(logs) == []
    assert resolve_workspace_digest(prompt).is_stale is True


def test_a_negative_freshness_interval_is_refused() -> None:
    with pytest.raises(PromptValidationError, match="freshness_interval_s"):
        WorkspaceDigestSection(session=Session(), freshness_interval_s=-1)


def test_uncommitted_edit_makes_the_digest_stale(git_repo: Path) -> None:
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Digest.", workspace=git_repo)
    (git_repo / "README.md").write_text("# Demo, edited and longer\n")

    resolution = resolve_workspace_digest(WorkspaceDigestSection(session=session))

    assert resolution.is_stale is True
    assert resolution.freshness is not None
    assert resolution.freshness.reason == "the workspace fingerprint changed"


def test_unchanged_workspace_is_fresh_and_silent(git_repo: Path) -> None:
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Digest.", workspace=git_repo)

    with capture_logs() as logs:
        prompt_for(session).render()

    assert stale_warnings(logs) == []
    assert resolve_workspace_digest(WorkspaceDigestSection(session=session)).is_stale is False


def test_digest_without_provenance_has_unknown_freshness() -> None:
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Digest.")

    resolution = resolve_workspace_digest(WorkspaceDigestSection(session=session))

    assert resolution.origin == "session"
    assert resolution.is_stale is None


def test_removed_workspace_gives_unknown_freshness_and_no_warning(tmp_path: Path) -> None:
    workspace = tmp_path / "gone-soon"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Digest.", workspace=workspace)
    (workspace / "a.txt").unlink()
    workspace.rmdir()

    with capture_logs() as logs:
        text = prompt_for(session).render().text
    resolution = resolve_workspace_digest(WorkspaceDigestSection(session=session))

    assert text.endswith("Digest.")
    assert stale_warnings(logs) == []
    assert resolution.is_stale is None
    assert resolution.freshness is not None
    assert "cannot be read" in resolution.freshness.reason


def test_a_render_after_the_freshness_interval_checks_the_workspace_again(git_repo: Path) -> None:
    clock = FakeClock()
    session = Session()
    set_workspace_digest(session, "workspace-digest", "Old digest.", workspace=git_repo)
    section = WorkspaceDigestSection(session=session, freshness_interval_s=60, clock=clock)
    prompt = Prompt(ns="tests", key="stale", sections=(section,))

    with capture_logs() as logs:
        prompt.render()
        commit_file(git_repo, "src/app.py", "print('new')\n")
        clock.advance(59)
        prompt.render()
        warned_within_the_interval = len(stale_warnings(logs))
        clock.advance(1)
        prompt.render()

    assert warned_within_the_interval == 0
    assert len(stale_warnings(logs)) == 1
