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
from promptkit.optimize._types import DigestDraft, OptimizationTarget
from promptkit.prompt import Prompt

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
        if self.output_dir is None:
            return
        write_failure_record(
            self.output_dir,
            error,
            duration_s=duration_s,
            metadata=self._metadata(),
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
        return metadata
