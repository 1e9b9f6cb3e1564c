"""`App`: what an application binds once instead of passing to every call.

An application runs its prompts with one adapter, one overrides store and tag, one session
store, its model settings, its prices and its default deps. Passed call by call, one of them is
soon forgotten (an `evaluate` without `overrides_store=` serves the code's text, not the text an
operator promoted), and the command line cannot run the application as it runs. An `App` holds
them; its `evaluate`, `aevaluate`, `stream`, `astream`, `render` and `optimize` pass them on,
and a call's own options still win, one by one (settings field by field).

The overrides store is read at every render, and a file store re-reads a file whose bytes
changed, so text promoted or set while the application runs is served by its next call; a file
that breaks is skipped with an error record and the last good text kept (see docs/overrides.md).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, Unpack, cast, overload

# A default lets `App()` without deps be `App[None]` (PEP 696).
from typing_extensions import TypeVar as DefaultedTypeVar

from promptkit._names import is_valid_key
from promptkit.adapters import (
    DEFAULT_OVERRIDES_TAG,
    CallOptions,
    CallOptionsWithDeps,
    ModelSettings,
    PriceTable,
    PromptResponse,
    ProviderAdapter,
    StreamEvent,
    WireAdapter,
    choose_adapter,
    model_configured,
)
from promptkit.config import ProjectConfig, find_project_config
from promptkit.discovery import (
    import_reference,
    overrides_store_of,
    session_store_of,
    use_project,
)
from promptkit.errors import ArgumentTypeError, ConfigError, PromptkitError, ProviderError
from promptkit.overrides import PromptOverridesStore
from promptkit.prompt import Prompt, RenderedPrompt
from promptkit.session import Session, SessionProtocol, SessionStoreProtocol

if TYPE_CHECKING:
    from promptkit.optimize import DigestWriter, OptimizationResult, OptimizationScope

OutputT = TypeVar("OutputT")
DepsT = TypeVar("DepsT")
AppDepsT = DefaultedTypeVar("AppDepsT", default=None)


@dataclass(frozen=True, kw_only=True)
class App(Generic[AppDepsT]):
    """An application's binding: see the module doc.

    `adapter` runs the prompts (None for an application that only renders and optimizes
    offline: a call that needs a model then fails saying so). `overrides` and `tag` are the
    overrides every render applies; `sessions` keeps sessions across processes (the CLI's
    workspace commands and the REPL use it); `settings` and `prices` apply to every call on
    top of the adapter's own; `deps` is the value tool handlers get when a call passes none.

    An app is typed by the deps it binds (`App[Repo]`, inferred from `deps=`): a type checker
    then rejects a call of a prompt whose tools read other deps unless the call passes its own,
    and deps of the wrong type (`App(deps="oops")`) wherever they meet a prompt's. Change a
    binding with `dataclasses.replace(app, tag="candidate")`, or `with_deps` to bind deps of
    another type.
    """

    adapter: ProviderAdapter | None = None
    overrides: PromptOverridesStore | None = None
    tag: str = DEFAULT_OVERRIDES_TAG
    sessions: SessionStoreProtocol | None = None
    settings: ModelSettings | None = None
    prices: PriceTable | None = None
    deps: AppDepsT = None  # type: ignore[assignment]  # App[None] unless deps are bound

    @overload
    @classmethod
    def from_project(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> App[None]: ...

    @overload
    @classmethod
    def from_project(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        deps: DepsT,
        environ: Mapping[str, str] | None = None,
    ) -> App[DepsT]: ...

    @classmethod
    def from_project(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        deps: Any = None,
        environ: Mapping[str, str] | None = None,
    ) -> App[Any]:
        """The binding the project at or above `path` (default: the current folder) configures
        in `[tool.promptkit]` (`from_config`), with `deps`; ConfigError for a table that cannot
        be used."""
        return cls.from_config(find_project_config(path), deps=deps, environ=environ)

    @overload
    @classmethod
    def from_config(
        cls, config: ProjectConfig, *, environ: Mapping[str, str] | None = None
    ) -> App[None]: ...

    @overload
    @classmethod
    def from_config(
        cls, config: ProjectConfig, *, deps: DepsT, environ: Mapping[str, str] | None = None
    ) -> App[DepsT]: ...

    @classmethod
    def from_config(
        cls, config: ProjectConfig, *, deps: Any = None, environ: Mapping[str, str] | None = None
    ) -> App[Any]:
        """The binding `config` says: its overrides store and tag, its session store, and the
        adapter of its provider, model, base URL and structured-output mode, chosen from
        `environ` (default `os.environ`) as `promptkit optimize` chooses; no adapter for the
        `static` provider, nor for `auto` when no model is configured (a call then says how to
        configure one). A named provider without its key is a ProviderAuthenticationError.
        `deps` are the application's deps (typed: `App[Deps]`)."""
        use_project(config)
        return App(
            adapter=_configured_adapter(config, os.environ if environ is None else environ),
            overrides=overrides_store_of(config),
            tag=config.tag,
            sessions=session_store_of(config),
            deps=deps,
        )

    def __post_init__(self) -> None:
        for name, expected in (
            ("adapter", ProviderAdapter),
            ("overrides", PromptOverridesStore),
            ("sessions", SessionStoreProtocol),
            ("settings", ModelSettings),
            ("prices", PriceTable),
        ):
            value = getattr(self, name)
            if value is not None and not isinstance(value, expected):
                raise ArgumentTypeError(
                    f"App({name}=...) must be a promptkit {expected.__name__} or None, got"
                    f" {type(value).__name__}"
                )
        if not isinstance(self.tag, str) or not is_valid_key(self.tag):
            raise ArgumentTypeError(
                f"App(tag=...) must be an overrides tag (lower-case letters, digits, '.', '_' or"
                f" '-', starting with a letter or digit), got {self.tag!r}"
            )

    @property
    def model_adapter(self) -> ProviderAdapter:
        """The adapter, or ProviderError saying how to configure one when the app has none."""
        if self.adapter is None:
            raise ProviderError(
                "this App has no model: build it with adapter=..., or configure a provider"
                " (OPENAI_API_KEY, ANTHROPIC_API_KEY, or base_url in [tool.promptkit] for a"
                " local OpenAI-compatible server)"
            )
        return self.adapter

    def call_options(self, options: CallOptions[Any]) -> CallOptions[Any]:
        """`options` of one call completed with what the app binds; the call's own win."""
        bound: CallOptions[Any] = {"overrides_store": self.overrides, "overrides_tag": self.tag}
        if self.settings is not None:
            bound["settings"] = self.settings
        if self.prices is not None:
            bound["prices"] = self.prices
        if self.deps is not None:
            bound["deps"] = self.deps
        bound.update(options)
        if self.settings is not None and options.get("settings") is not None:
            bound["settings"] = self.settings.merged(options["settings"])
        return bound

    # -- running prompts ------------------------------------------------------------------------

    @overload
    def evaluate(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[None]],
    ) -> PromptResponse[OutputT]: ...

    @overload
    def evaluate(
        self: App[DepsT],
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[DepsT]],
    ) -> PromptResponse[OutputT]: ...

    @overload
    def evaluate(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> PromptResponse[OutputT]: ...

    def evaluate(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[Any]],
    ) -> PromptResponse[OutputT]:
        """`ProviderAdapter.evaluate` with the app's binding; a new Session unless given one."""
        return self.model_adapter.evaluate(
            prompt, *params, session=_session(session), **self.call_options(options)
        )

    @overload
    async def aevaluate(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[None]],
    ) -> PromptResponse[OutputT]: ...

    @overload
    async def aevaluate(
        self: App[DepsT],
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[DepsT]],
    ) -> PromptResponse[OutputT]: ...

    @overload
    async def aevaluate(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> PromptResponse[OutputT]: ...

    async def aevaluate(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[Any]],
    ) -> PromptResponse[OutputT]:
        """`evaluate` for asyncio."""
        return await self.model_adapter.aevaluate(
            prompt, *params, session=_session(session), **self.call_options(options)
        )

    @overload
    def stream(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[None]],
    ) -> Iterator[StreamEvent[OutputT]]: ...

    @overload
    def stream(
        self: App[DepsT],
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[DepsT]],
    ) -> Iterator[StreamEvent[OutputT]]: ...

    @overload
    def stream(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> Iterator[StreamEvent[OutputT]]: ...

    def stream(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[Any]],
    ) -> Iterator[StreamEvent[OutputT]]:
        """`evaluate` as it happens (see `WireAdapter.stream`)."""
        return self._streaming().stream(
            prompt, *params, session=_session(session), **self.call_options(options)
        )

    @overload
    def astream(
        self,
        prompt: Prompt[OutputT, None],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[None]],
    ) -> AsyncIterator[StreamEvent[OutputT]]: ...

    @overload
    def astream(
        self: App[DepsT],
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[DepsT]],
    ) -> AsyncIterator[StreamEvent[OutputT]]: ...

    @overload
    def astream(
        self,
        prompt: Prompt[OutputT, DepsT],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptionsWithDeps[DepsT]],
    ) -> AsyncIterator[StreamEvent[OutputT]]: ...

    def astream(
        self,
        prompt: Prompt[OutputT, Any],
        *params: Any,
        session: Session | None = None,
        **options: Unpack[CallOptions[Any]],
    ) -> AsyncIterator[StreamEvent[OutputT]]:
        """`stream` for asyncio."""
        return self._streaming().astream(
            prompt, *params, session=_session(session), **self.call_options(options)
        )

    def render(self, prompt: Prompt[OutputT], *params: Any) -> RenderedPrompt[OutputT]:
        """`prompt` rendered with `params` and the app's overrides and tag, as a call sends it."""
        return prompt.render(*params, overrides_store=self.overrides, tag=self.tag)

    def optimize(
        self,
        prompt: Prompt[Any],
        *,
        session: SessionProtocol,
        scope: OptimizationScope | str = "session",
        writer: DigestWriter | None = None,
        optimization_session: Session | None = None,
        # promptkit.optimize.DEFAULT_OPTIMIZE_DEADLINE: the workflow is imported when called.
        deadline: float | timedelta | None = 900.0,
        output_dir: str | Path | None = None,
        overwrite_operator: bool = False,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        leave_out: Sequence[str | os.PathLike[str]] = (),
        gate: bool = True,
        fallback_static: bool = False,
    ) -> OptimizationResult:
        """Write the workspace digest of `prompt` and store it in `session` (SESSION scope) or
        as the shared digest of the app's overrides and tag (GLOBAL scope), as
        `promptkit.optimize.optimize_workspace_digest` does (with its deadline, digest gate and
        `fallback_static`). `writer` defaults to the app's model (`ModelDigestWriter`), or the
        offline static writer when the app has none."""
        from promptkit.optimize import optimize_workspace_digest

        return optimize_workspace_digest(
            writer if writer is not None else self.digest_writer(),
            prompt,
            store_scope=scope,
            overrides_store=self.overrides,
            overrides_tag=self.tag,
            session=session,
            optimization_session=optimization_session,
            deadline=deadline,
            output_dir=output_dir,
            overwrite_operator=overwrite_operator,
            include=include,
            exclude=exclude,
            leave_out=leave_out,
            gate=gate,
            fallback_static=fallback_static,
        )

    def digest_writer(self) -> DigestWriter:
        """Who writes a digest for this app: its model, or the static writer without one."""
        if self.adapter is None:
            from promptkit.optimize import StaticDigestWriter

            return StaticDigestWriter()
        from promptkit.optimize import ModelDigestWriter

        return ModelDigestWriter(self.adapter)

    def with_deps(self, deps: DepsT) -> App[DepsT]:
        """This app with `deps` bound (of another type than its own, if need be)."""
        untyped: App[Any] = self
        return cast("App[DepsT]", dataclasses.replace(untyped, deps=deps))

    def with_tag(self, tag: str) -> Self:
        """This app serving the overrides of `tag`."""
        return dataclasses.replace(self, tag=tag)

    def _streaming(self) -> WireAdapter:
        adapter = self.model_adapter
        if not isinstance(adapter, WireAdapter):
            raise ArgumentTypeError(
                f"{type(adapter).__name__} does not stream: stream() needs an adapter that"
                " speaks a provider's wire API (OpenAIAdapter, AnthropicAdapter)"
            )
        return adapter


