"""`run_evaluation`: every case of a dataset under each override tag, a bounded number at once.

The run runs the application as it runs: given its `App`, each case goes through the app's
`aevaluate`, so its model, settings, prices and deps apply (a deps factory, when given, makes
each case's deps from the case); given a bare adapter, an app of that adapter alone. Each (tag,
case) pair is one evaluation on a fresh Session with the case's params and input, the overrides
of that tag as the store held them when the run began (`RunOverrides`: the report records their
snapshot, which promotion holds the store to), and the same deadline and tool-round limit as
`evaluate`; at most `concurrency` run at once on one event loop. A pair whose evaluation fails
is recorded with its error and the run goes on; so does one whose evaluator raises. A case also
fails when a tool errs that it does not expect, and, unless the run allows it, when its prompt
would render the placeholder workspace digest (`promptkit.evals._case_checks`). `run_evaluation`
turns Ctrl-C into a report of the pairs that finished (`interrupted=True`); `arun_evaluation`
lets a cancellation propagate, as asyncio code expects.

`run_evaluation` handles SIGINT itself rather than leaving it to `asyncio.run`: asyncio's
handler raises KeyboardInterrupt inside the loop when the signal lands after the run's last
await and before the loop returns, and closing the loop then fails with "Event loop stopped
before Future completed". Here Ctrl-C is recorded as a fact whenever it lands, and the report
says the run was interrupted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import math
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from types import FrameType
from typing import TYPE_CHECKING, Any

from promptkit._blocking import run_blocking
from promptkit.adapters import DEFAULT_MAX_TOOL_ROUNDS, CallOptions, ProviderAdapter
from promptkit.app import App
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    CallAbandonedError,
    DepsError,
)
from promptkit.evals._case_checks import (
    case_tool_calls,
    placeholder_message,
    unexpected_tool_error,
)
from promptkit.evals._dataset import Case, Dataset, DepsFactory
from promptkit.evals._evaluators import Evaluator, EvaluatorOutcome, ScoreFunction, as_evaluator
from promptkit.evals._report import CaseResult, EvaluationReport, EvaluatorResult
from promptkit.evals._snapshot import RunOverrides
from promptkit.logging import get_logger
from promptkit.prompt import OverridesLookup, Prompt
from promptkit.secrets import redact_secrets

if TYPE_CHECKING:
    from promptkit.adapters import PromptResponse, TokenUsage

_log = get_logger("promptkit.evals")

DEFAULT_CONCURRENCY = 8
DEFAULT_CASE_DEADLINE_S = 300.0
"""Each case's deadline when none is given: its model calls, tools and evaluators together."""

ResultListener = Callable[[CaseResult], None]
"""Called on the event loop with each result as it finishes (a progress bar, a log)."""


