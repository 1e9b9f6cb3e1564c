"""Environment failures in the CLI and the REPL: one line on stderr saying what and where, the
documented exit status (promptkit._failures), no traceback, and the files already there
left exactly as they were. Each case is a real `python -m promptkit` process in a real
environment: a file-size limit (RLIMIT_FSIZE) stands in for a full disk, and a test running as
root drops the capabilities that let root ignore file permissions."""

from __future__ import annotations

import ctypes
import os
import resource
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from promptkit._failures import (
    EXIT_IO,
    EXIT_NOT_FOUND,
    EXIT_NOT_UTF8,
    EXIT_PERMISSION,
    EXIT_USAGE,
    EXIT_WRONG_KIND_OF_PATH,
)

from .conftest import committed_repo, offline_env
from .overrides.conftest import write_prompt_module

REF = "review_prompts:PROMPT"
OVERRIDE = Path("overrides/reviewer/code-review/latest.toml")
_PR_CAPBSET_DROP = 24
# CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER: what lets root ignore permissions.
_PERMISSION_CAPABILITIES = (1, 2, 3)


def _without_permission_override() -> None:
    """Run in the child before exec: as root, lose the capabilities that bypass permissions."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in _PERMISSION_CAPABILITIES:
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def promptkit(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
    before_exec: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "promptkit", *args],
        cwd=cwd,
        env=env if env is not None else offline_env(),
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
        preexec_fn=before_exec,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def assert_one_line_failure(done: subprocess.CompletedProcess[str], status: int) -> str:
    """The one line reporting the failure (the last on stderr, after any progress lines),
    once the status and the absence of a traceback are checked."""
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    reports = [line for line in lines if line.startswith("promptkit: error: ")]
    assert reports == lines[-1:], done.stderr
    assert done.returncode == status, done.stderr
    return reports[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with the review prompt module and one stored override."""
    write_prompt_module(tmp_path)
    stored = promptkit(
        "overrides", "set", "--prompt", REF, "--path", "intro", "--body", "Kept.", cwd=tmp_path
    )
    assert stored.returncode == 0, stored.stderr
    return tmp_path


