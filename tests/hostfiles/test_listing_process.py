"""A listing taken in a helper process is the listing `select_files` takes, with its
fingerprint; when the helper fails, the workspace is listed in this process, with its errors."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from promptkit.errors import WorkspaceError
from promptkit.hostfiles import (
    DEFAULT_MAX_FILE_BYTES,
    ListingProcess,
    fingerprint_files,
    manifest_for_selection,
    select_files,
    start_listing_process,
)

Writer = Callable[[Path, str, str | bytes], Path]
Committer = Callable[..., str]


def _workspace_with_files_left_out(root: Path, write: Writer) -> None:
    write(root, "src/app.py", "print('hi')\n")
    write(root, "README.md", "# app\n")
    write(root, ".env", "TOKEN=x\n")
    write(root, "logo.png", b"\x89PNG")
    write(root, "big.txt", "x" * 2048)
    # A name that is not UTF-8 is left out with no path: the answer must carry that None too.
    (root / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_a_listing_process_gives_the_selection_and_fingerprint_listed_here(
    in_git: bool, repo: Path, tmp_path: Path, write: Writer, commit: Committer
) -> None:
    root = repo if in_git else tmp_path / "plain"
    root.mkdir(exist_ok=True)
    _workspace_with_files_left_out(root, write)
    if in_git:
        commit(root)
        write(root, "untracked.md", "new\n")

    with start_listing_process(root, 1024) as listing:
        selection, fingerprint = listing.result()

    expected = select_files(root, max_file_bytes=1024)
    assert selection == expected
    assert fingerprint == fingerprint_files(expected.files)
    assert {reason for reason, _ in selection.skipped} == {
        "binary",
        "credential",
        "non_utf8_name",
        "too_large",
    }


def test_the_listing_process_answers_from_its_helper_process(
    repo: Path, write: Writer, commit: Committer
) -> None:
    # The helper's answer is the workspace as it was when the helper listed it; a listing taken
    # here instead (what a helper that fails to start, import or answer falls back to) would
    # also hold the file written after the helper answered.
    write(repo, "src/app.py", "print('hi')\n")
    commit(repo)
    with start_listing_process(repo, DEFAULT_MAX_FILE_BYTES) as listing:
        summary = listing.summary()
        manifest = listing.manifest()  # waits for the helper to finish
        write(repo, "src/late.py", "print('late')\n")
        selection, fingerprint = listing.result()

    assert summary is not None and manifest is not None
    assert [file.path for file in selection.files] == ["src/app.py"]
    assert fingerprint == manifest.fingerprint
    assert "src/late.py" in [file.path for file in select_files(repo).files]


def test_a_listing_process_of_a_missing_directory_raises_what_select_files_raises(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(WorkspaceError) as listed_here:
        select_files(missing)

    with (
        start_listing_process(missing, DEFAULT_MAX_FILE_BYTES) as listing,
        pytest.raises(WorkspaceError) as listed_by_helper,
    ):
        listing.result()

    assert str(listed_by_helper.value) == str(listed_here.value)


def test_a_helper_whose_answer_does_not_decode_is_ignored_and_the_workspace_listed_here(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "src/app.py", "print('hi')\n")
    commit(repo)
    with tempfile.TemporaryFile() as files:
        junk = subprocess.Popen(
            [sys.executable, "-c", "print('not a listing')"], stdout=subprocess.PIPE
        )
        listing = ListingProcess(repo.resolve(), DEFAULT_MAX_FILE_BYTES, junk, files)

        selection, fingerprint = listing.result()

    assert selection == select_files(repo)
    assert fingerprint == fingerprint_files(selection.files)


def test_a_listing_process_that_could_not_start_lists_here(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "src/app.py", "print('hi')\n")
    commit(repo)
    listing = ListingProcess(repo.resolve(), DEFAULT_MAX_FILE_BYTES)

    selection, _ = listing.result()

    assert selection == select_files(repo)


def test_a_listing_process_is_the_listing_of_its_own_root_and_size_cap_only(
    repo: Path, tmp_path: Path
) -> None:
    with start_listing_process(repo, DEFAULT_MAX_FILE_BYTES) as listing:
        assert listing.lists(repo.resolve(), DEFAULT_MAX_FILE_BYTES)
        assert not listing.lists(repo.resolve(), 1024)
        assert not listing.lists(tmp_path.resolve(), DEFAULT_MAX_FILE_BYTES)


def test_a_listing_process_counts_the_files_the_globs_it_was_told_allow(
    repo: Path, write: Writer, commit: Committer
) -> None:
    _workspace_with_files_left_out(repo, write)
    write(repo, "docs/guide.md", "# guide\n")
    commit(repo)

    with start_listing_process(repo, 1024) as listing:
        listing.narrow(["**/*.md", "**/*.txt"], ["docs"])
        summary = listing.summary()

    narrowed = select_files(repo, max_file_bytes=1024, include=["**/*.md", "**/*.txt"])
    narrowed = narrowed.narrowed(exclude=["docs"])
    assert summary is not None
    assert (summary.file_count, summary.total_bytes, summary.skipped) == (
        len(narrowed.files),
        narrowed.total_bytes,
        narrowed.skipped,
    )


def test_a_listing_process_gives_the_manifest_of_the_workspace_it_listed(
    repo: Path, write: Writer, commit: Committer
) -> None:
    _workspace_with_files_left_out(repo, write)
    commit(repo)

    with start_listing_process(repo, 1024) as listing:
        listing.narrow(["src/**"], [])
        manifest = listing.manifest()
        selection, fingerprint = listing.result()

    expected = manifest_for_selection(select_files(repo, max_file_bytes=1024))
    assert manifest is not None
    assert manifest == dataclasses.replace(expected, created_at=manifest.created_at)
    assert manifest.head_sha is not None
    assert (selection, fingerprint) == (
        select_files(repo, max_file_bytes=1024),
        manifest.fingerprint,
    )


def test_a_listing_process_told_no_globs_counts_every_file(repo: Path, write: Writer) -> None:
    _workspace_with_files_left_out(repo, write)

    with start_listing_process(repo, 1024) as listing:
        summary = listing.summary()

    everything = select_files(repo, max_file_bytes=1024)
    assert summary is not None
    assert (summary.root, summary.from_git) == (everything.root, everything.from_git)
    assert (summary.file_count, summary.skipped) == (len(everything.files), everything.skipped)


def test_the_files_of_a_listing_process_follow_its_summary_unnarrowed(
    repo: Path, write: Writer, commit: Committer
) -> None:
    _workspace_with_files_left_out(repo, write)
    commit(repo)

    with start_listing_process(repo, 1024) as listing:
        listing.narrow([], ["src"])
        summary = listing.summary()
        selection, fingerprint = listing.result()

    assert summary is not None
    assert selection == select_files(repo, max_file_bytes=1024)
    assert fingerprint == fingerprint_files(selection.files)


def test_a_listing_process_closed_after_its_summary_lists_its_files_here(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "src/app.py", "print('hi')\n")
    commit(repo)
    with start_listing_process(repo, DEFAULT_MAX_FILE_BYTES) as listing:
        assert listing.summary() is not None
    write(repo, "src/new.py", "print('new')\n")

    selection, _ = listing.result()

    assert selection == select_files(repo)


def test_a_helper_that_fails_has_no_summary(repo: Path) -> None:
    with tempfile.TemporaryFile() as files:
        failing = subprocess.Popen(
            [sys.executable, "-c", "raise SystemExit(3)"], stdout=subprocess.PIPE
        )
        listing = ListingProcess(repo.resolve(), DEFAULT_MAX_FILE_BYTES, failing, files)

        assert listing.summary() is None
