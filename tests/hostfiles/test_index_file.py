"""git's index file read directly (`read_index_file`): the entries git itself prints, or None
for an index this reader leaves to git, and never an exception."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from promptkit.hostfiles import begin_selection, select_files
from promptkit.hostfiles._git_index import GitListing, read_index_file, vouched_entries

GitRunner = Callable[..., str]
Writer = Callable[[Path, str, str | bytes], Path]
Committer = Callable[..., str]


def _index_bytes(root: Path, git: GitRunner) -> bytes:
    return (root / git(root, "rev-parse", "--git-path", "index").strip()).read_bytes()


def _as_git_prints_it(root: Path) -> GitListing | None:
    printed = subprocess.run(
        ["git", "ls-files", "-z", "-v", "-s", "--debug"], cwd=root, capture_output=True, check=True
    ).stdout
    return vouched_entries(printed)


def _columns(listing: GitListing | None) -> object:
    assert listing is not None
    return (listing.paths, listing.sizes, listing.mtimes_ns, listing.blob_ids, listing.to_stat)


@pytest.fixture
def varied_repo(repo: Path, write: Writer, commit: Committer, git: GitRunner) -> Path:
    """A repository whose index holds every kind of entry: plain, executable, empty, symlink,
    non-ASCII and very long names, skip-worktree, assume-unchanged, intent-to-add, conflicted."""
    for index in range(20):
        write(repo, f"src/module_{index}.py", f"value = {index}\n")
    write(repo, "bin/run.sh", "#!/bin/sh\n")
    (repo / "bin/run.sh").chmod(0o755)
    write(repo, "empty.txt", "")
    write(repo, "docs/é ü.md", "text\n")
    (repo / "link.py").symlink_to("src/module_1.py")
    write(repo, "conflicted.txt", "base\n")
    commit(repo)
    git(repo, "checkout", "-q", "-b", "other")
    write(repo, "conflicted.txt", "theirs\n")
    commit(repo)
    git(repo, "checkout", "-q", "-")
    write(repo, "conflicted.txt", "ours\n")
    commit(repo)
    subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True)
    git(repo, "update-index", "--skip-worktree", "src/module_2.py")
    git(repo, "update-index", "--assume-unchanged", "src/module_3.py")
    write(repo, "new.py", "intent to add\n")
    git(repo, "add", "-N", "new.py")
    # A name longer than the 4095 bytes an entry's length field holds: an entry only, since
    # no filesystem path can be that long.
    blob = git(repo, "hash-object", "-w", "empty.txt").strip()
    long_name = "/".join(["d" * 200] * 21) + "/leaf.txt"
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{long_name}")
    return repo


def test_an_index_read_directly_lists_what_git_prints(varied_repo: Path, git: GitRunner) -> None:
    listing = read_index_file(_index_bytes(varied_repo, git))

    assert _columns(listing) == _columns(_as_git_prints_it(varied_repo))


def test_an_index_read_for_a_folder_lists_what_git_prints_there(
    varied_repo: Path, git: GitRunner
) -> None:
    listing = read_index_file(_index_bytes(varied_repo, git), b"src/")

    assert _columns(listing) == _columns(_as_git_prints_it(varied_repo / "src"))


def test_a_name_that_is_not_utf8_is_read_with_its_bytes_kept(
    repo: Path, commit: Committer, git: GitRunner
) -> None:
    (repo / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")
    commit(repo)

    listing = read_index_file(_index_bytes(repo, git))

    assert listing is not None and listing.paths == [os.fsdecode(b"caf\xe9.txt")]


@pytest.mark.parametrize(
    "setup",
    [
        ("update-index", "--index-version", "4"),
        ("update-index", "--split-index"),
    ],
    ids=["version 4", "split index"],
)
def test_an_index_this_reader_does_not_follow_is_left_to_git(
    varied_repo: Path, git: GitRunner, setup: tuple[str, ...]
) -> None:
    before = select_files(varied_repo)
    git(varied_repo, *setup)

    assert read_index_file(_index_bytes(varied_repo, git)) is None
    assert select_files(varied_repo).files == before.files


def test_the_index_of_a_sha256_repository_is_left_to_git(
    tmp_path: Path, write: Writer, git: GitRunner
) -> None:
    root = tmp_path / "sha256"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    write(root, "a.py", "a\n")
    git(root, "add", "-A")

    assert read_index_file(_index_bytes(root, git)) is None
    assert [(file.path, len(file.blob_id or "")) for file in select_files(root).files] == [
        ("a.py", 64)
    ]


def test_a_repository_with_nothing_added_yet_lists_its_untracked_files(
    repo: Path, write: Writer
) -> None:
    write(repo, "draft.md", "not added\n")  # no index file exists yet

    assert [file.path for file in select_files(repo).files] == ["draft.md"]


@settings(max_examples=300, deadline=None)
@given(version=st.sampled_from([b"\0\0\0\x02", b"\0\0\0\x03"]), data=st.binary(max_size=400))
def test_any_bytes_read_as_a_listing_or_none_never_as_an_error(version: bytes, data: bytes) -> None:
    assert isinstance(read_index_file(b"DIRC" + version + data), GitListing | None)


def test_a_truncated_index_reads_as_none(varied_repo: Path, git: GitRunner) -> None:
    data = _index_bytes(varied_repo, git)

    assert all(read_index_file(data[:end]) is None for end in range(0, len(data) - 1, 97))


def test_an_entry_whose_name_holds_a_nul_is_not_read(
    repo: Path, write: Writer, git: GitRunner
) -> None:
    write(repo, "ab.txt", "a\n")
    git(repo, "add", "-A")
    data = _index_bytes(repo, git)

    assert read_index_file(data.replace(b"ab.txt", b"a\0.txt")) is None


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    root = tmp_path_factory.mktemp("small-index")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for name in ("a.py", "docs/b.md", "c.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return (root / ".git" / "index").read_bytes()


@settings(max_examples=300, deadline=None)
@given(at=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
def test_an_index_with_a_byte_changed_reads_as_aligned_columns_or_none(
    small_index: bytes, at: int, byte: int
) -> None:
    at %= len(small_index)
    listing = read_index_file(small_index[:at] + bytes([byte]) + small_index[at + 1 :])

    if listing is not None:
        columns = (listing.paths, listing.sizes, listing.mtimes_ns, listing.blob_ids)
        assert len({len(column) for column in columns}) == 1


def test_one_git_process_lists_the_changed_and_untracked_files_two_processes_list(
    varied_repo: Path, write: Writer, git: GitRunner
) -> None:
    write(varied_repo, "src/module_4.py", "edited on disk\n")
    (varied_repo / "src/module_5.py").unlink()
    write(varied_repo, "notes/untracked.md", "not added\n")
    write(varied_repo, "C ?.txt", "a name that starts like a tag\n")
    git(varied_repo / "notes", "init", "-q")

    listed_by_one = begin_selection(varied_repo, one_git_process=True).result()

    assert listed_by_one == select_files(varied_repo)
    assert "C ?.txt" in {file.path for file in listed_by_one.files}


def test_one_git_process_lists_a_folder_whose_name_git_prints_on_two_lines(
    repo: Path, write: Writer, commit: Committer
) -> None:
    # A newline in the folder's name: git prints the index itself (`--debug`) for it.
    folder = repo / "odd\nfolder"
    write(folder, "kept.py", "x = 1\n")
    commit(repo)
    write(folder, "new.py", "y = 2\n")

    listed_by_one = begin_selection(folder, one_git_process=True).result()

    assert listed_by_one == select_files(folder)
    assert [file.path for file in listed_by_one.files] == ["kept.py", "new.py"]
