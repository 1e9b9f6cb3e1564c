"""`WireAdapter`: a `ProviderAdapter` that speaks a provider's wire API through its SDK, shared by
every provider: a provider's adapter only names its SDK (`ProviderSdk`) and chooses the
`WireApi`.

`evaluate`, `aevaluate`, `stream` and `astream` each check their options into one `Evaluation`
and hand it to the one driver (`_driver.drive`), performed blocking or with asyncio; the tool
loop inside it is written once too (`_loop`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, Unpack, overload

from promptkit.adapters._clients import ClientPair
from promptkit.adapters._cost import DEFAULT_PRICES, PriceTable
from promptkit.adapters._driver import alast_response, drive, last_response, run_async, run_blocking
from promptkit.adapters._evaluation import Evaluation
from promptkit.adapters._events import StreamEvent
from promptkit.adapters._local_servers import (
    SchemaFallback,
    is_custom_base_url,
    prompt_mode_advice,
    shown_url,
    with_local_server_key,
)
from promptkit.adapters._options import CallOptions, CallOptionsWithDeps
from promptkit.adapters._provider import ProviderAdapter
from promptkit.adapters._provider_errors import client_secrets, scrub, translate_sdk_error
from promptkit.adapters._response import PromptResponse
from promptkit.adapters._settings import ModelSettings
from promptkit.adapters._wire_api import WireApi
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    PromptkitError,
    ProviderAuthenticationError,
    StructuredOutputUnsupportedError,
)
from promptkit.logging import get_logger
from promptkit.prompt import Prompt
from promptkit.session import Session

StructuredOutputMode = Literal["native", "prompt"]
"""`native`: the API constrains the reply to the output schema where it can; `prompt`: the
prompt's Response Format section alone asks for the JSON (models without structured outputs)."""

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")

_log = get_logger("promptkit.adapters")


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
    JSON to the prompt's Response Format section instead of the API's schema-constrained output;
    at a custom base URL, a server that refuses the schema makes the adapter fall back to it
    once, for that request and every later one (`promptkit.adapters._local_servers`).
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
        # Set once a server at a custom base URL refused the JSON-schema format: from then on
        # this adapter asks in prompt mode, rather than have every request refused first.
        self._schema_refused = False
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
        """Whether requests ask the API for schema-constrained output (`structured_output`, and
        no server at a custom base URL refused it yet)."""
        return self._structured_output == "native" and not self._schema_refused

    @property
    def base_url(self) -> str | None:
        """Where requests go: the client's base URL (None for the SDK's default). Builds no
        client."""
        return self._clients.base_url(self.sdk.url_variable)

    @property
    def at_custom_server(self) -> bool:
        """Whether requests go to a server other than the provider's own API (a local or
        other compatible server), which serves its own models and features."""
        return is_custom_base_url(self.base_url, self.provider)

    def schema_fallback(self) -> SchemaFallback | None:
        """The fallback to prompt-mode structured output an evaluation may take once: at a
        custom base URL, while requests ask for the schema; None elsewhere."""
        if not (self.asks_for_schema and self.at_custom_server):
            return None
        return SchemaFallback(self._schema_refused_by_server)

    def _schema_refused_by_server(self, error: StructuredOutputUnsupportedError) -> None:
        self._schema_refused = True
        url = self.base_url
        _log.warning(
            "structured_output_fallback",
            model=self.model,
            base_url=shown_url(url) if url else None,
            status=error.status,
            reason="the server refused the JSON-schema output format; this adapter asks for"
            " the JSON in the prompt from now on (pass structured_output='prompt' to skip the"
            " refused request)",
        )

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
        url = getattr(client, "base_url", None)
        return translate_sdk_error(
            error,
            sdk=sdk,
            base_error=getattr(sdk, self.sdk.base_error),
            where=where,
            secrets=client_secrets(client),
            base_url=str(url) if url is not None else None,
            schema_advice=(
                prompt_mode_advice(type(self).__name__)
                if self._structured_output == "native"
                else None
            ),
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

    # -- the four ways to run: one driver ------------------------------------------------------
    # Each is overloaded for type checkers only: a prompt without a deps type takes no deps, one
    # with a deps type needs them, of that type (`CallOptionsWithDeps`).

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

    def evaluate(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[Any]],
    ) -> PromptResponse[OutputT]:
        run = Evaluation(self, prompt, session, options, method="evaluate")
        return last_response(
            run_blocking(drive(run, params, connect=self.sync_client, streamed=False))
        )

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

    async def aevaluate(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[Any]],
    ) -> PromptResponse[OutputT]:
        run = Evaluation(self, prompt, session, options, method="aevaluate")
        return await alast_response(
            run_async(drive(run, params, connect=self.async_client, streamed=False))
        )

    @overload
    def stream(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[None]],
    ) -> Iterator[StreamEvent[OutputT]]: ...

    @overload
    def stream(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> Iterator[StreamEvent[OutputT]]: ...

    def stream(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[Any]],
    ) -> Iterator[StreamEvent[OutputT]]:
        """`evaluate` as it happens: `TextDelta`s as each reply arrives, `UsageReported` per
        reply, `ToolCallStarted`/`ToolCallFinished` per tool call, and last `ResponseCompleted`
        with the `PromptResponse`. Takes `evaluate`'s options; nothing is sent until the first
        event is read."""
        run = Evaluation(self, prompt, session, options, method="stream")
        return run_blocking(drive(run, params, connect=self.sync_client, streamed=True))

    @overload
    def astream(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[None]],
    ) -> AsyncIterator[StreamEvent[OutputT]]: ...

    @overload
    def astream(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> AsyncIterator[StreamEvent[OutputT]]: ...

    def astream(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session,
        **options: Unpack[CallOptions[Any]],
    ) -> AsyncIterator[StreamEvent[OutputT]]:
        """`stream` for asyncio (`async for event in adapter.astream(...)`)."""
        run = Evaluation(self, prompt, session, options, method="astream")
        return run_async(drive(run, params, connect=self.async_client, streamed=True))
