"""`ProviderAdapter`, how application code runs a prompt, and `WireAdapter`, which runs one through
a provider SDK: render, tool loop, structured output, deadline, session events, execution record.

`evaluate` and `aevaluate` drive the same `tool_loop` (see `promptkit.adapters.loop`) inside one
`Evaluation` (`promptkit.adapters.evaluation`); only how a request is sent and a tool is run
differs. The deadline is enforced around every request: the
SDK call gets the time left as its timeout, and the caller stops waiting when it is spent even
if the SDK is still retrying (the sync path waits for a worker thread; the async path uses
`asyncio.timeout`).
"""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from promptkit.adapters.attempts import (
    DeadlinePassedError,
    DeadlineReachedError,
    call_within,
    send_until_deadline,
)
from promptkit.adapters.conversation import Message
from promptkit.adapters.cost import DEFAULT_PRICES, PriceTable
from promptkit.adapters.evaluation import CallArgs, CallOptions, Evaluation
from promptkit.adapters.loop import Deadline, SendRequest, Step
from promptkit.adapters.response import PromptResponse
from promptkit.adapters.settings import ModelSettings
from promptkit.adapters.streaming import StreamEvent, astream_evaluation, stream_evaluation
from promptkit.adapters.wire import ModelTurn, WireCodec
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import (
    ArgumentTypeError,
    PromptkitError,
    ProviderConnectionError,
    ProviderTimeoutError,
)
from promptkit.prompt import OverridesLookup, Prompt
from promptkit.session import Session, SessionProtocol

if TYPE_CHECKING:
    from promptkit.optimize.types import OptimizationResult, OptimizationScope
    from promptkit.overrides import PromptOverridesStore

# The seed's `optimize` default; `OptimizationScope` is a StrEnum, so the plain value equals it.
_SESSION_SCOPE = "session"
# promptkit.optimize.workflow.DEFAULT_OPTIMIZE_TOOL_ROUNDS, repeated so the signature shows it
# without importing the workflow; a test keeps the two equal.
_OPTIMIZE_TOOL_ROUNDS = 32