def _set_intro(
    project: Path, *extra: str, before_exec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return promptkit(
        "overrides",
        "set",
        "--prompt",
        REF,
        "--path",
        "intro",
        *extra,
        cwd=project,
        before_exec=before_exec,
    )


def test_a_full_disk_is_one_line_with_status_74_and_the_override_kept(project: Path) -> None:
    before = (project / OVERRIDE).read_bytes()

    (project / "long.md").write_text("x" * 200_000)

    done = _set_intro(project, "--from-file", "long.md", before_exec=_file_size_limit(64_000))

    line = assert_one_line_failure(done, EXIT_IO)
    assert "File too large" in line
    assert (project / OVERRIDE).read_bytes() == before


def _read_only_mounts_available() -> bool:
    """Whether this machine lets an unprivileged process mount in a namespace of its own."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run([unshare, "-rm", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def _on_read_only_mount(folder: Path, *args: str) -> list[str]:
    """`args` run in a mount namespace where `folder` is a read-only bind mount of itself."""
    where = shlex.quote(str(folder))
    command = shlex.join(args)
    script = (
        f"mount --bind {where} {where} && mount -o remount,bind,ro {where} {where}"
        f" && exec {command}"
    )
    return ["unshare", "-rm", "sh", "-c", script]


@pytest.mark.skipif(
    not _read_only_mounts_available(),
    reason="needs `unshare -rm` (user and mount namespaces) to mount a read-only filesystem",
)
def test_a_read_only_filesystem_is_one_line_with_status_74_and_the_override_kept(
    project: Path,
) -> None:
    before = (project / OVERRIDE).read_bytes()
    command = [sys.executable, "-m", "promptkit", "overrides", "set", "--prompt", REF]
    command += ["--path", "intro", "--body", "Replaced."]

    done = subprocess.run(
        _on_read_only_mount(project / "overrides", *command),
        cwd=project,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    line = assert_one_line_failure(done, EXIT_IO)
    assert "Read-only file system; choose a location on a writable filesystem" in line
    assert str(project / "overrides") in line
    assert (project / OVERRIDE).read_bytes() == before


def test_a_read_only_state_folder_is_one_line_with_status_77(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"README.md": "# Demo\n\nRun `make test`.\n"})
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    (read_only / "kept.txt").write_text("kept")
    read_only.chmod(0o555)
    try:
        done = promptkit(
            "optimize",
            str(repo),
            "--provider",
            "static",
            "--state-dir",
            str(read_only / "state"),
            cwd=tmp_path,
            before_exec=_without_permission_override,
        )
    finally:
        read_only.chmod(0o755)

    line = assert_one_line_failure(done, EXIT_PERMISSION)
    assert str(read_only / "state") in line
    assert sorted(path.name for path in read_only.iterdir()) == ["kept.txt"]


def test_an_unreadable_override_file_is_one_line_with_status_77(project: Path) -> None:
    before = (project / OVERRIDE).read_bytes()
    (project / OVERRIDE).chmod(0o000)
    try:
        done = promptkit(
            "overrides",
            "show",
            "--prompt",
            REF,
            cwd=project,
            before_exec=_without_permission_override,
        )
    finally:
        (project / OVERRIDE).chmod(0o644)

    line = assert_one_line_failure(done, EXIT_PERMISSION)
    assert "latest.toml" in line
    assert (project / OVERRIDE).read_bytes() == before


def test_a_state_path_that_is_a_file_is_one_line_with_status_73(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"README.md": "# Demo\n\nRun `make test`.\n"})
    (tmp_path / "state").write_text("not a folder")

    done = promptkit(
        "optimize", str(repo), "--provider", "static", "--state-dir", "state", cwd=tmp_path
    )

    line = assert_one_line_failure(done, EXIT_WRONG_KIND_OF_PATH)
    assert "state" in line
    assert (tmp_path / "state").read_text() == "not a folder"


def test_a_session_event_log_that_is_a_fifo_is_one_line_and_no_wait(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"README.md": "# Demo\n\nRun `make test`.\n"})
    stored = promptkit(
        "optimize", str(repo), "--provider", "static", "--state-dir", "state", cwd=tmp_path
    )
    assert stored.returncode == 0, stored.stderr
    [events] = (tmp_path / "state").rglob("events.jsonl")
    events.unlink()
    os.mkfifo(events)

    done = promptkit("digest", "status", str(repo), "--state-dir", "state", cwd=tmp_path)

    line = assert_one_line_failure(done, EXIT_USAGE)
    assert "events.jsonl: a FIFO, not a regular file, so it was not read" in line


def test_an_overrides_root_that_is_a_file_is_one_line_with_status_73(project: Path) -> None:
    (project / "not-a-folder").write_text("kept")

    done = _set_intro(project, "--body", "New.", "--root", "not-a-folder")

    line = assert_one_line_failure(done, EXIT_WRONG_KIND_OF_PATH)
    assert "not-a-folder" in line
    assert (project / "not-a-folder").read_text() == "kept"


def test_a_symlink_loop_is_one_line_with_status_73(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"README.md": "# Demo\n\nRun `make test`.\n"})
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")

    done = promptkit(
        "optimize", str(repo), "--provider", "static", "--state-dir", "loop-a/x", cwd=tmp_path
    )

    line = assert_one_line_failure(done, EXIT_WRONG_KIND_OF_PATH)
    assert "loop-a" in line
    assert (tmp_path / "loop-a").readlink() == Path("loop-b")


def test_a_body_file_that_is_not_utf8_is_one_line_with_status_65(project: Path) -> None:
    before = (project / OVERRIDE).read_bytes()
    (project / "body.md").write_bytes(b"caf\xe9 au lait\n")

    done = _set_intro(project, "--from-file", "body.md")

    line = assert_one_line_failure(done, EXIT_NOT_UTF8)
    assert "body.md" in line
    assert (project / OVERRIDE).read_bytes() == before


def test_a_body_on_stdin_that_is_not_utf8_is_one_line_with_status_65(project: Path) -> None:
    before = (project / OVERRIDE).read_bytes()

    done = promptkit(
        "overrides",
        "set",
        "--prompt",
        REF,
        "--path",
        "intro",
        "--from-file",
        "-",
        cwd=project,
        stdin=b"caf\xe9 au lait\n",
    )

    line = assert_one_line_failure(done, EXIT_NOT_UTF8)
    assert "stdin is not UTF-8 text" in line
    assert (project / OVERRIDE).read_bytes() == before


def test_a_body_argument_that_is_not_utf8_is_one_line_with_status_65(project: Path) -> None:
    before = (project / OVERRIDE).read_bytes()

    done = _set_intro(project, "--body", os.fsdecode(b"caf\xe9 au lait"))

    line = assert_one_line_failure(done, EXIT_NOT_UTF8)
    assert "--body is not UTF-8 text" in line
    assert (project / OVERRIDE).read_bytes() == before


def test_a_body_file_that_is_a_fifo_is_refused_unread_in_one_line(project: Path) -> None:
    os.mkfifo(project / "body.fifo")

    done = _set_intro(project, "--from-file", "body.fifo")

    line = assert_one_line_failure(done, EXIT_USAGE)
    assert "body.fifo: a FIFO, not a regular file; it was not read" in line


def test_repl_input_that_is_not_utf8_is_one_line_with_status_65(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"README.md": "# Demo\n\nRun `make test`.\n"})

    done = promptkit(
        "repl",
        str(repo),
        "--provider",
        "static",
        "--state-dir",
        "state",
        cwd=tmp_path,
        stdin=b"help\ndigest \xff\xfe\n",
    )

    assert_one_line_failure(done, EXIT_NOT_UTF8)


def test_a_missing_editor_is_one_line_with_status_66_and_the_override_kept(
    project: Path,
) -> None:
    before = (project / OVERRIDE).read_bytes()
    env = {**offline_env(), "EDITOR": "no-such-editor-anywhere --wait"}
    env.pop("VISUAL", None)

    done = promptkit("overrides", "edit", "--prompt", REF, "--path", "intro", cwd=project, env=env)

    line = assert_one_line_failure(done, EXIT_NOT_FOUND)
    assert "no-such-editor-anywhere" in line
    assert (project / OVERRIDE).read_bytes() == before


def test_a_repl_command_failing_on_the_environment_is_one_line_and_the_loop_goes_on(
    tmp_path: Path,
) -> None:
    repo = committed_repo(tmp_path / "repo", {"README.md": "# Demo\n\nRun `make test`.\n"})
    (tmp_path / "overrides-file").write_text("kept")

    done = promptkit(
        "repl",
        str(repo),
        "--provider",
        "static",
        "--state-dir",
        "state",
        "--overrides-dir",
        "overrides-file",
        cwd=tmp_path,
        stdin=b"optimize global\nhelp\n",
    )

    assert "Traceback" not in done.stderr
    [report] = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert "overrides-file" in report
    assert "optimize" in done.stdout  # `help` still ran after the failure
    assert done.returncode == 1
    assert (tmp_path / "overrides-file").read_text() == "kept"
