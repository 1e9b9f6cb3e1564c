"""The one way this package runs git: read-only, non-interactive, with a predictable environment.

Every call clears the caller's `GIT_*` variables (a `GIT_DIR` inherited from a hook would point
git at another repository), never prompts (`GIT_TERMINAL_PROMPT=0`, stdin closed), takes no
optional locks (so reading never fights a concurrent `git commit`), disables a repository's
fsmonitor hook (reading a workspace must not run its programs) and speaks `LC_ALL=C`.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

GIT_TIMEOUT_SECONDS = 30.0


def git_environment() -> dict[str, str]:
    """The environment every git subprocess of this package runs with."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C", LANGUAGE="C")
    return env


def run_git(root: Path, *args: str) -> bytes | None:
    """git's stdout for `args` run in `root`, or None when git is missing, fails or hangs."""
    return start_git_together(root, args).outputs()[0]


def run_git_together(root: Path, *commands: tuple[str, ...]) -> list[bytes | None]:
    """`run_git` for each of `commands`, run side by side (listing a big tree is I/O bound)."""
    return start_git_together(root, *commands).outputs()


def start_git_together(root: Path, *commands: tuple[str, ...]) -> RunningGit:
    """Start each of `commands` in `root` and return at once; `outputs()` collects them.

    Each writes into an unnamed temporary file rather than a pipe: git fills a pipe's 64 KiB in
    an instant and would then wait for the caller to read, so a listing of 100,000 files (20 MB
    of index data) would run only once `outputs()` is called instead of while the caller works.
    """
    env = git_environment()
    return RunningGit(
        tuple(
            start_into_file(["git", "-c", "core.fsmonitor=false", *args], cwd=root, env=env)
            for args in commands
        )
    )


def start_into_file(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], IO[bytes]] | None:
    """Start `command` with its stdout going to an unnamed temporary file (stdin closed, stderr
    dropped); the process and the file, which the caller closes once it has read it, or None
    when the file or the process cannot be made."""
    try:
        # Kept open past this call: the caller closes it once the output is read.
        output = tempfile.TemporaryFile()  # noqa: SIM115
    except OSError:
        return None
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, ValueError):
        output.close()
        return None
    return process, output


@dataclass(frozen=True)
class RunningGit:
    """git commands under way in other processes, so the caller can work meanwhile; each with
    the file its stdout goes to."""

    processes: tuple[tuple[subprocess.Popen[bytes], IO[bytes]] | None, ...]

    def outputs(self) -> list[bytes | None]:
        """Each command's stdout, waited for (None for a failure, a timeout or a missing git)."""
        return [self.output(index) for index in range(len(self.processes))]

    def texts(self) -> list[str | None]:
        """Each command's stdout, decoded and stripped (None for a failure or an empty
        answer), waited for."""
        return [_as_text(output) for output in self.outputs()]

    def output(self, index: int) -> bytes | None:
        """The stdout of command `index` alone, waited for, so the caller can work on it while
        the others still run; each command's output is collected once."""
        started = self.processes[index]
        if started is None:
            return None
        process, output = started
        with output:
            if not exits_within(process, GIT_TIMEOUT_SECONDS):
                process.kill()
                process.wait()
                return None
            if process.returncode != 0:
                return None
            output.seek(0)
            return output.read()


def exits_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Wait for `process` to exit, at most `seconds`; whether it did (and was reaped).

    `Popen.wait(timeout=...)` polls, sleeping up to 50 ms between looks, so it returns up to
    that long after the process ended: on Linux a pidfd wakes this wait the moment it ends.
    """
    if process.returncode is not None:
        return True  # reaped already: its pid may belong to another process by now
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or the process is already reaped
        pidfd = None
    if pidfd is not None:
        try:
            select.select([pidfd], [], [], seconds)
        finally:
            os.close(pidfd)
    try:
        process.wait(timeout=0 if pidfd is not None else seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def _as_text(output: bytes | None) -> str | None:
    if output is None:
        return None
    text = output.decode("utf-8", errors="replace").strip()
    return text or None
