"""`WireAdapter`: a `ProviderAdapter` that speaks a provider's wire API through its SDK, shared by
every provider: a provider's adapter only names its SDK (`ProviderSdk`) and chooses the
`WireApi`.

`evaluate` and `aevaluate` drive the same `tool_loop` (see `promptkit.adapters.loop`) inside one
`Evaluation` (`promptkit.adapters.evaluation`); only how a request is sent and a tool is run
differs. Requests go through a `Transport`, which holds the deadline around each of them.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, Unpack

from promptkit.adapters._transport import Transport
from promptkit.adapters._wire_api import ModelTurn, WireApi
from promptkit.adapters.base import ProviderAdapter
from promptkit.adapters.clients import ClientPair
from promptkit.adapters.conversation import Message
from promptkit.adapters.cost import DEFAULT_PRICES, PriceTable
from promptkit.adapters.evaluation import CallArgs, CallOptions, Evaluation
from promptkit.adapters.local_servers import with_local_server_key, with_schema_hint
from promptkit.adapters.loop import Deadline, SendRequest, Step
from promptkit.adapters.provider_errors import client_secrets, scrub, translate_sdk_error
from promptkit.adapters.response import PromptResponse
from promptkit.adapters.settings import ModelSettings
from promptkit.adapters.streaming import StreamEvent, astream_evaluation, stream_evaluation
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    PromptkitError,
    ProviderAuthenticationError,
)
from promptkit.prompt import OverridesLookup, Prompt
from promptkit.session import Session

StructuredOutputMode = Literal["native", "prompt"]
"""`native`: the API constrains the reply to the output schema where it can; `prompt`: the
prompt's Response Format section alone asks for the JSON (models without structured outputs)."""

OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class ProviderSdk:
    """A provider's SDK as `WireAdapter` uses it: the clients it builds, the exceptions it
    translates, the environment variables its clients read. `load` imports the SDK, which
    happens only when a client is built or an error is translated."""

    title: str
    load: Callable[[], Any]
    client_class: str
    async_client_class: str
    base_error: str
    key_variable: str
    url_variable: str


