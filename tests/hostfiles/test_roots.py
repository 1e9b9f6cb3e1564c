"""The workspace never leaves its root through a hard link, and depth costs no Python frames:
a tree deeper than the frames allowed is listed like any other (the issue's case was about
1,000 folders against Python's default limit of 1,000 frames)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from promptkit.errors import WorkspaceError
from promptkit.hostfiles import read_workspace_bytes, select_files

# Deeper than the frames the selection may use (below), yet shallow enough for pytest's own
# recursive clean-up of tmp_path.
DEPTH = 400
FRAMES_ALLOWED = 80


def _deep_folder(root: Path) -> str:
    """Create DEPTH nested folders under `root`, one at a time; their relative path."""
    relative = ""
    for _ in range(DEPTH):
        relative += "d/"
        (root / relative).mkdir()
    return relative


def _selected_with_few_frames(root: Path) -> list[str]:
    """The selected paths, listed with the recursion limit just FRAMES_ALLOWED above the
    caller: a recursive walk of DEPTH folders would raise RecursionError."""
    depth = 0
    frame = sys._getframe()
    while frame.f_back is not None:
        frame, depth = frame.f_back, depth + 1
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + FRAMES_ALLOWED)
    try:
        return [file.path for file in select_files(root).files]
    finally:
        sys.setrecursionlimit(limit)


def test_a_hard_link_to_an_outside_file_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("outside the workspace")
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "own.txt").write_text("own")
    os.link(tmp_path / "outside.txt", root / "linked.txt")

    selection = select_files(root)

    assert [file.path for file in selection.files] == ["own.txt"]
    assert selection.skipped_count("hard_link") == 1


def test_a_hard_link_is_refused_when_read(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("outside the workspace")
    root = tmp_path / "workspace"
    root.mkdir()
    os.link(tmp_path / "outside.txt", root / "linked.txt")

    with pytest.raises(WorkspaceError, match=r"linked\.txt in workspace .* is a hard link"):
        read_workspace_bytes(root, "linked.txt", limit=1000)


def test_a_deep_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    deep = _deep_folder(tmp_path)
    (tmp_path / deep / "leaf.txt").write_text("leaf")

    assert _selected_with_few_frames(tmp_path) == [f"{deep}leaf.txt"]


def test_a_deep_tracked_file_is_listed_without_recursion(
    repo: Path, commit: Callable[..., str]
) -> None:
    deep = _deep_folder(repo)
    (repo / deep / "leaf.txt").write_text("leaf")
    commit(repo)

    assert _selected_with_few_frames(repo) == [f"{deep}leaf.txt"]
