"""File selection: what a workspace exposes, in git work trees and plain directories."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from promptkit.errors import WorkspaceError
from promptkit.hostfiles import read_workspace_bytes, select_files

GitRunner = Callable[..., str]
Writer = Callable[[Path, str, str | bytes], Path]
Committer = Callable[..., str]


def paths_of(root: Path) -> list[str]:
    return [file.path for file in select_files(root).files]


# -- git work trees ----------------------------------------------------------------------------


def test_git_selection_lists_tracked_and_untracked_files_but_not_ignored(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, ".gitignore", "build/\n*.log\n")
    write(repo, "src/app.py", "print('hi')\n")
    commit(repo)
    write(repo, "notes.md", "untracked\n")
    write(repo, "build/out.txt", "ignored\n")
    write(repo, "debug.log", "ignored\n")
    selection = select_files(repo)
    assert selection.from_git
    assert [file.path for file in selection.files] == [".gitignore", "notes.md", "src/app.py"]


def test_clean_tracked_file_carries_its_git_blob_id(
    repo: Path, write: Writer, commit: Committer, git: GitRunner
) -> None:
    write(repo, "a.txt", "alpha\n")
    commit(repo)
    (file,) = select_files(repo).files
    assert file.blob_id == git(repo, "hash-object", "a.txt")
    assert file.size == len("alpha\n")


def test_modified_or_untracked_file_has_no_blob_id(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "tracked.txt", "one\n")
    commit(repo)
    write(repo, "tracked.txt", "two\n")
    write(repo, "new.txt", "new\n")
    assert [(file.path, file.blob_id) for file in select_files(repo).files] == [
        ("new.txt", None),
        ("tracked.txt", None),
    ]


def test_deleted_tracked_file_is_skipped(repo: Path, write: Writer, commit: Committer) -> None:
    write(repo, "gone.txt", "x\n")
    write(repo, "kept.txt", "y\n")
    commit(repo)
    (repo / "gone.txt").unlink()
    selection = select_files(repo)
    assert [file.path for file in selection.files] == ["kept.txt"]
    assert selection.skipped_count("missing") == 1


def test_tracked_file_under_a_directory_replaced_by_a_symlink_to_etc_is_not_read(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "conf/passwd", "tracked content\n")
    commit(repo)
    (repo / "conf" / "passwd").unlink()
    (repo / "conf").rmdir()
    (repo / "conf").symlink_to("/etc")
    selection = select_files(repo)
    assert selection.files == ()
    assert selection.skipped_count("symlinked_directory") == 1


def test_empty_repository_selects_untracked_files(repo: Path, write: Writer) -> None:
    write(repo, "README.md", "# hello\n")
    assert paths_of(repo) == ["README.md"]


def test_directory_ignored_by_its_enclosing_repository_is_walked(repo: Path, write: Writer) -> None:
    write(repo, ".gitignore", "vendor/\n")
    write(repo, "vendor/lib/code.py", "x = 1\n")
    selection = select_files(repo / "vendor")
    assert not selection.from_git
    assert [file.path for file in selection.files] == ["lib/code.py"]


def test_selecting_an_unchanged_repository_again_gives_the_same_selection(
    repo: Path, write: Writer, commit: Committer
) -> None:
    write(repo, "notes.txt", "text\n")
    write(repo, "table.dat", b"\x00\x01 binary without a known extension")
    commit(repo)
    first = select_files(repo)
    again = select_files(repo)
    assert again == first
    assert [file.path for file in again.files] == ["notes.txt", "table.dat"]


def test_content_is_not_sniffed_so_a_nul_byte_does_not_change_the_listing(
    repo: Path, write: Writer, commit: Committer
) -> None:
    # Binary content is found when a file is read (the VFS refuses it); listing opens nothing.
    write(repo, "data.txt", "plain text\n")
    commit(repo)
    assert paths_of(repo) == ["data.txt"]
    write(repo, "data.txt", b"plain\x00text\n")
    assert paths_of(repo) == ["data.txt"]


# -- plain directories -------------------------------------------------------------------------


def test_walk_honours_gitignore_files_at_every_level(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, ".gitignore", "*.log\ndist/\n")
    write(tmp_path, "app.py", "x\n")
    write(tmp_path, "run.log", "x\n")
    write(tmp_path, "dist/app.whl.txt", "x\n")
    write(tmp_path, "pkg/.gitignore", "generated_*\n!generated_keep.py\n")
    write(tmp_path, "pkg/generated_a.py", "x\n")
    write(tmp_path, "pkg/generated_keep.py", "x\n")
    write(tmp_path, "pkg/mod.py", "x\n")
    write(tmp_path, "pkg/deep/trace.log", "x\n")
    selection = select_files(tmp_path)
    assert not selection.from_git
    assert [file.path for file in selection.files] == [
        ".gitignore",
        "app.py",
        "pkg/.gitignore",
        "pkg/generated_keep.py",
        "pkg/mod.py",
    ]


def test_walk_prunes_vcs_metadata_and_dependency_directories(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "main.py", "x\n")
    for directory in (".hg", "node_modules/left-pad", "__pycache__", ".venv/lib"):
        write(tmp_path, f"{directory}/file.txt", "x\n")
    assert paths_of(tmp_path) == ["main.py"]


def test_walked_files_have_mtimes_and_no_blob_ids(tmp_path: Path, write: Writer) -> None:
    target = write(tmp_path, "a.txt", "abc\n")
    (file,) = select_files(tmp_path).files
    assert file.blob_id is None
    assert file.mtime_ns == target.stat().st_mtime_ns


# -- always excluded ---------------------------------------------------------------------------


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_files_of_binary_formats_are_left_out_by_name_and_counted(
    tmp_path: Path, git: GitRunner, write: Writer, in_git: bool
) -> None:
    if in_git:
        git(tmp_path, "init", "-q")
    write(tmp_path, "text.txt", "plain\n")
    write(tmp_path, "logo.png", b"not opened: known binary extension")
    write(tmp_path, "archive.tar.gz", b"not opened either")
    selection = select_files(tmp_path)
    assert [file.path for file in selection.files] == ["text.txt"]
    assert selection.skipped_count("binary") == 2


def test_nul_byte_after_the_first_8_kib_does_not_make_a_file_binary(
    tmp_path: Path, write: Writer
) -> None:
    write(tmp_path, "long.txt", b"a" * 9000 + b"\x00")
    assert paths_of(tmp_path) == ["long.txt"]


def test_file_over_the_size_cap_is_left_out(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "small.txt", "x" * 10)
    write(tmp_path, "huge.txt", "x" * 101)
    selection = select_files(tmp_path, max_file_bytes=100)
    assert [file.path for file in selection.files] == ["small.txt"]
    assert selection.skipped_count("too_large") == 1


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".env.local",
        ".env.example",
        "prod.env",
        "server.pem",
        "tls.key",
        "cert.p12",
        "cert.pfx",
        "id_rsa",
        "id_ed25519.pub",
        "id_ecdsa",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "credentials.json",
        "service-account.json",
        "serviceAccountKey.json",
        "release.keystore",
        ".htpasswd",
        ".git-credentials",
        "terraform.tfstate",
    ],
)
@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_credential_files_are_left_out(
    tmp_path: Path, git: GitRunner, write: Writer, name: str, in_git: bool
) -> None:
    if in_git:
        git(tmp_path, "init", "-q")
    write(tmp_path, "config/" + name, "SECRET=value\n")
    write(tmp_path, "app.py", "x\n")
    selection = select_files(tmp_path)
    assert [file.path for file in selection.files] == ["app.py"]
    assert selection.skipped_count("credential") == 1


def test_symlink_inside_root_to_a_credential_file_is_left_out(
    tmp_path: Path, write: Writer
) -> None:
    write(tmp_path, ".env", "TOKEN=x\n")
    (tmp_path / "settings.txt").symlink_to(".env")
    selection = select_files(tmp_path)
    assert selection.files == ()
    assert selection.skipped_count("credential") == 2


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_symlinks_to_etc_are_left_out(
    tmp_path: Path, git: GitRunner, write: Writer, in_git: bool
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    if in_git:
        git(root, "init", "-q")
    write(root, "a.txt", "x\n")
    (root / "etc").symlink_to("/etc")
    (root / "passwd").symlink_to("/etc/passwd")
    write(tmp_path, "outside.txt", "outside the root\n")
    (root / "sibling.txt").symlink_to("../outside.txt")
    selection = select_files(root)
    assert [file.path for file in selection.files] == ["a.txt"]
    assert selection.skipped_count("symlink_outside_root") == 3


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_symlink_to_a_file_inside_the_root_is_selected_with_the_targets_size(
    tmp_path: Path, git: GitRunner, write: Writer, in_git: bool
) -> None:
    if in_git:
        git(tmp_path, "init", "-q")
    write(tmp_path, "docs/real.md", "12345\n")
    (tmp_path / "alias.md").symlink_to("docs/real.md")
    files = {file.path: file.size for file in select_files(tmp_path).files}
    assert files == {"alias.md": 6, "docs/real.md": 6}


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_symlinked_directory_inside_the_root_is_never_followed(
    tmp_path: Path, git: GitRunner, write: Writer, in_git: bool
) -> None:
    if in_git:
        git(tmp_path, "init", "-q")
    write(tmp_path, "pkg/mod.py", "x\n")
    (tmp_path / "pkg_link").symlink_to("pkg")
    selection = select_files(tmp_path)
    assert [file.path for file in selection.files] == ["pkg/mod.py"]
    assert selection.skipped_count("symlinked_directory") == 1


def test_fifo_is_skipped_without_being_opened(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "a.txt", "x\n")
    os.mkfifo(tmp_path / "pipe")
    selection = select_files(tmp_path)
    assert [file.path for file in selection.files] == ["a.txt"]
    assert selection.skipped_count("not_regular_file") == 1


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "walk"])
def test_file_with_a_non_utf8_name_is_skipped_and_counted(
    tmp_path: Path, git: GitRunner, write: Writer, in_git: bool
) -> None:
    if in_git:
        git(tmp_path, "init", "-q")
    write(tmp_path, "ok.txt", "x\n")
    (Path(os.fsdecode(bytes(tmp_path))) / os.fsdecode(b"caf\xe9.txt")).write_text("x\n")
    selection = select_files(tmp_path)
    assert [file.path for file in selection.files] == ["ok.txt"]
    assert selection.skipped_count("non_utf8_name") == 1


def test_non_utf8_text_file_is_selected(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "latin1.txt", "café crème\n".encode("latin-1"))
    assert paths_of(tmp_path) == ["latin1.txt"]


def test_unreadable_file_is_listed_because_listing_opens_no_file() -> None:
    # Root reads any file whatever its mode, so the selection runs in a forked child that has
    # dropped to an unprivileged user, in a world-readable directory that user can enter. The
    # VFS refuses the file when it is read (test_vfs_bad_input).
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        root.chmod(0o755)
        (root / "open.txt").write_text("x\n")
        (root / "open.txt").chmod(0o644)
        (root / "locked.txt").write_text("secret\n")
        (root / "locked.txt").chmod(0o000)
        assert select_in_unprivileged_child(root) == [["locked.txt", "open.txt"], 0]


def select_in_unprivileged_child(root: Path) -> list[object]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe and exits
        os.close(read_end)
        status = 1
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            selection = select_files(root)
            report = [[f.path for f in selection.files], selection.skipped_count("unreadable")]
            os.write(write_end, json.dumps(report).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        output = pipe.read()
    _, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 0
    result: list[object] = json.loads(output)
    return result


def test_missing_directory_raises_a_workspace_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does-not-exist"):
        select_files(tmp_path / "does-not-exist")


def test_file_given_as_root_raises_a_workspace_error(tmp_path: Path, write: Writer) -> None:
    with pytest.raises(WorkspaceError, match="not a directory"):
        select_files(write(tmp_path, "file.txt", "x\n"))


# -- reading ------------------------------------------------------------------------------------


def test_read_workspace_bytes_reads_up_to_the_limit(tmp_path: Path, write: Writer) -> None:
    write(tmp_path, "a.txt", "abcdef")
    assert read_workspace_bytes(tmp_path.resolve(), "a.txt", limit=3) == b"abc"


@pytest.mark.parametrize("relative", ["../outside.txt", "/etc/passwd", "sub/../../outside.txt"])
def test_read_workspace_bytes_refuses_paths_that_escape_the_root(
    tmp_path: Path, write: Writer, relative: str
) -> None:
    root = tmp_path / "root"
    write(root, "sub/a.txt", "x")
    write(tmp_path, "outside.txt", "outside")
    with pytest.raises(WorkspaceError, match="escapes the workspace"):
        read_workspace_bytes(root.resolve(), relative, limit=100)


def test_read_workspace_bytes_refuses_a_symlink_leading_outside(tmp_path: Path) -> None:
    (tmp_path / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        read_workspace_bytes(tmp_path.resolve(), "passwd", limit=100)
