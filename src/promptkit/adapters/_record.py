"""The execution record: `manifest.json` in an output directory, written atomically.

The format is the minimal execution record of the skill-artifact RFC: `status` (`completed`,
`failed` or `running`), `outcome` (`success`, `failure` or `needs_human`), `duration` as seconds
with an `s` suffix, `artifacts` (paths relative to the output directory), `metadata`, and `error`
only when the outcome is a failure. Every file goes through `promptkit._durable.write_atomically`,
so a reader never sees half a manifest, even after a crash, and through `redact_value`, so no
string in it carries a credential. `write_failure_record` is how a failed run is recorded: a
record that cannot be written is logged, never raised, so the run's own error is the one the
caller sees.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from promptkit._durable import write_atomically
from promptkit.errors import ArgumentValueError
from promptkit.logging import get_logger
from promptkit.secrets import redact_secrets, redact_value

_log = get_logger("promptkit.adapters")

MANIFEST_NAME = "manifest.json"
# What an error that carries no message of its own stands for, in a manifest.
_WITHOUT_MESSAGE: dict[type[BaseException], str] = {
    KeyboardInterrupt: "interrupted (Ctrl-C) before the run ended",
}

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
            raise ArgumentValueError(
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
    """Write `record` as `<output_dir>/manifest.json` (creating the directory); its path.

    Every string in it, metadata included, is redacted of credentials first.
    """
    return write_record_json(Path(output_dir) / MANIFEST_NAME, record.to_json())


def write_record_json(path: Path, document: Mapping[str, Any]) -> Path:
    """Write `document` as indented JSON at `path`, every string in it redacted; its path."""
    redacted = redact_value(document)
    text = json.dumps(redacted, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return write_atomically(path, text)


def write_failure_record(
    output_dir: Path,
    error: BaseException,
    *,
    duration_s: float,
    metadata: Mapping[str, Any],
    write_artifacts: Callable[[], tuple[str, ...]] = tuple,
) -> None:
    """Record in `output_dir` that a run failed with `error`, without hiding `error`.

    `write_artifacts` writes what the failed run leaves behind and returns their paths relative
    to `output_dir`. When the disk refuses any of it, the OSError is logged
    (`execution_record_failed`) and swallowed: the caller is about to re-raise `error`.
    """
    try:
        write_manifest(
            output_dir,
            ExecutionRecord(
                status="failed",
                outcome="failure",
                duration_s=duration_s,
                artifacts=write_artifacts(),
                metadata=metadata,
                error=f"{type(error).__name__}: {error or _WITHOUT_MESSAGE.get(type(error), '')}",
            ),
        )
    except OSError as write_error:
        _log.warning(
            "execution_record_failed",
            output_dir=str(output_dir),
            error_type=type(write_error).__name__,
            error=str(write_error),
        )
