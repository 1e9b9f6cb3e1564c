"""`optimize_workspace_digest`: a `DigestWriter` writes a prompt's workspace digest; it is
checked and stored.

The workflow is the workspace digest specification's optimize workflow, made to check
everything it can before it spends anything; only step 2 differs between writers:

1. Validate (`promptkit.optimize._target`): the prompt has a `WorkspaceDigestSection` and a
   workspace section (VFS or Podman), and GLOBAL scope has both an overrides store and a tag.
   Otherwise `OptimizationError`, and no request is sent.
2. Write the digest: `ModelDigestWriter` (a model explores the workspace, what
   `ProviderAdapter.optimize` uses) or `StaticDigestWriter` (the offline scan).
3. Check it (`promptkit.optimize._storage`): the parsed `digest` field, or the reply's plain text
   when it does not parse, stripped; an empty digest or one with a credential is refused
   (`DigestRejectedError`).
4. Store it: SESSION in the caller's session with the workspace's manifest as provenance,
   GLOBAL as the shared override with the workspace's provenance (then the session's digest is
   cleared). GLOBAL never replaces an operator's override unless `overwrite_operator=True`;
   that is checked in step 1 too, so a refused run spends nothing.

The caller's session and override files change in step 4 only, and a failure there puts back
what step 4 had already written. The user guide is docs/optimize.md.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from promptkit.adapters import OptimizeTrace
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import OptimizationError
from promptkit.logging import get_logger
from promptkit.optimize._record import RunRecord
from promptkit.optimize._storage import check_operator_overrides, checked_digest, store_digest
from promptkit.optimize._target import prepare_optimization
from promptkit.optimize._types import DigestWriter, OptimizationResult, OptimizationScope
from promptkit.overrides import PromptOverridesStore
from promptkit.prompt import OverrideAuthor, Prompt
from promptkit.session import Session, SessionProtocol

_log = get_logger("promptkit.optimize")

DEFAULT_OPTIMIZE_TOOL_ROUNDS = 32
"""Tool rounds an optimization may take: exploring a repository needs more than one answer."""


def optimize_workspace_digest(
    writer: DigestWriter,
    prompt: Prompt[Any],
    *,
    store_scope: OptimizationScope | str = OptimizationScope.SESSION,
    overrides_store: PromptOverridesStore | None = None,
    overrides_tag: str | None = None,
    session: SessionProtocol,
    optimization_session: Session | None = None,
    deadline: float | timedelta | None = None,
    max_tool_rounds: int = DEFAULT_OPTIMIZE_TOOL_ROUNDS,
    output_dir: str | Path | None = None,
    overwrite_operator: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    leave_out: Sequence[str | os.PathLike[str]] = (),
) -> OptimizationResult:
    """Validate, have `writer` write the digest, check it, store it, and record the run.

    `ProviderAdapter.optimize` runs this with a `ModelDigestWriter`; every writer runs through
    here, so the checks and storage rules are the same whoever writes the digest. The arguments
    after `writer` are the specification's `optimize` arguments; `deadline` and
    `max_tool_rounds` bound a model writer as they bound `evaluate`, and `output_dir` receives
    `manifest.json`, `workspace.manifest.json` and `digest.md`. `overwrite_operator=True` lets
    GLOBAL scope replace a digest an operator wrote (otherwise `OperatorOverrideError`, before
    anything is spent). `include` and `exclude` narrow what the digest describes (globs relative
    to each mounted directory); `leave_out` names directories promptkit writes into (a state
    folder) that it must not describe, as the overrides store's root never is.
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
        written = writer.write_digest(
            target,
            optimization_session=(
                Session() if optimization_session is None else optimization_session
            ),
            deadline=deadline,
            max_tool_rounds=max_tool_rounds,
        )
        run.draft = written
        digest = checked_digest(written.response, target)
        run.digest = digest
        author = OverrideAuthor("optimizer", written.response.model)
        locations = store_digest(
            target,
            digest,
            session=session,
            author=author,
            provenance=written.provenance,
            overwrite_operator=overwrite_operator,
        )
    except BaseException as error:
        trace.end(error)
        run.failed(error, duration_s=SYSTEM_CLOCK.monotonic() - started)
        raise
    trace.end()
    result = OptimizationResult(
        response=written.response,
        digest=digest,
        scope=target.scope,
        section_key=target.section_key,
        locations=locations,
    )
    _log.info(
        "workspace_digest_optimized",
        prompt_ns=prompt.ns,
        prompt_key=prompt.key,
        section_key=target.section_key,
        scope=str(target.scope),
        provider=written.response.provider,
        model=written.response.model,
        tool_calls=len(written.response.tool_calls),
        digest_chars=len(digest),
    )
    run.succeeded(duration_s=SYSTEM_CLOCK.monotonic() - started)
    return result
