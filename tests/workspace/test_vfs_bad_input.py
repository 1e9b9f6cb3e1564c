"""The VFS on hostile trees: files swapped, deleted, replaced, special or badly named after (or
before) listing give failed tool results saying which file and why, never an exception or a hang."""

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from promptkit.session import Session
from promptkit.workspace import HostMount, VfsWorkspaceSection

from ..conftest import git
from .conftest import call


def listed_section(root: Path) -> VfsWorkspaceSection:
    section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(root)])
    section.mounts_description()
    return section


def test_a_file_swapped_for_a_symlink_out_of_the_root_after_listing_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("notes\n")
    section = listed_section(tmp_path)
    (tmp_path / "notes.txt").unlink()
    (tmp_path / "notes.txt").symlink_to("/etc/passwd")

    result = call(section, "vfs_read_file", path="/notes.txt")

    assert not result.success
    assert "resolves outside the workspace" in result.message
    assert "root:" not in result.message


def test_a_directory_swapped_for_a_symlink_out_of_the_root_after_listing_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "passwd").write_text("harmless\n")
    section = listed_section(tmp_path)
    shutil.rmtree(tmp_path / "conf")
    (tmp_path / "conf").symlink_to("/etc")

    result = call(section, "vfs_read_file", path="/conf/passwd")

    assert not result.success
    assert "'conf' on its path is a symlink" in result.message


def test_a_symlink_inside_the_root_is_read_through(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("real content\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    section = listed_section(tmp_path)

    assert "real content" in call(section, "vfs_read_file", path="/alias.txt").message


def test_a_symlink_retargeted_out_of_the_root_after_listing_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("real content\n")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    section = listed_section(tmp_path)
    (tmp_path / "alias.txt").unlink()
    (tmp_path / "alias.txt").symlink_to("/etc/hostname")

    result = call(section, "vfs_read_file", path="/alias.txt")

    assert not result.success and "resolves outside the workspace" in result.message


def test_a_file_deleted_after_listing_is_a_failed_result_naming_it(tmp_path: Path) -> None:
    (tmp_path / "gone.txt").write_text("x\n")
    section = listed_section(tmp_path)
    (tmp_path / "gone.txt").unlink()

    result = call(section, "vfs_read_file", path="/gone.txt")

    assert not result.success
    assert "gone.txt" in result.message and "no longer exists" in result.message


def test_a_file_replaced_by_a_directory_after_listing_is_a_failed_result(tmp_path: Path) -> None:
    (tmp_path / "thing").write_text("x\n")
    section = listed_section(tmp_path)
    (tmp_path / "thing").unlink()
    (tmp_path / "thing").mkdir()

    result = call(section, "vfs_read_file", path="/thing")

    assert not result.success
    assert "is a directory, not a file" in result.message


@pytest.mark.timeout(20)
def test_a_fifo_in_the_tree_is_left_out_with_a_reason_and_blocks_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    os.mkfifo(tmp_path / "pipe")
    section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(tmp_path)])

    assert "1 not_regular_file" in section.mounts_description()
    assert call(section, "vfs_grep", pattern="needle").success
    assert "no file /pipe" in call(section, "vfs_read_file", path="/pipe").message


@pytest.mark.timeout(20)
def test_a_file_replaced_by_a_fifo_after_listing_is_refused_without_blocking(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    (tmp_path / "b.txt").write_text("needle\n")
    section = listed_section(tmp_path)
    (tmp_path / "b.txt").unlink()
    os.mkfifo(tmp_path / "b.txt")

    read = call(section, "vfs_read_file", path="/b.txt")
    grep = call(section, "vfs_grep", pattern="needle")

    assert not read.success and "is a FIFO" in read.message
    assert grep.message.splitlines() == [
        "/a.txt:1: needle",
        "(1 file not searched: deleted, replaced or unreadable since listing, e.g. /b.txt)",
    ]


def test_a_socket_in_the_tree_is_left_out_with_a_reason(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(tmp_path)])
        assert "1 not_regular_file" in section.mounts_description()
    finally:
        server.close()


def test_a_device_in_the_tree_is_left_out_with_a_reason(tmp_path: Path) -> None:
    try:
        os.mknod(tmp_path / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("this environment may not create device nodes")
    section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(tmp_path)])

    assert "1 not_regular_file" in section.mounts_description()


def test_an_unreadable_file_is_a_failed_result_saying_why() -> None:
    # Root reads any file whatever its mode: the read runs in a child that dropped to nobody,
    # in a world-readable directory that user can enter.
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to an unprivileged user")
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        root.chmod(0o755)
        (root / "open.txt").write_text("readable\n")
        (root / "locked.txt").write_text("secret\n")
        (root / "locked.txt").chmod(0o000)
        success, message = read_as_nobody(root, "/locked.txt")

    assert success is False
    assert "locked.txt" in message and "Permission denied" in message


def read_as_nobody(root: Path, path: str) -> tuple[bool, str]:
    # Everything the read imports is loaded before the child drops to nobody, who may not be
    # able to read the virtual environment (a checkout under a 0700 folder): a first read of a
    # readable file does that.
    code = (
        "import json, os, sys\n"
        "from promptkit.prompt import ToolContext\n"
        "from promptkit.session import Session\n"
        "from promptkit.workspace import HostMount, VfsWorkspaceSection\n"
        "section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(sys.argv[1])])\n"
        "tool = next(t for t in section.tools if t.name == 'vfs_read_file')\n"
        "context = ToolContext(prompt_ns='t', prompt_key='t', call_id='c')\n"
        "assert tool.run(tool.parse_arguments({'path': '/open.txt'}), context).success\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "result = tool.run(tool.parse_arguments({'path': sys.argv[2]}), context)\n"
        "print(json.dumps([result.success, result.message]))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code, str(root), path],
        capture_output=True,
        text=True,
        check=True,
    )
    success, message = json.loads(completed.stdout)
    return bool(success), str(message)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_names_that_are_not_utf8_or_hold_a_newline_are_left_out_with_a_reason(
    tmp_path: Path, in_git: bool
) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "ok.txt").write_text("ok\n")
    (root / "two\nlines.txt").write_text("x\n")
    (root / os.fsdecode(b"caf\xe9.txt")).write_text("x\n")
    if in_git:
        git(root, "init", "-q")

    section = VfsWorkspaceSection(session=Session(), mounts=[HostMount(root)])
    description = section.mounts_description()

    assert "- `/`: 1 file" in description
    assert "1 non_utf8_name" in description and "1 unsafe_name" in description
    assert call(section, "vfs_list_directory", path="/").value["entries"] == ["ok.txt"]
