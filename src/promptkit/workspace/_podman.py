"""`PodmanWorkspaceSection`: the `vfs_*` file tools plus `shell_execute` in a podman container.

The file tools are the VFS section's, over the same overlay of the mounts. Each
`shell_execute` writes what the file tools show (the listed files read from the host now, with
the model's own `vfs_write_file` changes, and without the credential, binary and oversized files
the listing leaves out) to a temporary directory, mounts it
read-only at `/workspace` in a fresh `podman run --rm` container, and deletes it afterwards. The
container has no network unless `network=True`, a read-only root filesystem (podman's tmpfs on
`/tmp` stays writable), no capabilities and `no-new-privileges`. Commands see exactly what the
file tools show, and nothing they do reaches the host's files.

Construction runs a trivial container once per (podman, runtime, image, limits) and raises
`WorkspaceUnavailableError` saying how to fix it when podman is missing or cannot run.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import PromptValidationError, WorkspaceError, WorkspaceUnavailableError
from promptkit.logging import get_logger
from promptkit.prompt import Tool, ToolContext, ToolResult
from promptkit.workspace._overlay import Overlay
from promptkit.workspace._vfs import WorkspaceSection

__all__ = [
    "CONTAINER_WORKSPACE",
    "DEFAULT_IMAGE",
    "PodmanWorkspaceSection",
    "podman_run_command",
]

_log = get_logger("promptkit.workspace")

DEFAULT_IMAGE = "docker.io/library/python:3.12-slim"
CONTAINER_WORKSPACE = "/workspace"
DEFAULT_SHELL_TIMEOUT = 60.0
MAX_SHELL_TIMEOUT = 600.0
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024
# Explicit limits: podman's defaults raise RLIMIT_NOFILE/NPROC, which fails wherever the caller
# may not raise its own hard limits (nested containers, CI sandboxes); lower limits always work.
DEFAULT_ULIMITS = ("nofile=1024:1024", "nproc=4096:4096")
_PROBE_TIMEOUT = 120.0
_INSTALL_HINT = (
    "install podman (Debian/Ubuntu: `apt-get install podman`, Fedora: `dnf install podman`,"
    " macOS: `brew install podman` then `podman machine init && podman machine start`)"
    " or use VfsWorkspaceSection, which needs no container runtime"
)


class _ShellParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str = Field(min_length=1, description="Shell command run with `/bin/sh -c`.")
    timeout: float = Field(
        default=DEFAULT_SHELL_TIMEOUT,
        gt=0,
        le=MAX_SHELL_TIMEOUT,
        description=f"Seconds before the command is stopped (at most {MAX_SHELL_TIMEOUT:g}).",
    )


def podman_run_command(
    *,
    podman: str,
    image: str,
    workspace_dir: str,
    command: str,
    container_name: str,
    network: bool = False,
    runtime: str | None = None,
    ulimits: Sequence[str] = DEFAULT_ULIMITS,
) -> list[str]:
    """The argv of one sandboxed `podman run` of `command` over `workspace_dir` (read-only)."""
    argv = [podman]
    if runtime is not None:
        argv += ["--runtime", runtime]
    argv += [
        "run",
        "--rm",
        "--pull=never",
        f"--name={container_name}",
        "--read-only",
        "--cap-drop=all",
        "--security-opt=no-new-privileges",
    ]
    if not network:
        argv.append("--network=none")
    for limit in ulimits:
        argv += ["--ulimit", limit]
    argv += [
        "--volume",
        f"{workspace_dir}:{CONTAINER_WORKSPACE}:ro",
        "--workdir",
        CONTAINER_WORKSPACE,
        image,
        "/bin/sh",
        "-c",
        command,
    ]
    return argv


@functools.lru_cache(maxsize=16)
def _probe(podman: str, runtime: str | None, image: str, ulimits: tuple[str, ...]) -> None:
    """Run `true` in a container once; WorkspaceUnavailableError with the reason otherwise.

    Only success is cached (an exception is never cached), so installing podman or pulling
    the image is noticed by the next construction.
    """
    executable = shutil.which(podman)
    if executable is None:
        raise WorkspaceUnavailableError(
            f"podman was not found on PATH (looked for {podman!r}): {_INSTALL_HINT}"
        )
    exists = _run([executable, "image", "exists", image], timeout=_PROBE_TIMEOUT)
    if exists.returncode not in (0, 1):
        reason = _last_line(exists.stderr) or f"exit status {exists.returncode}"
        raise WorkspaceUnavailableError(f"podman does not work here: {reason}; check `podman info`")
    if exists.returncode == 1:
        raise WorkspaceUnavailableError(
            f"podman has no local image {image!r}: run `podman pull {image}` (or pass image= an"
            " image you have); the workspace never pulls images itself"
        )
    with tempfile.TemporaryDirectory(prefix="promptkit-probe-") as directory:
        argv = podman_run_command(
            podman=executable,
            image=image,
            workspace_dir=directory,
            command="true",
            container_name=f"promptkit-probe-{uuid.uuid4().hex[:12]}",
            runtime=runtime,
            ulimits=ulimits,
        )
        probe = _run(argv, timeout=_PROBE_TIMEOUT)
    if probe.returncode != 0:
        reason = _last_line(probe.stderr) or f"exit status {probe.returncode}"
        hint = (
            "try runtime='runc' (crun cannot run where cgroups are in hybrid mode)"
            if "cgroup" in reason
            else "check `podman run --rm IMAGE true` by hand"
        )
        raise WorkspaceUnavailableError(f"podman cannot run containers here: {reason}; {hint}")


def _run(argv: list[str], *, timeout: float) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise WorkspaceUnavailableError(
            f"podman did not answer within {timeout:g}s ({' '.join(argv[:3])} ...): check that"
            " `podman info` works"
        ) from None
    except OSError as error:
        raise WorkspaceUnavailableError(
            f"podman could not be started ({error.strerror or error}): {_INSTALL_HINT}"
        ) from None


def _last_line(output: bytes) -> str:
    lines = output.decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1].strip() if lines else ""


_PODMAN_GUIDANCE = """\
The workspace is an in-memory copy of the mounted directories below, with two ways in.
The `vfs_*` tools read and search it: `vfs_list_directory`, `vfs_glob` (`**/*.py`),
`vfs_grep` (regular expressions) and `vfs_read_file` (numbered lines, `offset` and `limit`).
`vfs_write_file` changes the copy only; the host files are never modified.
`shell_execute` runs a command with `/bin/sh -c` in a fresh container where the copy, with
your writes, is mounted read-only at `/workspace` (the working directory); `/tmp` is writable
and is discarded after each command. Use it to run tests, linters or scripts. Credential
files, binary files and very large files were not copied."""


@dataclass(frozen=True, kw_only=True, eq=False)
class PodmanWorkspaceSection(WorkspaceSection):
    """The VFS file tools plus `shell_execute` in a podman container (see the module doc).

    `network=False` runs commands with `--network=none`. `runtime` selects podman's OCI
    runtime (`runc`, `crun`); `ulimits` are passed as `--ulimit` values.
    """

    image: str = DEFAULT_IMAGE
    network: bool = False
    podman: str = "podman"
    runtime: str | None = None
    ulimits: tuple[str, ...] = DEFAULT_ULIMITS
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES

    def original_body_template(self) -> str:
        return _PODMAN_GUIDANCE

    def _check_backend(self) -> None:
        if not isinstance(self.image, str) or not self.image.strip():
            raise PromptValidationError(f"section {self.key!r}: image must name a podman image")
        object.__setattr__(self, "ulimits", tuple(self.ulimits))
        if self.max_output_bytes <= 0:
            raise PromptValidationError(f"section {self.key!r}: max_output_bytes must be > 0")
        _probe(self.podman, self.runtime, self.image, self.ulimits)

    def _backend_tools(self) -> tuple[Tool[Any], ...]:
        return (
            Tool(
                name="shell_execute",
                description="Run a shell command in a sandboxed container over the workspace"
                " copy (read-only at /workspace, no network); returns exit status and output.",
                params_type=_ShellParams,
                handler=self._shell_execute,
            ),
        )

    def _shell_execute(self, params: _ShellParams, context: ToolContext) -> ToolResult:
        timeout = min(params.timeout, MAX_SHELL_TIMEOUT)
        remaining = context.remaining_s()
        if remaining is not None:
            timeout = min(timeout, remaining)
        if timeout <= 0:
            return ToolResult(
                message="shell_execute: no time left before the deadline", success=False
            )
        executable = shutil.which(self.podman)
        if executable is None:
            return ToolResult(
                message=f"shell_execute: podman is no longer on PATH ({_INSTALL_HINT})",
                success=False,
            )
        name = f"promptkit-{uuid.uuid4().hex[:16]}"
        with tempfile.TemporaryDirectory(prefix="promptkit-workspace-") as directory:
            _materialize(self.overlay, Path(directory))
            argv = podman_run_command(
                podman=executable,
                image=self.image,
                workspace_dir=directory,
                command=params.command,
                container_name=name,
                network=self.network,
                runtime=self.runtime,
                ulimits=self.ulimits,
            )
            started = SYSTEM_CLOCK.monotonic()
            try:
                completed = subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                self._remove_container(executable, name)
                return ToolResult(
                    message=f"shell_execute: `{params.command}` was stopped after {timeout:g}s",
                    value={"exit_code": None, "timed_out": True},
                    success=False,
                )
            except OSError as error:
                return ToolResult(
                    message=f"shell_execute: podman could not be started: {error.strerror}",
                    success=False,
                )
        elapsed = SYSTEM_CLOCK.monotonic() - started
        stdout = _clip_output(completed.stdout, self.max_output_bytes)
        stderr = _clip_output(completed.stderr, self.max_output_bytes)
        _log.debug(
            "shell_executed",
            container=name,
            exit_code=completed.returncode,
            duration_s=round(elapsed, 3),
        )
        parts = [f"exit code {completed.returncode}"]
        if stdout:
            parts.append(f"stdout:\n{stdout}")
        if stderr:
            parts.append(f"stderr:\n{stderr}")
        return ToolResult(
            message="\n".join(parts),
            value={"exit_code": completed.returncode, "timed_out": False},
            success=completed.returncode == 0,
        )

    def _remove_container(self, executable: str, name: str) -> None:
        # Killing the podman client can leave the container running under conmon.
        try:
            subprocess.run(
                [executable, "rm", "--force", "--time=0", name],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            _log.warning("container_not_removed", container=name, error=str(error))


def _materialize(overlay: Overlay, directory: Path) -> None:
    """Write every file the overlay shows under `directory` (paths are normalised, so they stay
    inside it); a file that cannot be read now is left out, as the file tools would refuse it."""
    # Readable by any user the image runs as; the directory is mounted read-only anyway.
    directory.chmod(0o755)
    for path, _ in overlay.files():
        try:
            content = overlay.read(path, keep=False).content
        except WorkspaceError:
            continue
        target = directory / path.lstrip("/")
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        target.chmod(0o644)


def _clip_output(data: bytes, limit: int) -> str:
    text = data.decode("utf-8", errors="replace")
    if len(data) <= limit:
        return text.rstrip("\n")
    kept = data[:limit].decode("utf-8", errors="ignore")
    return f"{kept}\n... [{len(data) - limit} more bytes not shown]"
