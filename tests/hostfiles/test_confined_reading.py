"""The one confined reader (`read_confined`): what it reads, what it refuses and why, and the
links it follows only when the caller says so. Host files and override files both read
through it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from promptkit.errors import WorkspaceError
from promptkit.hostfiles import ConfinedReadError, is_inside, read_confined

Writer = Callable[[Path, str, str | bytes], Path]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


def test_a_file_is_read_with_its_size_and_modification_time(root: Path, write: Writer) -> None:
    file = write(root, "sub/a.txt", "abcdef")

    found = read_confined(root, "sub/a.txt", limit=4)

    assert (found.data, found.size, found.mtime) == (b"abcd", 6, file.stat().st_mtime)


def test_a_refusal_is_a_workspace_error_worded_for_host_files(root: Path) -> None:
    with pytest.raises(WorkspaceError, match=r"gone\.txt in workspace .* no longer exists"):
        read_confined(root, "gone.txt", limit=10)


@pytest.mark.parametrize("relative", ["gone.txt", "missing/gone.txt"])
def test_a_file_or_folder_that_does_not_exist_is_refused_as_missing(
    root: Path, relative: str
) -> None:
    with pytest.raises(ConfinedReadError) as refused:
        read_confined(root, relative, limit=10)

    assert refused.value.reason == "missing"


def test_a_root_that_does_not_exist_is_refused_as_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfinedReadError, match="cannot be opened") as refused:
        read_confined(tmp_path / "missing", "a.txt", limit=10)

    assert refused.value.reason == "missing"


def test_a_file_that_may_be_missing_is_none_when_it_is(root: Path, tmp_path: Path) -> None:
    assert read_confined(root, "missing/gone.txt", limit=10, missing_ok=True) is None
    assert read_confined(tmp_path / "no-root", "a.txt", limit=10, missing_ok=True) is None


def test_a_root_given_as_a_symlink_is_followed(root: Path, tmp_path: Path, write: Writer) -> None:
    write(root, "a.txt", "through the root's link")
    (tmp_path / "root-link").symlink_to(root, target_is_directory=True)

    assert read_confined(tmp_path / "root-link", "a.txt", limit=100).data == (
        b"through the root's link"
    )


def test_a_root_that_is_a_file_is_refused_as_unreadable(tmp_path: Path, write: Writer) -> None:
    file = write(tmp_path, "file.txt", "not a folder")

    with pytest.raises(ConfinedReadError, match="cannot be opened") as refused:
        read_confined(file, "a.txt", limit=10)

    assert refused.value.reason == "unreadable"


def test_a_linked_folder_is_not_followed_unless_the_caller_says_so(
    root: Path, write: Writer
) -> None:
    write(root, "real/a.txt", "inside")
    (root / "linked").symlink_to(root / "real", target_is_directory=True)

    with pytest.raises(ConfinedReadError, match="'linked' on its path is a symlink") as refused:
        read_confined(root, "linked/a.txt", limit=10)

    assert refused.value.reason == "refused"
    assert read_confined(root, "linked/a.txt", limit=10, follow_folder_links=True).data == (
        b"inside"
    )


def test_a_linked_folder_leading_out_of_the_root_is_refused_with_its_target(
    root: Path, tmp_path: Path, write: Writer
) -> None:
    write(tmp_path, "outside/secret.txt", "outside")
    (root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)

    with pytest.raises(ConfinedReadError, match="resolves outside the workspace") as refused:
        read_confined(root, "linked/secret.txt", limit=100, follow_folder_links=True)

    assert refused.value.reason == "outside"
    assert refused.value.target == str((tmp_path / "outside" / "secret.txt").resolve())


def test_a_link_inside_the_root_to_a_credential_file_is_refused(root: Path, write: Writer) -> None:
    write(root, ".env", "TOKEN=x\n")
    (root / "settings.txt").symlink_to(".env")

    with pytest.raises(ConfinedReadError, match="points to a credential file") as refused:
        read_confined(root, "settings.txt", limit=100)

    assert refused.value.reason == "refused"


def test_a_hard_link_is_read_only_when_the_caller_allows_it(root: Path, write: Writer) -> None:
    write(root, "a.txt", "shared")
    os.link(root / "a.txt", root / "b.txt")

    with pytest.raises(ConfinedReadError, match="is a hard link") as refused:
        read_confined(root, "b.txt", limit=100)

    assert refused.value.reason == "refused"
    assert read_confined(root, "b.txt", limit=100, allow_hard_links=True).data == b"shared"


@pytest.mark.timeout(20)
def test_a_fifo_is_refused_by_its_kind_without_being_opened(root: Path) -> None:
    os.mkfifo(root / "pipe.txt")

    with pytest.raises(ConfinedReadError, match="is a FIFO") as refused:
        read_confined(root, "pipe.txt", limit=100)

    assert (refused.value.reason, refused.value.kind) == ("not_regular", "FIFO")


def test_a_folder_is_refused_by_its_kind(root: Path) -> None:
    (root / "folder").mkdir()

    with pytest.raises(ConfinedReadError) as refused:
        read_confined(root, "folder", limit=100)

    assert (refused.value.reason, refused.value.kind) == ("not_regular", "directory")


_SEGMENT = st.text(alphabet="abc.", min_size=1, max_size=4)


@given(root=st.lists(_SEGMENT, min_size=1, max_size=3), below=st.lists(_SEGMENT, max_size=3))
def test_a_path_is_inside_a_root_it_extends_by_whole_segments(
    root: list[str], below: list[str]
) -> None:
    root_path = "/" + "/".join(root)

    assert is_inside("/".join([root_path, *below]), root_path)
    assert not is_inside(root_path + "x", root_path)  # a sibling whose name starts the same
