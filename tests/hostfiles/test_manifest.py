"""Workspace manifests: provenance read from git or the filesystem, JSON form, fingerprint."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from promptkit.errors import WorkspaceError
from promptkit.hostfiles import (
    MANIFEST_FILE_NAME,
    WorkspaceManifest,
    describe_workspace,
    workspace_fingerprint,
)

GitRunner = Callable[..., str]
Writer = Callable[[Path, str, str | bytes], Path]
Committer = Callable[..., str]


def test_repository_with_a_commit_records_branch_head_and_history(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "a.txt", "x\n")
    head = commit(repo)
    manifest = describe_workspace(repo)
    assert (manifest.strategy, manifest.source, manifest.ref, manifest.head_sha) == (
        "existing",
        str(repo.resolve()),
        "main",
        head,
    )
    assert (manifest.has_history, manifest.is_shallow, manifest.notes) == (True, False, ())


def test_created_at_is_utc_now_to_the_second(repo: Path) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    created_at = describe_workspace(repo).created_at
    assert before <= created_at <= datetime.now(UTC)
    assert created_at.microsecond == 0
    assert created_at.utcoffset() is not None


def test_detached_head_has_no_ref_and_a_note(
    repo: Path, write: Writer, commit: Committer, git: GitRunner
) -> None:
    write(repo, "a.txt", "x\n")
    head = commit(repo)
    git(repo, "checkout", "-q", "--detach")
    manifest = describe_workspace(repo)
    assert (manifest.ref, manifest.head_sha) == (None, head)
    assert "HEAD is detached" in manifest.notes


def test_shallow_clone_is_shallow_and_has_no_history(
    repo: Path, write: Writer, commit: Committer, git: GitRunner, tmp_path: Path
) -> None:
    write(repo, "a.txt", "one\n")
    commit(repo, "first")
    write(repo, "a.txt", "two\n")
    head = commit(repo, "second")
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", "clone")
    manifest = describe_workspace(tmp_path / "clone")
    assert (manifest.is_shallow, manifest.has_history) == (True, False)
    assert (manifest.head_sha, manifest.ref, manifest.source) == (head, "main", f"file://{repo}")
    assert "shallow clone: history is truncated" in manifest.notes


def test_empty_repository_has_no_head_and_says_so(repo: Path) -> None:
    manifest = describe_workspace(repo)
    assert (manifest.head_sha, manifest.ref, manifest.has_history) == (None, "main", False)
    assert manifest.notes == ("repository has no commits yet",)


def test_plain_directory_is_described_from_the_filesystem(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "a.txt", "x\n")
    manifest = describe_workspace(tmp_path)
    assert (manifest.strategy, manifest.source) == ("existing", str(tmp_path.resolve()))
    assert (manifest.ref, manifest.head_sha, manifest.has_history, manifest.is_shallow) == (
        None,
        None,
        False,
        False,
    )
    assert manifest.notes[0].startswith("not a git repository")


def test_caller_can_record_the_strategy_it_used(tmp_path: Path) -> None:
    assert describe_workspace(tmp_path, strategy="snapshot").strategy == "snapshot"


@pytest.mark.parametrize(
    ("remote", "source"),
    [
        (
            "https://user:ghp_Fake0123456789abcdefghijklmnopqrstuv@github.com/org/repo.git",
            "https://github.com/org/repo.git",
        ),
        ("https://oauth2token@gitlab.example/org/repo", "https://gitlab.example/org/repo"),
        ("https://example.com/repo.git?access_token=abc#frag", "https://example.com/repo.git"),
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
    ],
)
def test_source_is_the_origin_url_without_credentials(
    repo: Path, git: GitRunner, remote: str, source: str
) -> None:
    git(repo, "remote", "add", "origin", remote)
    assert describe_workspace(repo).source == source


def test_missing_path_raises_a_workspace_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="missing"):
        describe_workspace(tmp_path / "missing")


# -- JSON --------------------------------------------------------------------------------------


def test_json_follows_the_manifest_format_and_omits_unset_fields(tmp_path: Path) -> None:
    manifest = WorkspaceManifest(
        strategy="snapshot",
        source="/local/path",
        created_at=datetime(2026, 1, 2, 8, 30, tzinfo=UTC),
        has_history=False,
        is_shallow=False,
    )
    assert json.loads(manifest.to_json()) == {
        "strategy": "snapshot",
        "source": "/local/path",
        "created_at": "2026-01-02T08:30:00Z",
        "has_history": False,
        "is_shallow": False,
    }


def test_json_round_trips_every_field(repo: Path, write: Writer, commit: Committer) -> None:
    write(repo, "a.txt", "x\n")
    commit(repo)
    manifest = describe_workspace(repo)
    assert WorkspaceManifest.from_json(manifest.to_json()) == manifest


def test_manifest_written_to_a_directory_reads_back(tmp_path: Path) -> None:
    manifest = describe_workspace(tmp_path)
    (tmp_path / "output").mkdir()
    written = manifest.write(tmp_path / "output")
    assert written.name == MANIFEST_FILE_NAME
    assert WorkspaceManifest.read(written) == manifest


def test_manifest_written_by_another_tool_is_read(tmp_path: Path) -> None:
    text = json.dumps(
        {
            "strategy": "git-clone",
            "source": "https://github.com/holon-run/holon",
            "ref": "refs/pull/123/head",
            "head_sha": "abc123def456789abc123def456789abc123def4",
            "created_at": "2026-01-02T10:00:00+02:00",
            "has_history": False,
            "is_shallow": True,
            "notes": ["Repository cloned with depth=1"],
        }
    )
    manifest = WorkspaceManifest.from_json(text)
    assert manifest.created_at == datetime(2026, 1, 2, 8, 0, tzinfo=UTC)
    assert (manifest.fingerprint, manifest.notes) == (None, ("Repository cloned with depth=1",))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "line 1: not valid JSON"),
        ("[]", "JSON object"),
        ('{"source": "x"}', "required field 'strategy' is missing"),
        (
            '{"strategy": "rsync", "source": "x", "created_at": "2026-01-02T00:00:00Z",'
            ' "has_history": false, "is_shallow": false}',
            "expected one of git-clone, snapshot, existing",
        ),
        (
            '{"strategy": "existing", "source": "x", "created_at": "yesterday",'
            ' "has_history": false, "is_shallow": false}',
            "RFC 3339",
        ),
        (
            '{"strategy": "existing", "source": "x", "created_at": "2026-01-02T00:00:00Z",'
            ' "has_history": "yes", "is_shallow": false}',
            "'has_history' must be a bool",
        ),
    ],
)
def test_invalid_manifest_names_its_origin_and_the_problem(text: str, message: str) -> None:
    with pytest.raises(WorkspaceError, match=r"ws\.json") as raised:
        WorkspaceManifest.from_json(text, origin="ws.json")
    assert message in str(raised.value)


# -- fingerprint -------------------------------------------------------------------------------


def test_fingerprint_is_stable_while_nothing_changes(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "a.txt", "x\n")
    commit(repo)
    write(repo, "untracked.txt", "y\n")
    assert workspace_fingerprint(repo) == workspace_fingerprint(repo)


def test_fingerprint_changes_after_a_file_edit(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "a.txt", "x\n")
    commit(repo)
    before = workspace_fingerprint(repo)
    write(repo, "a.txt", "edited\n")
    assert workspace_fingerprint(repo) != before


def test_fingerprint_changes_after_a_commit(repo: Path, write: Writer, commit: Committer) -> None:
    write(repo, "a.txt", "x\n")
    commit(repo)
    write(repo, "a.txt", "edited\n")
    edited = workspace_fingerprint(repo)
    commit(repo)
    assert workspace_fingerprint(repo) != edited


def test_fingerprint_changes_when_an_untracked_file_appears(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "a.txt", "x\n")
    before = workspace_fingerprint(tmp_path)
    write(tmp_path, "b.txt", "y\n")
    assert workspace_fingerprint(tmp_path) != before


def test_fingerprint_of_a_clean_clone_equals_its_origins(
    repo: Path, write: Writer, commit: Committer, git: GitRunner, tmp_path: Path
) -> None:
    write(repo, "src/a.py", "x = 1\n")
    write(repo, "README.md", "# r\n")
    commit(repo)
    git(tmp_path, "clone", "-q", f"file://{repo}", "clone")
    assert workspace_fingerprint(tmp_path / "clone") == workspace_fingerprint(repo)


def test_describe_records_the_current_fingerprint(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "a.txt", "x\n")
    assert describe_workspace(tmp_path).fingerprint == workspace_fingerprint(tmp_path)


def test_repository_git_cannot_read_is_walked_and_the_manifest_says_so(
    tmp_path: Path, write: Writer
) -> None:
    write(tmp_path, ".git", "gitdir: /nonexistent/worktree\n")
    write(tmp_path, "a.txt", "x\n")
    manifest = describe_workspace(tmp_path)
    assert manifest.head_sha is None
    assert manifest.notes[0].startswith("git could not read the repository here")
