"""The execution record: `manifest.json` in an output directory, written atomically.

The format is the minimal execution record of the skill-artifact RFC (seed 003): `status`
(`completed`, `failed` or `running`), `outcome` (`success`, `failure` or `needs_human`),
`duration` as seconds with an `s` suffix, `artifacts` (paths relative to the output directory),
`metadata`, and `error` only when the outcome is a failure. Every file goes through
`write_atomically`, so a reader never sees half a manifest, even after a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from promptkit.secrets import redact_secrets

MANIFEST_NAME = "manifest.json"

Status = Literal["completed", "failed", "running"]
Outcome = Literal["success", "failure", "needs_human"]


@dataclass(frozen=True)
class ExecutionRecord:
    """One run's manifest. `error` is required exactly when `outcome` is `failure`."""

    status: Status
    outcome: Outcome
    duration_s: float
    artifacts: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    def __post_init__(self) -> None:
        if (self.outcome == "failure") != (self.error is not None):
            raise ValueError(
                "ExecutionRecord: `error` is given exactly when the outcome is 'failure'"
                f" (outcome {self.outcome!r}, error {'set' if self.error else 'missing'})"
            )

    def to_json(self) -> dict[str, Any]:
        """The manifest document; the error message is redacted of credentials."""
        document: dict[str, Any] = {
            "status": self.status,
            "outcome": self.outcome,
            "duration": f"{self.duration_s:.3f}s",
            "artifacts": list(self.artifacts),
            "metadata": dict(self.metadata),
        }
        if self.error is not None:
            document["error"] = redact_secrets(self.error)
        return document


def write_manifest(output_dir: Path, record: ExecutionRecord) -> Path:
    """Write `record` as `<output_dir>/manifest.json` (creating the directory); its path."""
    text = json.dumps(record.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return write_atomically(Path(output_dir) / MANIFEST_NAME, text)


def write_atomically(path: Path, text: str) -> Path:
    """Write `text` to `path` through a temporary file in the same directory; return `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if os.name == "posix":
            # mkstemp creates files readable by the owner only; a manifest is an ordinary output.
            os.fchmod(handle, 0o644)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        Path(temporary).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()
        raise
    _fsync_directory(path.parent)
    return path


def _fsync_directory(directory: Path) -> None:
    # The rename is atomic on POSIX; the directory fsync makes the rename itself durable.
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