class WireAdapter(ProviderAdapter):
    """A `ProviderAdapter` that talks to a provider through its SDK, in one of its wire APIs.

    A provider's adapter names its SDK (`sdk`) and chooses the `WireApi`; everything else is
    here and shared: building and closing clients, the loop, events, deadline, execution record
    and error translation. `client` is a ready SDK client for `evaluate` and `async_client` one
    for `aevaluate`; when neither is given, clients are built on first use from `client_kwargs`
    (and the SDK's environment variables), and when one is given the adapter builds none.
    `settings` apply to every call unless a call overrides them; `prices` (default
    `DEFAULT_PRICES`) give each response's `usage.cost`. `structured_output="prompt"` leaves the
    JSON to the prompt's Response Format section instead of the API's schema-constrained output.
    """

    sdk: ClassVar[ProviderSdk]

    def __init__(
        self,
        *,
        model: str,
        client: Any = None,
        async_client: Any = None,
        client_kwargs: Mapping[str, Any] | None = None,
        structured_output: StructuredOutputMode = "native",
        settings: ModelSettings | None = None,
        prices: PriceTable | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        name = type(self).__name__
        if settings is not None and not isinstance(settings, ModelSettings):
            raise ArgumentTypeError(
                f"settings must be a promptkit ModelSettings, got {type(settings).__name__}"
            )
        if not isinstance(model, str) or not model.strip():
            raise ArgumentValueError(f"{name}: model must be a non-empty string, got {model!r}")
        if structured_output not in ("native", "prompt"):
            raise ArgumentValueError(
                f"{name}: structured_output must be 'native' or 'prompt', got {structured_output!r}"
            )
        self._model = model
        self.clock = clock
        self._structured_output: StructuredOutputMode = structured_output
        self._settings = settings or ModelSettings()
        self._prices = DEFAULT_PRICES if prices is None else prices
        self._clients = ClientPair(name, client, async_client, client_kwargs, self._build_client)

    @property
    def model(self) -> str:
        return self._model

    @property
    def prices(self) -> PriceTable:
        """The price table `PromptResponse.usage.cost` comes from."""
        return self._prices

    @property
    def settings(self) -> ModelSettings:
        """The `ModelSettings` every call starts from."""
        return self._settings

    @property
    def asks_for_schema(self) -> bool:
        """Whether requests ask the API for schema-constrained output (`structured_output`)."""
        return self._structured_output == "native"

    @abstractmethod
    def wire_api(self) -> WireApi:
        """The wire API this adapter speaks."""

    def sync_client(self) -> Any:
        """The SDK client `evaluate` sends requests with."""
        return self._clients.sync_client()

    def async_client(self) -> Any:
        """The SDK client `aevaluate` sends requests with, for the running event loop."""
        return self._clients.async_client()

    def prepare_client(self) -> None:
        """Build the SDK client `evaluate` sends with now (it is kept for the first request),
        and reach for the SDK method it sends with, whose module the SDK imports on first use."""
        self.wire_api().send_method(self.sync_client())

    async def aclose_loop_client(self) -> None:
        """Close the async client this adapter built for the running event loop, if any; one the
        caller passed stays open. For code that ends the loop (`run_evaluation` does): left to
        the garbage collector, the SDK closes it on whatever loop runs then, and fails."""
        await self._clients.aclose_loop_client()

    def translate_error(
        self, error: BaseException, *, client: Any, where: str
    ) -> PromptkitError | None:
        """The promptkit error for an SDK exception, or None when it is not the SDK's."""
        sdk = self.sdk.load()
        translated = translate_sdk_error(
            error,
            sdk=sdk,
            base_error=getattr(sdk, self.sdk.base_error),
            where=where,
            secrets=client_secrets(client),
        )
        return with_schema_hint(
            translated, asks_for_schema=self.asks_for_schema, adapter=type(self).__name__
        )

    def _build_client(self, client_kwargs: Mapping[str, Any], *, sync: bool) -> Any:
        sdk = self.sdk
        module = sdk.load()
        factory = getattr(module, sdk.client_class if sync else sdk.async_client_class)
        kwargs = with_local_server_key(
            client_kwargs, key_variable=sdk.key_variable, url_variable=sdk.url_variable
        )
        try:
            return factory(**kwargs)
        except getattr(module, sdk.base_error) as error:
            raise ProviderAuthenticationError(
                f"{type(self).__name__} could not build an {sdk.title} client:"
                f" {scrub(str(error), ())} (set {sdk.key_variable}, or pass"
                " client_kwargs={'api_key': ...} or client=...)"
            ) from None

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
            codec = self.wire_api()
            transport = self.transport(codec, client, run.deadline)
            turn = self._drive(run.steps(rendered, codec), transport)
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
            codec = self.wire_api()
            transport = self.transport(codec, client, run.deadline)
            turn = await self._adrive(run.steps(rendered, codec), transport)
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

    def transport(self, api: WireApi, client: Any, deadline: Deadline) -> Transport:
        """The requests of one evaluation with `client`."""
        return Transport(api, client, deadline, self.translate_error, self.provider, self.model)

    def _drive(self, steps: Generator[Step, Any, ModelTurn], transport: Transport) -> ModelTurn:
        reply: Any = None
        try:
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as finished:
                    turn: ModelTurn = finished.value
                    return turn
                reply = transport.send(step) if isinstance(step, SendRequest) else step.run()
        finally:
            steps.close()

    async def _adrive(
        self, steps: Generator[Step, Any, ModelTurn], transport: Transport
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
                    reply = await transport.asend(step)
                else:
                    reply = await step.arun()
        finally:
            steps.close()
