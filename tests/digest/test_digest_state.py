"""The WorkspaceDigest slice: set, latest, clear, key and body rules, persistence."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from promptkit._names import is_valid_key
from promptkit.digest import (
    DIGEST_SLICE_NAME,
    WorkspaceDigest,
    clear_workspace_digest,
    latest_workspace_digest,
    set_workspace_digest,
)
from promptkit.errors import SessionError, WorkspaceError
from promptkit.hostfiles import describe_workspace
from promptkit.session import Session, SessionStore


def test_key_is_stripped_and_lower_cased_and_body_stripped(session: Session) -> None:
    stored = set_workspace_digest(session, "  Workspace-Digest ", "\n  Layout: src/  \n\n")

    assert stored.section_key == "workspace-digest"
    assert stored.body == "Layout: src/"
    assert latest_workspace_digest(session, "WORKSPACE-DIGEST ") == stored


def test_setting_a_key_replaces_only_that_key(session: Session) -> None:
    set_workspace_digest(session, "alpha", "first alpha")
    beta = set_workspace_digest(session, "beta", "beta")
    newer = set_workspace_digest(session, "alpha", "second alpha")

    assert latest_workspace_digest(session, "alpha") == newer
    assert latest_workspace_digest(session, "beta") == beta
    assert len(session.select_all(WorkspaceDigest)) == 2


def test_missing_digest_is_none(session: Session) -> None:
    assert latest_workspace_digest(session, "workspace-digest") is None


@pytest.mark.parametrize("body", ["", "   ", "\n\t\n"])
def test_empty_body_is_refused(session: Session, body: str) -> None:
    with pytest.raises(SessionError, match="is empty"):
        set_workspace_digest(session, "workspace-digest", body)
    assert session.select_all(WorkspaceDigest) == ()


@given(st.text(max_size=80))
def test_keys_that_break_the_key_rule_are_refused(key: str) -> None:
    session = Session()
    normalized = key.strip().lower()
    if is_valid_key(normalized):
        assert set_workspace_digest(session, key, "body").section_key == normalized
    else:
        with pytest.raises(SessionError, match="invalid workspace digest key"):
            set_workspace_digest(session, key, "body")


def test_body_holding_a_credential_is_refused_without_echoing_it(session: Session) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.raises(SessionError) as raised:
        set_workspace_digest(session, "workspace-digest", f"Deploy with GITHUB_TOKEN={token}")

    assert "github-token" in str(raised.value)
    assert token not in str(raised.value)
    assert session.select_all(WorkspaceDigest) == ()


def test_clear_removes_only_that_key(session: Session) -> None:
    set_workspace_digest(session, "alpha", "alpha")
    beta = set_workspace_digest(session, "beta", "beta")

    clear_workspace_digest(session, " ALPHA")

    assert latest_workspace_digest(session, "alpha") is None
    assert latest_workspace_digest(session, "beta") == beta


def test_clearing_a_missing_key_changes_nothing(session: Session) -> None:
    before = session.seq
    clear_workspace_digest(session, "workspace-digest")
    assert session.seq == before


def test_workspace_argument_records_provenance_and_root(session: Session, git_repo: Path) -> None:
    stored = set_workspace_digest(session, "workspace-digest", "digest", workspace=git_repo)

    assert stored.provenance is not None
    assert stored.provenance.head_sha == describe_workspace(git_repo).head_sha
    assert stored.workspace_root == str(git_repo.resolve())


def test_provenance_of_a_local_directory_gives_the_workspace_root(
    session: Session, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("plain directory\n")
    manifest = describe_workspace(tmp_path)

    stored = set_workspace_digest(session, "workspace-digest", "digest", provenance=manifest)

    assert stored.provenance == manifest
    assert stored.workspace_root == str(tmp_path.resolve())


def test_missing_workspace_directory_is_refused(session: Session, tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        set_workspace_digest(session, "workspace-digest", "digest", workspace=tmp_path / "gone")


def test_digest_survives_a_session_store_round_trip(tmp_path: Path, git_repo: Path) -> None:
    store = SessionStore(tmp_path / "state")
    session = Session()
    with store.attach(session, git_repo):
        stored = set_workspace_digest(session, "workspace-digest", "digest", workspace=git_repo)

    restored = store.latest(git_repo)

    assert restored is not None
    assert latest_workspace_digest(restored, "workspace-digest") == stored
    assert DIGEST_SLICE_NAME in restored.snapshot().to_json()


def test_restored_session_upserts_by_key(tmp_path: Path, git_repo: Path) -> None:
    store = SessionStore(tmp_path / "state")
    session = Session()
    with store.attach(session, git_repo):
        set_workspace_digest(session, "workspace-digest", "old")
    restored = store.latest(git_repo)
    assert restored is not None

    newer = set_workspace_digest(restored, "workspace-digest", "new")

    assert restored.select_all(WorkspaceDigest) == (newer,)
