"""`ProviderAdapter`: how application code runs a prompt on a model, whatever the provider.

`evaluate` (and `aevaluate` for asyncio) renders a prompt, runs the model with the prompt's
tools until it answers, parses the structured output and records the run in the session;
`optimize` has the model write a workspace digest. `WireAdapter` (`_wire_adapter`) implements it
for the providers promptkit speaks to through their SDKs.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

from promptkit.adapters._options import CallOptions, CallOptionsWithDeps
from promptkit.adapters._response import PromptResponse
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.prompt import Prompt
from promptkit.session import Session, SessionProtocol

if TYPE_CHECKING:
    from promptkit.optimize import OptimizationResult, OptimizationScope
    from promptkit.overrides import PromptOverridesStore

# The workspace digest specification's `optimize` default; `OptimizationScope` is a StrEnum,
# so the plain value equals it.
_SESSION_SCOPE = "session"
# promptkit.optimize.DEFAULT_OPTIMIZE_TOOL_ROUNDS and DEFAULT_OPTIMIZE_DEADLINE, repeated so
# the signature shows them without importing the workflow; a test keeps them equal.
_OPTIMIZE_TOOL_ROUNDS = 32
_OPTIMIZE_DEADLINE = 900.0

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")
T = TypeVar("T")


class ProviderAdapter(ABC):
    """Runs prompts on a model provider.

    `evaluate(prompt, *params, session, ...)` renders the prompt, runs the model with the
    prompt's tools until it answers without calling one, parses the structured output and
    returns a `PromptResponse`; `aevaluate` does the same for asyncio.

    `clock` is what deadlines, durations, timestamps and retry pauses read (the concrete
    adapters take `clock=`; tests pass a `promptkit.testing.FakeClock`).
    """

    clock: Clock = SYSTEM_CLOCK

    @property
    @abstractmethod
    def provider(self) -> str:
        """The provider's name, as recorded in events and manifests (`openai`, `anthropic`)."""

    @property
    @abstractmethod
    def model(self) -> str:
        """The model the adapter asks for."""

    # Overloaded for type checkers only: a prompt without a deps type takes no deps, one with a
    # deps type needs them, of that type (`CallOptionsWithDeps`).

    @overload
    def evaluate(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[None]],
    ) -> PromptResponse[OutputT]: ...

    @overload
    def evaluate(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> PromptResponse[OutputT]: ...

    @abstractmethod
    def evaluate(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[Any]],
    ) -> PromptResponse[OutputT]:
        """Run `prompt` rendered with `params` and return the model's answer.

        The options (`CallOptions`, every one optional but `deps` when the prompt declares a
        deps type) bound the run (`deadline`, `max_tool_rounds`), render the prompt
        (`overrides_store`, `overrides_tag`), continue a conversation (`messages`, or
        `conversation` kept in `session`), choose the request `settings`, the `user_message`
        and how often an unparsable reply is retried (`output_retries`), give tool handlers
        `deps` and run up to `tool_concurrency` of one reply's calls at once, and record the
        run in `output_dir`.
        """

    @overload
    async def aevaluate(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[None]],
    ) -> PromptResponse[OutputT]: ...

    @overload
    async def aevaluate(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> PromptResponse[OutputT]: ...

    @abstractmethod
    async def aevaluate(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[Any]],
    ) -> PromptResponse[OutputT]:
        """`evaluate` for asyncio: same arguments, same result, same events."""

    def prepare_client(self) -> None:
        """Build now what the first `evaluate` request needs and can be built ahead (a no-op
        here). An SDK adapter builds its client, importing the SDK: that is a large share of
        a command's start, and a caller can overlap it with work running in other processes
        (`promptkit.hostfiles.begin_selection`). Raises what `evaluate` would for a client that
        cannot be built."""
        return  # an adapter without an SDK client has nothing to build ahead

    # -- optimize: the workflow lives in promptkit.optimize -----------------------------------

    def optimize(
        self,
        prompt: Prompt[Any],
        *,
        store_scope: OptimizationScope | str = _SESSION_SCOPE,
        overrides_store: PromptOverridesStore | None = None,
        overrides_tag: str | None = None,
        session: SessionProtocol,
        optimization_session: Session | None = None,
        deadline: float | timedelta | None = _OPTIMIZE_DEADLINE,
        max_tool_rounds: int = _OPTIMIZE_TOOL_ROUNDS,
        output_dir: str | Path | None = None,
        overwrite_operator: bool = False,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        leave_out: Sequence[str | os.PathLike[str]] = (),
        gate: bool = True,
        fallback_static: bool = False,
    ) -> OptimizationResult:
        """Have this adapter's model write the workspace digest of `prompt` and store it (as the
        workspace digest specification puts it on the adapter);
        `promptkit.optimize.optimize_workspace_digest` with a `ModelDigestWriter`.

        The prompt needs a `WorkspaceDigestSection` and a workspace section; GLOBAL scope needs
        `overrides_store` and `overrides_tag`. Those are checked before any request is sent
        (`OptimizationError`). SESSION stores the digest in `session`; GLOBAL writes it as the
        shared override of its section key (the prompt's own override where the store has no
        shared sections) and clears the session's digest; it refuses to replace a digest an
        operator wrote unless `overwrite_operator=True`. The run happens on
        `optimization_session` (default: a new Session); `deadline` (900 s unless given, None
        for none) and `max_tool_rounds` bound it as for `evaluate`, and `output_dir` receives
        `manifest.json`, `workspace.manifest.json` and `digest.md`. `include`, `exclude` and
        `leave_out` narrow what the digest describes. The digest gate refuses what is not a
        digest of the workspace (`DigestRejectedError`) unless `gate=False`; with
        `fallback_static=True` the static digest is stored instead (see
        `optimize_workspace_digest`).
        """
        # The seed puts optimize on the adapter, but the workflow builds on adapters (and on
        # digests, workspaces and overrides, which adapters know nothing of): it is imported
        # when called, the one sanctioned upward import (see the import-linter contracts).
        from promptkit.optimize import ModelDigestWriter, optimize_workspace_digest

        return optimize_workspace_digest(
            ModelDigestWriter(self),
            prompt,
            store_scope=store_scope,
            overrides_store=overrides_store,
            overrides_tag=overrides_tag,
            session=session,
            optimization_session=optimization_session,
            deadline=deadline,
            max_tool_rounds=max_tool_rounds,
            output_dir=output_dir,
            overwrite_operator=overwrite_operator,
            include=include,
            exclude=exclude,
            leave_out=leave_out,
            gate=gate,
            fallback_static=fallback_static,
        )