OutputT = TypeVar("OutputT")
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

    @abstractmethod
    def evaluate(
        self,
        prompt: Prompt[OutputT],
        *params: Any,
        session: Session,
        overrides_store: OverridesLookup | None = None,
        overrides_tag: str = "latest",
        deadline: float | timedelta | None = None,
        max_tool_rounds: int = 16,
        output_dir: str | Path | None = None,
        user_message: str | None = None,
        messages: Sequence[Message] | None = None,
        conversation: str | None = None,
        settings: ModelSettings | None = None,
        output_retries: int = 1,
        deps: Any = None,
    ) -> PromptResponse[OutputT]:
        """Run `prompt` rendered with `params` and return the model's answer.

        `deadline` bounds the whole evaluation (every request and tool round), as seconds or a
        timedelta from the call. `user_message` is the user turn after the rendered prompt
        (default `DEFAULT_USER_MESSAGE`). With `output_dir`, `manifest.json` records the run.

        `messages` are earlier turns to continue (an earlier response's `messages`);
        `conversation` names a conversation kept in `session` instead, read before and extended
        after the call. `settings` override the adapter's `ModelSettings` field by field. A
        reply that fails to parse into the output type goes back to the model with the error up
        to `output_retries` times. `deps` reaches tool handlers as `ToolContext.deps`.
        """

    @abstractmethod
    async def aevaluate(
        self,
        prompt: Prompt[OutputT],
        *params: Any,
        session: Session,
        overrides_store: OverridesLookup | None = None,
        overrides_tag: str = "latest",
        deadline: float | timedelta | None = None,
        max_tool_rounds: int = 16,
        output_dir: str | Path | None = None,
        user_message: str | None = None,
        messages: Sequence[Message] | None = None,
        conversation: str | None = None,
        settings: ModelSettings | None = None,
        output_retries: int = 1,
        deps: Any = None,
    ) -> PromptResponse[OutputT]:
        """`evaluate` for asyncio: same arguments, same result, same events."""

    def prepare_client(self) -> None:
        """Build now what the first `evaluate` request needs and can be built ahead (a no-op
        here). An SDK adapter builds its client, importing the SDK: that is a large share of
        a command's start, and a caller can overlap it with work running in other processes
        (`promptkit.workspace.begin_selection`). Raises what `evaluate` would for a client that
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
        deadline: float | timedelta | None = None,
        max_tool_rounds: int = _OPTIMIZE_TOOL_ROUNDS,
        output_dir: str | Path | None = None,
        overwrite_operator: bool = False,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        leave_out: Sequence[str | os.PathLike[str]] = (),
    ) -> OptimizationResult:
        """Have this adapter's model write the workspace digest of `prompt` and store it (seed
        004); `promptkit.optimize.optimize_workspace_digest` with a `ModelDigestWriter`.

        The prompt needs a `WorkspaceDigestSection` and a workspace section; GLOBAL scope needs
        `overrides_store` and `overrides_tag`. Those are checked before any request is sent
        (`OptimizationError`). SESSION stores the digest in `session`; GLOBAL writes it as the
        shared override of its section key (the prompt's own override where the store has no
        shared sections) and clears the session's digest; it refuses to replace a digest an
        operator wrote unless `overwrite_operator=True`. The run happens on
        `optimization_session` (default: a new Session); `deadline` and `max_tool_rounds` bound
        it as for `evaluate`, and `output_dir` receives `manifest.json`,
        `workspace.manifest.json` and `digest.md`.
        (`OptimizationError`). SESSION stores the digest in `session`; GLOBAL writes it as an
        override of the digest section (and as the shared entry of its key) and clears the
        session's digest. The run happens on `optimization_session` (default: a new Session);
        `deadline` and `max_tool_rounds` bound it as for `evaluate`, and `output_dir` receives
        `manifest.json`, `workspace.manifest.json` and `digest.md`. `include`, `exclude` and
        `leave_out` narrow what the digest describes (see `optimize_workspace_digest`).
        """
        # The seed puts optimize on the adapter, but the workflow builds on adapters (and on
        # digests, workspaces and overrides, which adapters know nothing of): it is imported
        # when called, the one sanctioned upward import (see the import-linter contracts).
        from promptkit.optimize.model_writer import ModelDigestWriter
        from promptkit.optimize.workflow import optimize_workspace_digest

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
        )


class WireAdapter(ProviderAdapter):
    """A `ProviderAdapter` that talks to a provider through its SDK via a `WireCodec`.

    Subclasses supply the codec, the sync and async clients, and the translation of the SDK's
    exceptions; the loop, events, deadline and record are shared. `settings` apply to every
    call unless a call overrides them; `prices` (default `DEFAULT_PRICES`) give each
    response's `usage.cost`.
    """

    def __init__(
        self, *, settings: ModelSettings | None = None, prices: PriceTable | None = None
    ) -> None:
        if settings is not None and not isinstance(settings, ModelSettings):
            raise ArgumentTypeError(
                f"settings must be a promptkit ModelSettings, got {type(settings).__name__}"
            )
        self._settings = settings or ModelSettings()
        self._prices = DEFAULT_PRICES if prices is None else prices

    @property
    def prices(self) -> PriceTable:
        """The price table `PromptResponse.usage.cost` comes from."""
        return self._prices

    @property
    def settings(self) -> ModelSettings:
        """The `ModelSettings` every call starts from."""
        return self._settings

    @abstractmethod
    def wire_codec(self) -> WireCodec:
        """The codec of the wire API this adapter speaks."""

    @abstractmethod
    def sync_client(self) -> Any:
        """The SDK client `evaluate` sends requests with."""

    def prepare_client(self) -> None:
        """Build the SDK client `evaluate` sends with now (it is kept for the first request),
        and reach for the SDK method it sends with, whose module the SDK imports on first use."""
        self.wire_codec().send_method(self.sync_client())

    async def aclose_loop_client(self) -> None:
        """Close the async client this adapter built for the running event loop, if any; one the
        caller passed stays open. For code that ends the loop (`run_evaluation` does): left to
        the garbage collector, the SDK closes it on whatever loop runs then, and fails."""

    @abstractmethod
    def async_client(self) -> Any:
        """The SDK client `aevaluate` sends requests with, for the running event loop."""

    @abstractmethod
    def translate_error(
        self, error: BaseException, *, client: Any, where: str
    ) -> PromptkitError | None:
        """The promptkit error for an SDK exception, or None when it is not the SDK's."""

    def evaluate(
        self,
        prompt: Prompt[OutputT],
        *params: Any,
        session: Session,
        overrides_store: OverridesLookup | None = None,
        overrides_tag: str = "latest",
        deadline: float | timedelta | None = None,
        max_tool_rounds: int = 16,
        output_dir: str | Path | None = None,
        user_message: str | None = None,
        messages: Sequence[Message] | None = None,
        conversation: str | None = None,
        settings: ModelSettings | None = None,
        output_retries: int = 1,
        deps: Any = None,
    ) -> PromptResponse[OutputT]:
        run = Evaluation(
            self,
            prompt,
            session=session,
            deadline=deadline,
            max_tool_rounds=max_tool_rounds,
            output_dir=output_dir,
            user_message=user_message,
            call=CallOptions(
                messages=messages,
                conversation=conversation,
                settings=self.settings.merged(settings),
                output_retries=output_retries,
                deps=deps,
                prices=self.prices,
            ),
        )
        try:
            rendered = run.render(params, overrides_store, overrides_tag)
            client = self.sync_client()
            codec = self.wire_codec()
            turn = self._drive(run.steps(rendered, codec), codec, client, run.deadline)
            response = run.finish(rendered, turn)
        except BaseException as error:
            run.record_failure(error)
            raise
        run.record_success(response)
        return response

    async def aevaluate(
        self,
        prompt: Prompt[OutputT],
        *params: Any,
        session: Session,
        overrides_store: OverridesLookup | None = None,
        overrides_tag: str = "latest",
        deadline: float | timedelta | None = None,
        max_tool_rounds: int = 16,
        output_dir: str | Path | None = None,
        user_message: str | None = None,
        messages: Sequence[Message] | None = None,
        conversation: str | None = None,
        settings: ModelSettings | None = None,
        output_retries: int = 1,
        deps: Any = None,
    ) -> PromptResponse[OutputT]:
        run = Evaluation(
            self,
            prompt,
            session=session,
            deadline=deadline,
            max_tool_rounds=max_tool_rounds,
            output_dir=output_dir,
            user_message=user_message,
            call=CallOptions(
                messages=messages,
                conversation=conversation,
                settings=self.settings.merged(settings),
                output_retries=output_retries,
                deps=deps,
                prices=self.prices,
            ),
        )
        try:
            rendered = run.render(params, overrides_store, overrides_tag)
            client = self.async_client()
            codec = self.wire_codec()
            turn = await self._adrive(run.steps(rendered, codec), codec, client, run.deadline)
            response = run.finish(rendered, turn)
        except BaseException as error:
            run.record_failure(error)
            raise
        run.record_success(response)
        return response

    def stream(
        self, prompt: Prompt[OutputT], *params: Any, session: Session, **options: Unpack[CallArgs]
    ) -> Iterator[StreamEvent[OutputT]]:
        """`evaluate` as it happens: `TextDelta`s as each reply arrives, `UsageReported` per
        reply, `ToolCallStarted`/`ToolCallFinished` per tool call, and last `ResponseCompleted`
        with the `PromptResponse`. Takes `evaluate`'s keyword arguments; nothing is sent until
        the first event is read."""
        run = self._evaluation(prompt, session, options)
        store, tag = options.get("overrides_store"), options.get("overrides_tag", "latest")
        return stream_evaluation(self, run, params, store, tag)

    def astream(
        self, prompt: Prompt[OutputT], *params: Any, session: Session, **options: Unpack[CallArgs]
    ) -> AsyncIterator[StreamEvent[OutputT]]:
        """`stream` for asyncio (`async for event in adapter.astream(...)`)."""
        run = self._evaluation(prompt, session, options)
        store, tag = options.get("overrides_store"), options.get("overrides_tag", "latest")
        return astream_evaluation(self, run, params, store, tag)

    def _evaluation(
        self, prompt: Prompt[OutputT], session: Session, options: CallArgs
    ) -> Evaluation[OutputT]:
        return Evaluation(
            self,
            prompt,
            session=session,
            deadline=options.get("deadline"),
            max_tool_rounds=options.get("max_tool_rounds", 16),
            output_dir=options.get("output_dir"),
            user_message=options.get("user_message"),
            call=CallOptions(
                messages=options.get("messages"),
                conversation=options.get("conversation"),
                settings=self.settings.merged(options.get("settings")),
                output_retries=options.get("output_retries", 1),
                deps=options.get("deps"),
                prices=self.prices,
            ),
        )

    # -- drivers ------------------------------------------------------------------------------

    def _drive(
        self,
        steps: Generator[Step, Any, ModelTurn],
        codec: WireCodec,
        client: Any,
        deadline: Deadline,
    ) -> ModelTurn:
        reply: Any = None
        try:
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as finished:
                    turn: ModelTurn = finished.value
                    return turn
                if isinstance(step, SendRequest):
                    reply = self._send(step, codec, client, deadline)
                else:
                    reply = step.run()
        finally:
            steps.close()

    async def _adrive(
        self,
        steps: Generator[Step, Any, ModelTurn],
        codec: WireCodec,
        client: Any,
        deadline: Deadline,
    ) -> ModelTurn:
        reply: Any = None
        try:
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as finished:
                    turn: ModelTurn = finished.value
                    return turn
                if isinstance(step, SendRequest):
                    reply = await self._asend(step, codec, client, deadline)
                else:
                    reply = await step.arun()
        finally:
            steps.close()

    def _send(self, step: SendRequest, codec: WireCodec, client: Any, deadline: Deadline) -> Any:
        where = self._where(codec, step)
        timeout = deadline.remaining()
        try:
            if timeout is None:
                return codec.create(client, step.request, None)
            return call_within(
                lambda: send_until_deadline(
                    codec.create,
                    client,
                    step.request,
                    deadline,
                    is_connection_error=lambda error: self._is_connection_error(error, client),
                ),
                timeout,
            )
        except (DeadlineReachedError, DeadlinePassedError):
            raise deadline.exceeded(f"while waiting for {where}") from None
        except Exception as error:
            raise self._translated(error, client, where, deadline) from None

    async def _asend(
        self, step: SendRequest, codec: WireCodec, client: Any, deadline: Deadline
    ) -> Any:
        where = self._where(codec, step)
        timeout = deadline.remaining()
        scope = asyncio.timeout(timeout)
        try:
            async with scope:
                return await codec.acreate(client, step.request, timeout)
        except TimeoutError:
            if scope.expired():
                raise deadline.exceeded(f"while waiting for {where}") from None
            raise
        except Exception as error:
            raise self._translated(error, client, where, deadline) from None

    def _translated(
        self, error: Exception, client: Any, where: str, deadline: Deadline
    ) -> Exception:
        translated = self.translate_error(error, client=client, where=where)
        if translated is None:
            return error
        if deadline.remaining() == 0.0:
            # The request's own timeout is the time left, so it races the deadline; a request
            # that failed once the deadline had passed failed because of it.
            return deadline.exceeded(f"while waiting for {where} ({type(translated).__name__})")
        # The SDK's exception is not chained: its message can quote the response body.
        return translated

    def _is_connection_error(self, error: BaseException, client: Any) -> bool:
        translated = self.translate_error(error, client=client, where="")
        return isinstance(translated, ProviderConnectionError | ProviderTimeoutError)

    def _where(self, codec: WireCodec, step: SendRequest) -> str:
        return f"{self.provider} {codec.api} request {step.number} (model {self.model})"
