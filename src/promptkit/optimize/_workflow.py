"""`optimize_workspace_digest`: a `DigestWriter` writes a prompt's workspace digest; it is
checked and stored.

The workflow is the workspace digest specification's optimize workflow, made to check
everything it can before it spends anything, and nothing after the model answered that it
cannot stand behind; only step 2 differs between writers:

1. Validate (`promptkit.optimize._target`): the prompt has a `WorkspaceDigestSection` and a
   workspace section (VFS or Podman), and GLOBAL scope has both an overrides store and a tag.
   Otherwise `OptimizationError`, and no request is sent.
2. Write the digest: `ModelDigestWriter` (a model explores the workspace, what
   `ProviderAdapter.optimize` uses, within a deadline of 900 s by default and a cap on each
   reply) or `StaticDigestWriter` (the offline scan).
3. Check it (`promptkit.optimize._storage`): the parsed `digest` field, or the reply's plain text
   when it does not parse, stripped; an empty digest or one with a credential is refused
   (`DigestRejectedError`). Then the digest gate (`promptkit.optimize._gate`) refuses what is not
   a digest of this workspace (JSON, a schema, the prompt's own text, over the budget, not
   grounded in the workspace) and measures its grounding either way. With
   `fallback_static=True` a refused digest is replaced by the static digest, the reason written
   into its provenance.
4. Store it: SESSION in the caller's session with the workspace's manifest as provenance,
   GLOBAL as the shared override with the workspace's provenance (then the session's digest is
   cleared). GLOBAL never replaces an operator's override unless `overwrite_operator=True`;
   that is checked in step 1 too, so a refused run spends nothing.

The caller's session and override files change in step 4 only, and a failure there puts back
what step 4 had already written. With an output directory, `manifest.json` says the run is
running from its start and what happened at its end, however it ends (a refusal, the deadline,
Ctrl-C). The user guide is docs/optimize.md.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from promptkit.adapters import OptimizeTrace
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import DigestRejectedError, OptimizationError
from promptkit.logging import get_logger
from promptkit.optimize._gate import DigestGate, Grounding, WorkspaceEvidence
from promptkit.optimize._record import RunRecord
from promptkit.optimize._static_writer import STATIC_PROVIDER, StaticDigestWriter, scan_target
from promptkit.optimize._storage import check_operator_overrides, checked_digest, store_digest
from promptkit.optimize._target import prepare_optimization
from promptkit.optimize._types import (
    DigestDraft,
    DigestWriter,
    OptimizationResult,
    OptimizationScope,
    OptimizationTarget,
)
from promptkit.overrides import PromptOverridesStore
from promptkit.prompt import OverrideAuthor, Prompt
from promptkit.session import Session, SessionProtocol

_log = get_logger("promptkit.optimize")

DEFAULT_OPTIMIZE_TOOL_ROUNDS = 32
"""Tool rounds an optimization may take: exploring a repository needs more than one answer."""

DEFAULT_OPTIMIZE_DEADLINE = 900.0
"""Seconds an optimization may take by default: a small model on a CPU explores a repository
in minutes; one that never finishes is stopped, not waited for."""


@dataclasses.dataclass(frozen=True)
class _Checked:
    """A written digest that passed the checks, and what the gate measured of it."""

    draft: DigestDraft
    digest: str
    grounding: Grounding | None


def optimize_workspace_digest(
    writer: DigestWriter,
    prompt: Prompt[Any],
    *,
    store_scope: OptimizationScope | str = OptimizationScope.SESSION,
    overrides_store: PromptOverridesStore | None = None,
    overrides_tag: str | None = None,
    session: SessionProtocol,
    optimization_session: Session | None = None,
    deadline: float | timedelta | None = DEFAULT_OPTIMIZE_DEADLINE,
    max_tool_rounds: int = DEFAULT_OPTIMIZE_TOOL_ROUNDS,
    output_dir: str | Path | None = None,
    overwrite_operator: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    leave_out: Sequence[str | os.PathLike[str]] = (),
    gate: bool = True,
    fallback_static: bool = False,
) -> OptimizationResult:
    """Validate, have `writer` write the digest, check it, store it, and record the run.

    `ProviderAdapter.optimize` runs this with a `ModelDigestWriter`; every writer runs through
    here, so the checks and storage rules are the same whoever writes the digest. The arguments
    after `writer` are the specification's `optimize` arguments; `deadline` (900 s by default,
    None for none) and `max_tool_rounds` bound a model writer as they bound `evaluate`, and
    `output_dir` receives `manifest.json`, `workspace.manifest.json` and `digest.md`.
    `overwrite_operator=True` lets GLOBAL scope replace a digest an operator wrote (otherwise
    `OperatorOverrideError`, before anything is spent). `include` and `exclude` narrow what the
    digest describes (globs relative to each mounted directory); `leave_out` names directories
    promptkit writes into (a state folder) that it must not describe, as the overrides store's
    root never is.

    `gate=False` stores any digest that is not empty and holds no credential, its grounding
    still measured; `fallback_static=True` stores the static digest when the written one is
    refused (`DigestRejectedError` otherwise), saying why in its provenance and in the result.
    """
    started = SYSTEM_CLOCK.monotonic()
    if not isinstance(prompt, Prompt):
        raise OptimizationError(
            f"optimize needs a promptkit Prompt, got {type(prompt).__name__}; no request was sent"
        )
    run = RunRecord(
        output_dir=None if output_dir is None else Path(output_dir),
        provider=writer.provider,
        model=writer.model,
        prompt=prompt,
    )
    trace = OptimizeTrace(
        provider=writer.provider, model=writer.model, prompt_name=prompt.display_name
    )
    fallback_reason: str | None = None
    try:
        if optimization_session is not None and not isinstance(optimization_session, Session):
            raise OptimizationError(
                "optimization_session must be a promptkit Session (or None for a new one),"
                f" got {type(optimization_session).__name__}; no request was sent"
            )
        target = prepare_optimization(
            prompt,
            store_scope=store_scope,
            overrides_store=overrides_store,
            overrides_tag=overrides_tag,
            session=session,
            include=include,
            exclude=exclude,
            leave_out=leave_out,
        )
        run.target = target
        if target.scope is OptimizationScope.GLOBAL and not overwrite_operator:
            check_operator_overrides(target)
        run.started()
        try:
            written = writer.write_digest(
                target,
                optimization_session=(
                    Session() if optimization_session is None else optimization_session
                ),
                deadline=deadline,
                max_tool_rounds=max_tool_rounds,
            )
            run.draft = written
            checked = _checked(written, target, gate=gate)
        except DigestRejectedError as refused:
            if not fallback_static or writer.provider == STATIC_PROVIDER:
                raise
            fallback_reason = str(refused)
            checked = _static_instead(target, refused)
        run.draft, run.digest, run.grounding = checked.draft, checked.digest, checked.grounding
        run.fallback_reason = fallback_reason
        response = checked.draft.response
        locations = store_digest(
            target,
            checked.digest,
            session=session,
            author=OverrideAuthor("optimizer", response.model),
            provenance=checked.draft.provenance,
            overwrite_operator=overwrite_operator,
        )
    except BaseException as error:
        trace.end(error)
        run.failed(error, duration_s=SYSTEM_CLOCK.monotonic() - started)
        raise
    trace.end()
    grounding = checked.grounding
    _log.info(
        "workspace_digest_optimized",
        prompt_ns=prompt.ns,
        prompt_key=prompt.key,
        section_key=target.section_key,
        scope=str(target.scope),
        provider=response.provider,
        model=response.model,
        tool_calls=len(response.tool_calls),
        digest_chars=len(checked.digest),
        grounding=grounding.to_json() if grounding is not None else None,
        fallback_reason=fallback_reason,
    )
    run.succeeded(duration_s=SYSTEM_CLOCK.monotonic() - started)
    return OptimizationResult(
        response=response,
        digest=checked.digest,
        scope=target.scope,
        section_key=target.section_key,
        locations=locations,
        grounding=grounding,
        fallback_reason=fallback_reason,
    )


def _checked(draft: DigestDraft, target: OptimizationTarget, *, gate: bool) -> _Checked:
    """`draft`'s digest once it passed the checks and, with `gate`, the digest gate;
    DigestRejectedError saying why it did not."""
    digest = checked_digest(draft.response, target)
    facts = draft.facts if draft.facts is not None else scan_target(target)
    evidence = WorkspaceEvidence.of(target.mounts, facts)
    verdict = DigestGate().judge(digest, evidence, prompt_text=draft.prompt_text)
    # The static digest is built from these very facts and bounded by construction; the gate
    # is for what a model wrote (an empty workspace's static digest names nothing, rightly).
    is_static = draft.response.provider == STATIC_PROVIDER
    if verdict.problem is None or not gate or is_static:
        return _Checked(draft, digest, verdict.grounding)
    prompt, response = target.prompt, draft.response
    _log.warning(
        "workspace_digest_refused",
        prompt_ns=prompt.ns,
        prompt_key=prompt.key,
        provider=response.provider,
        model=response.model,
        reason=verdict.problem,
        grounding=verdict.grounding.to_json(),
    )
    raise DigestRejectedError(
        f"optimize {prompt.ns}/{prompt.key}: the {response.provider} model {response.model}"
        f" wrote a digest that was refused: {verdict.problem}"
        f" ({verdict.grounding.summary()}); nothing was stored. Try another model or"
        " `--provider static`, or pass `--fallback-static` (fallback_static=True) to store the"
        " static digest instead",
        response=response,
        grounding=verdict.grounding,
    )


def _static_instead(target: OptimizationTarget, refused: DigestRejectedError) -> _Checked:
    """The static digest in place of a refused one, the refusal in its provenance's notes."""
    draft = StaticDigestWriter().write_digest(
        target, optimization_session=Session(), deadline=None, max_tool_rounds=0
    )
    reason = f"stored instead of a refused digest: {refused}"
    provenance = dataclasses.replace(draft.provenance, notes=(*draft.provenance.notes, reason))
    _log.warning(
        "workspace_digest_fallback",
        prompt_ns=target.prompt.ns,
        prompt_key=target.prompt.key,
        reason=str(refused),
    )
    grounding = refused.grounding if isinstance(refused.grounding, Grounding) else None
    return _Checked(
        dataclasses.replace(draft, provenance=provenance),
        checked_digest(draft.response, target),
        grounding,
    )