def _configured_adapter(config: ProjectConfig, env: Mapping[str, str]) -> ProviderAdapter | None:
    if config.provider == "static":
        return None
    if config.provider == "auto" and not model_configured(env, config.base_url):
        return None
    return choose_adapter(
        config.provider,
        model=config.model,
        base_url=config.base_url,
        environ=env,
        structured_output=config.structured_output,
    ).adapter


def _session(session: Session | None) -> Session:
    if session is None:
        return Session()
    return session


def load_app(reference: str) -> App[Any]:
    """The application binding `reference` names (`package.module:attr`): an `App`, or a
    function of no arguments that returns one (called now). ConfigError says what did not
    resolve, as the command line reports it (`--app`, `[tool.promptkit] app`)."""
    value = import_reference(reference, what="app", error=ConfigError)
    if not isinstance(value, App) and callable(value):
        try:
            value = value()
        except PromptkitError:
            raise
        except Exception as error:  # the application's own code failed; say so with its error
            raise ConfigError(
                f"app reference {reference!r}: calling it failed: {type(error).__name__}: {error}"
            ) from error
    if not isinstance(value, App):
        raise ConfigError(
            f"app reference {reference!r} is a {type(value).__name__}, not a promptkit App or a"
            " function that returns one"
        )
    return value
