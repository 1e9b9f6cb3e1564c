"""The execution record of one optimize run (the skill-artifact execution record):
`manifest.json` with the workspace
manifest and the digest as artifacts, written when the caller gives an output directory."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from promptkit._durable import write_atomically
from promptkit.adapters import ExecutionRecord, write_failure_record, write_manifest
from promptkit.errors import DigestRejectedError, ProviderTimeoutError
from promptkit.logging import get_logger
from promptkit.optimize._gate import Grounding
from promptkit.optimize._types import DigestDraft, OptimizationTarget
from promptkit.prompt import Prompt

_log = get_logger("promptkit.optimize")

DIGEST_ARTIFACT = "digest.md"
WORKSPACE_MANIFEST_ARTIFACT = "workspace.manifest.json"


@dataclass
class RunRecord:
    """What one optimize run has got to, for `manifest.json` when an output directory is given.

    Mutable on purpose: it is filled in step by step so a failure can record how far it got.
    """

    output_dir: Path | None
    provider: str
    model: str
    prompt: Prompt[Any]
    target: OptimizationTarget | None = None
    draft: DigestDraft | None = None
    digest: str | None = None
    grounding: Grounding | None = None
    fallback_reason: str | None = None
    is_started: bool = False

    def started(self) -> None:
        """Record that the run is under way (`running`, outcome `needs_human`), so a run killed
        before it could record its end leaves a manifest that says so. A run that fails before
        it starts (a prompt refused before anything is spent) leaves no record."""
        self.is_started = True
        if self.output_dir is None:
            return
        try:
            # A folder reused run after run (the CLI's last-run folder) keeps nothing of the
            # last run.
            for stale in (DIGEST_ARTIFACT, WORKSPACE_MANIFEST_ARTIFACT):
                (self.output_dir / stale).unlink(missing_ok=True)
            write_manifest(
                self.output_dir,
                ExecutionRecord(
                    status="running",
                    outcome="needs_human",
                    duration_s=0.0,
                    metadata=self._metadata(),
                ),
            )
        except OSError as error:
            # The run does not need its record to go on; its end reports the record again.
            _log.warning(
                "execution_record_failed",
                output_dir=str(self.output_dir),
                error_type=type(error).__name__,
                error=str(error),
            )

    def succeeded(self, *, duration_s: float) -> None:
        if self.output_dir is None:
            return
        artifacts = self._write_artifacts(with_digest=True)
        write_manifest(
            self.output_dir,
            ExecutionRecord(
                status="completed",
                outcome="success",
                duration_s=duration_s,
                artifacts=artifacts,
                metadata=self._metadata(),
            ),
        )

    def failed(self, error: BaseException, *, duration_s: float) -> None:
        if self.output_dir is None or not self.is_started:
            return
        metadata = self._metadata()
        metadata["stopped_by"] = _stopped_by(error)
        refused = getattr(error, "grounding", None)
        if isinstance(refused, Grounding):
            metadata["grounding"] = refused.to_json()
        write_failure_record(
            self.output_dir,
            error,
            duration_s=duration_s,
            metadata=metadata,
            # The digest is left out: it was not stored, and may be the refused text.
            write_artifacts=partial(self._write_artifacts, with_digest=False),
        )

    def _write_artifacts(self, *, with_digest: bool) -> tuple[str, ...]:
        assert self.output_dir is not None
        artifacts: list[str] = []
        if self.draft is not None:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            write_atomically(
                self.output_dir / WORKSPACE_MANIFEST_ARTIFACT, self.draft.provenance.to_json()
            )
            artifacts.append(WORKSPACE_MANIFEST_ARTIFACT)
        if with_digest and self.digest is not None:
            write_atomically(self.output_dir / DIGEST_ARTIFACT, self.digest + "\n")
            artifacts.append(DIGEST_ARTIFACT)
        return tuple(artifacts)

    def _metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "operation": "optimize",
            "provider": self.provider,
            "model": self.model,
            "prompt_ns": self.prompt.ns,
            "prompt_key": self.prompt.key,
            "prompt_name": self.prompt.display_name,
        }
        if self.target is not None:
            metadata["scope"] = str(self.target.scope)
            metadata["section_key"] = self.target.section_key
            metadata["workspace"] = str(self.target.workspace_root)
            if self.target.overrides_tag is not None:
                metadata["overrides_tag"] = self.target.overrides_tag
        if self.draft is not None:
            response = self.draft.response
            metadata["reported_model"] = response.model
            metadata["usage"] = response.usage.to_json()
            metadata["tool_calls"] = len(response.tool_calls)
        if self.grounding is not None:
            metadata["grounding"] = self.grounding.to_json()
        if self.fallback_reason is not None:
            metadata["fallback_reason"] = self.fallback_reason
        return metadata


def _stopped_by(error: BaseException) -> str:
    """What ended a failed run, in one word for the manifest: `interrupt` (Ctrl-C),
    `deadline`, `refusal` (the digest was refused) or `error`."""
    if isinstance(error, KeyboardInterrupt):
        return "interrupt"
    if isinstance(error, ProviderTimeoutError):
        return "deadline"
    if isinstance(error, DigestRejectedError):
        return "refusal"
    return "error"