def run_evaluation(
    prompt: Prompt[Any],
    dataset: Dataset,
    adapter: ProviderAdapter | App[Any],
    evaluators: Sequence[Evaluator | ScoreFunction],
    *,
    tag: str | Sequence[str] | None = None,
    overrides_store: OverridesLookup | None = None,
    deps: DepsFactory | None = None,
    allow_placeholder_digest: bool = False,
    concurrency: int = DEFAULT_CONCURRENCY,
    deadline: float | timedelta | None = None,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    on_result: ResultListener | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> EvaluationReport:
    """Evaluate `prompt` on every case of `dataset` under each override `tag` and score the
    replies with `evaluators`; see `EvaluationReport`.

    `adapter` is the application's `App` (or a bare adapter): its model runs the cases with its
    settings, prices and deps, and its overrides store and tag are the defaults of
    `overrides_store` and `tag` (else none, and `latest`). `deps`, a function of the case,
    gives each case deps of its own instead of the app's. `allow_placeholder_digest` lets a case
    run with the placeholder workspace digest (it fails otherwise). `deadline` bounds each
    case's evaluation; `clock` times the cases and the run (a `FakeClock` in tests).

    Ctrl-C stops the run: the report then holds the cases that finished, with `interrupted`
    set; a second Ctrl-C stops it without waiting for the cases in flight to be cancelled.
    Must be called outside a running event loop; use `arun_evaluation` inside one.
    """
    run = _Run(
        prompt,
        dataset,
        adapter,
        evaluators,
        tag=tag,
        overrides_store=overrides_store,
        deps=deps,
        allow_placeholder_digest=allow_placeholder_digest,
        concurrency=concurrency,
        deadline=deadline,
        max_tool_rounds=max_tool_rounds,
        on_result=on_result,
        clock=clock,
    )
    with _ctrl_c_stops(run):
        try:
            asyncio.run(run.execute_until_stopped())
        except KeyboardInterrupt:  # a second Ctrl-C, or the caller's own SIGINT handler
            return run.report(interrupted=True)
    return run.report(interrupted=run.stop_requested)


@contextmanager
def _ctrl_c_stops(run: _Run) -> Iterator[None]:
    """While the block runs, Ctrl-C stops `run`; a second one, while its cases are still being
    cancelled, raises KeyboardInterrupt. A caller that installed its own SIGINT handler (or
    runs off the main thread, where there is none) keeps it."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
        if run.stop_requested and run.is_running:
            raise KeyboardInterrupt
        run.stop()

    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


async def arun_evaluation(
    prompt: Prompt[Any],
    dataset: Dataset,
    adapter: ProviderAdapter | App[Any],
    evaluators: Sequence[Evaluator | ScoreFunction],
    *,
    tag: str | Sequence[str] | None = None,
    overrides_store: OverridesLookup | None = None,
    deps: DepsFactory | None = None,
    allow_placeholder_digest: bool = False,
    concurrency: int = DEFAULT_CONCURRENCY,
    deadline: float | timedelta | None = None,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    on_result: ResultListener | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> EvaluationReport:
    """`run_evaluation` for asyncio; a cancellation stops the cases in flight and propagates."""
    run = _Run(
        prompt,
        dataset,
        adapter,
        evaluators,
        tag=tag,
        overrides_store=overrides_store,
        deps=deps,
        allow_placeholder_digest=allow_placeholder_digest,
        concurrency=concurrency,
        deadline=deadline,
        max_tool_rounds=max_tool_rounds,
        on_result=on_result,
        clock=clock,
    )
    await run.execute()
    return run.report(interrupted=False)


class _Run:
    """One run's arguments and the results gathered so far (kept when the run is stopped)."""

    def __init__(
        self,
        prompt: Prompt[Any],
        dataset: Dataset,
        adapter: ProviderAdapter | App[Any],
        evaluators: Sequence[Evaluator | ScoreFunction],
        *,
        tag: str | Sequence[str] | None,
        overrides_store: OverridesLookup | None,
        deps: DepsFactory | None,
        allow_placeholder_digest: bool,
        concurrency: int,
        deadline: float | timedelta | None,
        max_tool_rounds: int,
        on_result: ResultListener | None,
        clock: Clock,
    ) -> None:
        self.deadline_s = _deadline_seconds(deadline)
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ArgumentValueError(
                f"concurrency must be an int of 1 or more, got {concurrency!r}"
            )
        if not isinstance(clock, Clock):
            raise ArgumentTypeError(
                f"clock must be a promptkit Clock (SYSTEM_CLOCK or a FakeClock), got {clock!r}"
            )
        if deps is not None and not callable(deps):
            raise ArgumentTypeError(
                f"deps must be a function of the case that returns its deps, got {deps!r}"
            )
        self.app = _app_of(adapter)
        self.adapter = self.app.model_adapter
        self.prompt = prompt
        self.dataset = dataset
        self.evaluators = tuple(as_evaluator(evaluator) for evaluator in evaluators)
        self.tags = tags = _tags(tag if tag is not None else self.app.tag)
        self.deps = deps
        store = overrides_store if overrides_store is not None else self.app.overrides
        # Read once per (prompt, tag): a write during the run changes none of its cases.
        self.overrides = RunOverrides(store) if store is not None else None
        self.snapshots = (
            {tag: self.overrides.snapshot(prompt.descriptor, tag) for tag in tags}
            if self.overrides is not None
            else {}
        )
        self.placeholders = {tag: placeholder_message(prompt, self.overrides, tag) for tag in tags}
        self.allow_placeholder_digest = allow_placeholder_digest
        self.concurrency = concurrency
        self.max_tool_rounds = max_tool_rounds
        self.on_result = on_result
        self.clock = clock
        self.results: list[CaseResult] = []
        self.started = clock.monotonic()
        self.stop_requested = False
        self._stoppable: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None = None
        # Bound once per run: the module's lazy logger would build a new one for every case.
        self.log = _log.bind()

    @property
    def is_running(self) -> bool:
        """Whether `execute_until_stopped` has started and not yet ended."""
        return self._stoppable is not None and not self._stoppable[1].done()

    def stop(self) -> None:
        """Stop `execute_until_stopped` (from the SIGINT handler, on the loop's thread): cancel
        it, or, before it started, make it start no case."""
        self.stop_requested = True
        if self._stoppable is not None and self.is_running:
            loop, task = self._stoppable
            # Cancelled from a loop callback, not from inside whatever step the signal
            # interrupted; the call also wakes the loop if it is waiting on the network.
            loop.call_soon_threadsafe(task.cancel)

    async def execute_until_stopped(self) -> None:
        """`execute` on a loop of its own, ended early by `stop`."""
        task = asyncio.current_task()
        assert task is not None  # asyncio.run runs this as a task
        self._stoppable = (asyncio.get_running_loop(), task)
        try:
            await self.execute(owns_loop=True)
        except asyncio.CancelledError:
            # Nothing else holds this task: the cancellation is the one `stop` asked for.
            if not self.stop_requested:
                raise

    async def execute(self, *, owns_loop: bool = False) -> None:
        """Run every pair; with `owns_loop` (the loop ends with the run) close the client the
        adapter built for it."""
        from promptkit.adapters import WireAdapter

        wire = self.adapter if isinstance(self.adapter, WireAdapter) else None
        if wire is not None:
            # Building the client imports the SDK; done here, it is not in the first latencies.
            wire.async_client()
        pairs = ((tag, case) for tag in self.tags for case in self.dataset.cases)
        workers = min(self.concurrency, len(self.tags) * len(self.dataset.cases)) or 1
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(workers):
                    group.create_task(self._work(pairs))
        finally:
            if owns_loop and wire is not None:
                await wire.aclose_loop_client()

    async def _work(self, pairs: Iterator[tuple[str, Case]]) -> None:
        # Workers share one iterator: a worker takes the next pair only when it is free, so at
        # most `concurrency` evaluations are in flight and none waits on a semaphore.
        for tag, case in pairs:
            if self.stop_requested:
                # Ctrl-C before `execute_until_stopped` started left nothing to cancel.
                return
            result = await self._run_case(tag, case)
            self.results.append(result)
            self.log.info(
                "evaluation_case_finished",
                case=result.case_id,
                override_tag=tag,
                score=result.score,
                failed=result.failed,
            )
            if self.on_result is not None:
                self.on_result(result)

    async def _run_case(self, tag: str, case: Case) -> CaseResult:
        from promptkit.session import Session

        started = self.clock.monotonic()
        placeholder = self.placeholders[tag]
        if placeholder is not None and not self.allow_placeholder_digest:
            return self._failed(tag, case, placeholder, started, placeholder_digest=True)
        try:
            options = self._options(tag, case)
            response = await self.app.aevaluate(
                self.prompt, *case.params, session=Session(), **options
            )
        except Exception as error:
            return self._failed(tag, case, _error_text(error), started, usage=_usage_of(error))
        latency = self.clock.monotonic() - started
        calls = case_tool_calls(response)
        result = CaseResult(
            case_id=case.id,
            override_tag=tag,
            case_tags=case.tags,
            # Reports are files people share: a credential the model echoed stays out of them.
            text=redact_secrets(response.text),
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            cost=_cost_of(response.usage),
            unpriced=response.usage.unpriced,
            latency_s=latency,
            location=case.location,
            tool_calls=calls,
            placeholder_digest=placeholder is not None,
        )
        tool_error = unexpected_tool_error(case, calls)
        if tool_error is not None:
            # The reply after a tool failed says nothing of the text under test: not scored.
            return dataclasses.replace(result, error=tool_error)
        # Side by side, each within what is left of the case's deadline: one evaluator that
        # blocks does not take the others' time.
        remaining = max(self.deadline_s - (self.clock.monotonic() - started), 0.0)
        evaluations = await asyncio.gather(
            *(self._score(evaluator, case, response, remaining) for evaluator in self.evaluators)
        )
        return dataclasses.replace(result, evaluations=tuple(evaluations))

    def _options(self, tag: str, case: Case) -> CallOptions[Any]:
        """The call options of one case: the run's overrides, tag, limits and the case's input,
        and its deps when the run has a factory (else the app's deps apply)."""
        options: CallOptions[Any] = {
            "overrides_store": self.overrides,
            "overrides_tag": tag,
            "deadline": self.deadline_s,
            "max_tool_rounds": self.max_tool_rounds,
            "user_message": case.input,
        }
        if self.deps is not None:
            try:
                options["deps"] = self.deps(case)
            except Exception as error:
                raise DepsError(
                    f"the deps factory raised on case {case.id!r}: {type(error).__name__}: {error}"
                ) from error
        return options

    def _failed(
        self,
        tag: str,
        case: Case,
        error: str,
        started: float,
        *,
        usage: TokenUsage | None = None,
        placeholder_digest: bool = False,
    ) -> CaseResult:
        return CaseResult(
            case_id=case.id,
            override_tag=tag,
            case_tags=case.tags,
            error=error,
            input_tokens=None if usage is None else usage.input_tokens,
            output_tokens=None if usage is None else usage.output_tokens,
            cost=_cost_of(usage),
            unpriced=0 if usage is None else usage.unpriced,
            latency_s=self.clock.monotonic() - started,
            location=case.location,
            placeholder_digest=placeholder_digest,
        )

    async def _score(
        self, evaluator: Evaluator, case: Case, response: PromptResponse[Any], remaining: float
    ) -> EvaluatorResult:
        """`evaluator`'s judgement within `remaining` seconds. A blocking evaluator runs on a
        daemon thread (the event loop, Ctrl-C included, stays responsive) and is abandoned when
        the time is up; an async one is cancelled then."""
        what = f"evaluator {evaluator.name!r} (the case's deadline is {self.deadline_s:g}s)"
        is_async = inspect.iscoroutinefunction(evaluator.evaluate)
        try:
            outcome: EvaluatorOutcome
            if is_async:
                outcome = evaluator.evaluate(case, response)
            else:
                outcome = await run_blocking(
                    lambda: evaluator.evaluate(case, response), timeout=remaining, what=what
                )
            if inspect.isawaitable(outcome):
                try:
                    async with asyncio.timeout(remaining):
                        score = await outcome
                except TimeoutError:
                    raise CallAbandonedError(
                        f"{what} did not finish within {remaining:g}s; it was cancelled"
                    ) from None
            else:
                score = outcome
        except Exception as error:
            return EvaluatorResult(evaluator.name, None, error=_error_text(error))
        if score is None:
            return EvaluatorResult(evaluator.name, None, "does not apply to this case")
        return EvaluatorResult(evaluator.name, score.value, redact_secrets(score.reason))

    def report(self, *, interrupted: bool) -> EvaluationReport:
        case_ids = self.dataset.case_ids
        order = {
            (tag, case_id): index
            for index, (tag, case_id) in enumerate(
                (tag, case_id) for tag in self.tags for case_id in case_ids
            )
        }
        return EvaluationReport(
            prompt=f"{self.prompt.ns}/{self.prompt.key}",
            provider=self.adapter.provider,
            model=self.adapter.model,
            dataset=self.dataset.name,
            dataset_hash=self.dataset.content_hash,
            override_tags=self.tags,
            case_ids=case_ids,
            results=tuple(sorted(self.results, key=lambda r: order[(r.override_tag, r.case_id)])),
            invalid_cases=self.dataset.invalid,
            evaluators=tuple(evaluator.name for evaluator in self.evaluators),
            interrupted=interrupted,
            duration_s=self.clock.monotonic() - self.started,
            overrides=self.snapshots,
            settings=self.settings(),
            dataset_source=self.dataset.source,
        )

    def settings(self) -> dict[str, Any]:
        """What besides the texts decided the replies: the run's limits, the model's settings
        (the adapter's, with the app's on top, as each case ran them)."""
        from promptkit.adapters import WireAdapter

        chosen = (
            self.adapter.settings.merged(self.app.settings)
            if isinstance(self.adapter, WireAdapter)
            else self.app.settings
        )
        model_settings = (
            {
                name: list(value) if isinstance(value, tuple) else value
                for name, value in dataclasses.asdict(chosen).items()
                if value is not None
            }
            if chosen is not None
            else {}
        )
        settings: dict[str, Any] = {
            "concurrency": self.concurrency,
            "deadline_s": self.deadline_s,
            "max_tool_rounds": self.max_tool_rounds,
            "model_settings": model_settings,
        }
        if self.allow_placeholder_digest:
            settings["allow_placeholder_digest"] = True
        return settings


def _deadline_seconds(deadline: float | timedelta | None) -> float:
    if deadline is None:
        return DEFAULT_CASE_DEADLINE_S
    seconds = deadline.total_seconds() if isinstance(deadline, timedelta) else deadline
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise ArgumentValueError(
            "deadline must be a positive, finite number of seconds (or a timedelta), got"
            f" {deadline!r}"
        )
    return float(seconds)


def _tags(tag: str | Sequence[str]) -> tuple[str, ...]:
    tags = (tag,) if isinstance(tag, str) else tuple(tag)
    if not tags:
        raise ArgumentValueError("run_evaluation needs at least one override tag")
    if len(set(tags)) != len(tags):
        raise ArgumentValueError(f"override tags repeat: {', '.join(tags)}")
    return tags


def _error_text(error: BaseException) -> str:
    return redact_secrets(f"{type(error).__name__}: {error}")


def _app_of(adapter: ProviderAdapter | App[Any]) -> App[Any]:
    if isinstance(adapter, App):
        return adapter
    if not isinstance(adapter, ProviderAdapter):
        raise ArgumentTypeError(
            f"run_evaluation runs a promptkit App or ProviderAdapter, got {type(adapter).__name__}"
        )
    return App(adapter=adapter)


def _usage_of(error: BaseException) -> TokenUsage | None:
    # An answer that did not parse, was cut off or refused still cost tokens; the adapter
    # attaches its partial response (OutputParseError, ModelOutputError) to the error.
    from promptkit.adapters import TokenUsage

    usage = getattr(getattr(error, "response", None), "usage", None)
    return usage if isinstance(usage, TokenUsage) else None


def _cost_of(usage: TokenUsage | None) -> float | None:
    # The adapter prices usage from its price sources; None for a model none of them lists.
    return None if usage is None else usage.cost
