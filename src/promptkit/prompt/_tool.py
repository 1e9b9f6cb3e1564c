"""Tools a prompt offers a model: typed params, a handler, typed deps and a contract hash.

A tool's JSON schema comes from its params type; the contract hash covers the description and
the schema, so a description override written against an older contract is not applied.
The deps a tool needs are the type its handler gives its context (`ToolContext[Deps]`): type
checkers read it as `Tool[Params, Deps]`, and the prompt the tool is part of checks, when it is
built, that it declares deps a handler can use (`DepsNeed`).
Every result a handler returns passes through `mask_tool_result` before anyone else sees it, so
credentials in files a tool read never reach the model, the session or a log.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
import threading
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

# A default lets a bare `ToolContext` annotation mean `ToolContext[Any]` (PEP 696).
from typing_extensions import TypeVar as DefaultedTypeVar

from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import ArgumentTypeError, PromptValidationError, ToolValidationError
from promptkit.prompt._deps import DepsNeed, require_tool_deps
from promptkit.prompt._hashing import canonical_json, content_hash
from promptkit.prompt._params import (
    describe_validation_error,
    is_params_type,
    type_adapter,
    type_name,
)

if TYPE_CHECKING:
    from collections.abc import Coroutine

# pydantic, asyncio and the secret rules are imported where a tool is called or its schema is
# read: building a prompt (as `promptkit overrides list` does) needs none of them.

ParamsT = TypeVar("ParamsT")
DepsT = DefaultedTypeVar("DepsT", default=Any)
T = TypeVar("T")

TOOL_NAME_PATTERN = re.compile(r"[a-z0-9_-]{1,64}")


@dataclass(frozen=True)
class ToolResult:
    """What a handler returns: a message for the model, an optional value, and success."""

    message: str
    value: Any = None
    success: bool = True


@dataclass(frozen=True)
class ToolContext(Generic[DepsT]):
    """Facts about the call a handler may use.

    `deadline` is a `clock.monotonic()` value (None without a deadline); `remaining_s()` is the
    time left, read from the same clock, so a handler never mixes two clocks. `deps` is the value
    the application passed to `evaluate(..., deps=...)` (annotate the handler's context as
    `ToolContext[MyDeps]`); `session` is the session the evaluation records in (a
    `promptkit.session.Session`; typed loosely because the prompt core does not depend on
    sessions).
    """

    prompt_ns: str
    prompt_key: str
    call_id: str
    deadline: float | None = None
    clock: Clock = SYSTEM_CLOCK
    deps: DepsT = None  # type: ignore[assignment]  # None when the application passed none
    session: Any = None

    def remaining_s(self) -> float | None:
        """Seconds left before the deadline (0.0 once passed), or None without a deadline."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self.clock.monotonic())


ToolHandler = Callable[[ParamsT, ToolContext[DepsT]], ToolResult | Awaitable[ToolResult]]
"""A tool handler: a plain function returning a `ToolResult`, or an `async def` one."""


@dataclass(frozen=True, kw_only=True, eq=False)
class Tool(Generic[ParamsT, DepsT]):
    """A function the model may call, with params validated against `params_type`.

    `param_descriptions` adds or replaces the description of top-level parameters in the
    schema; overrides use it to tune wording without a code change. `masks_credentials=False`
    hands results to the model exactly as the handler made them (see `mask_tool_result`): only
    for a tool whose results must show credentials, knowingly.

    The calls of one reply may run at the same time when their tools say so:
    `concurrency_safe=None` (the default) means yes for an `async def` handler and no for a
    plain one, which may not be written for several threads; pass True for a plain handler that
    is, or False for an async one that must run alone.
    """

    name: str
    description: str
    params_type: type[ParamsT]
    handler: ToolHandler[ParamsT, DepsT]
    param_descriptions: Mapping[str, str] = field(default_factory=dict)
    masks_credentials: bool = True
    concurrency_safe: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or TOOL_NAME_PATTERN.fullmatch(self.name) is None:
            raise PromptValidationError(
                f"invalid tool name {self.name!r}: expected 1-64 of a-z, 0-9, '_' or '-'"
            )
        if not isinstance(self.description, str) or not self.description.strip():
            raise PromptValidationError(f"tool {self.name!r}: description must be non-empty")
        if not is_params_type(self.params_type):
            raise PromptValidationError(
                f"tool {self.name!r}: params_type must be a pydantic model or a dataclass,"
                f" got {self.params_type!r}"
            )
        if not callable(self.handler):
            raise PromptValidationError(f"tool {self.name!r}: handler must be callable")
        if self.concurrency_safe is not None and not isinstance(self.concurrency_safe, bool):
            raise PromptValidationError(
                f"tool {self.name!r}: concurrency_safe must be True, False or None, got"
                f" {self.concurrency_safe!r}"
            )
        # The schema is built only when there are descriptions to check against it.
        known = self._base_schema.get("properties", {}) if self.param_descriptions else {}
        unknown = set(self.param_descriptions) - set(known)
        if unknown:
            raise PromptValidationError(
                f"tool {self.name!r}: param_descriptions name unknown parameters {sorted(unknown)}"
            )

    @cached_property
    def _base_schema(self) -> dict[str, Any]:
        return type_adapter(self.params_type).json_schema()

    @cached_property
    def parameters_schema(self) -> dict[str, Any]:
        """JSON schema of the params, with `param_descriptions` applied. Do not mutate."""
        if not self.param_descriptions:
            return self._base_schema
        schema = copy.deepcopy(self._base_schema)
        for name, text in self.param_descriptions.items():
            schema["properties"][name]["description"] = text
        return schema

    @cached_property
    def contract_hash(self) -> str:
        """sha256 over the description and the parameters schema."""
        return content_hash(
            canonical_json({"description": self.description, "parameters": self.parameters_schema})
        )

    def parse_arguments(self, arguments: str | Mapping[str, Any]) -> ParamsT:
        """Validate a model's arguments (a JSON string or a mapping) into `params_type`."""
        from pydantic import ValidationError

        adapter = type_adapter(self.params_type)
        try:
            if isinstance(arguments, str):
                parsed: ParamsT = adapter.validate_json(arguments or "{}")
            else:
                parsed = adapter.validate_python(dict(arguments))
        except ValidationError as error:
            raise ToolValidationError(
                f"tool {self.name!r}: invalid arguments: {describe_validation_error(error)}"
            ) from error
        return parsed

    @cached_property
    def is_async(self) -> bool:
        """Whether the handler is an `async def` function."""
        return inspect.iscoroutinefunction(self.handler)

    @property
    def runs_concurrently(self) -> bool:
        """Whether a call may run at the same time as other calls of the same reply."""
        return self.is_async if self.concurrency_safe is None else self.concurrency_safe

    @cached_property
    def deps_need(self) -> DepsNeed | None:
        """The deps the handler needs, or None when its context annotation asks for none (no
        annotation, `ToolContext`, `ToolContext[Any]`, `ToolContext[None]`)."""
        return _deps_need(self.handler)

    def run(self, params: ParamsT, context: ToolContext[DepsT]) -> ToolResult:
        """Call the handler and return its ToolResult; an async handler runs to completion on
        an event loop of its own. `DepsError` when the handler needs deps the context lacks."""
        require_tool_deps(self.name, self.deps_need, context.deps)
        result = self.handler(params, context)
        if inspect.isawaitable(result):
            result = _run_to_completion(_awaited(result))
        return self._checked(result)

    async def arun(self, params: ParamsT, context: ToolContext[DepsT]) -> ToolResult:
        """Call the handler from asyncio: awaited when async, on a daemon thread when it is a
        plain (blocking) function, so the event loop stays responsive and a caller that stops
        waiting (a deadline, a cancellation) leaves nothing holding the loop or the process."""
        from promptkit._blocking import run_blocking

        require_tool_deps(self.name, self.deps_need, context.deps)
        if self.is_async:
            result = self.handler(params, context)
        else:
            result = await run_blocking(lambda: self.handler(params, context))
        if inspect.isawaitable(result):
            result = await result
        return self._checked(result)

    def _checked(self, result: object) -> ToolResult:
        if not isinstance(result, ToolResult):
            raise ArgumentTypeError(
                f"tool {self.name!r}: handler returned {type(result).__name__}, expected ToolResult"
            )
        return mask_tool_result(result) if self.masks_credentials else result

    def with_overrides(
        self, *, description: str | None, param_descriptions: Mapping[str, str]
    ) -> Tool[ParamsT, DepsT]:
        """A copy with the description and parameter descriptions replaced."""
        merged = {**self.param_descriptions, **param_descriptions}
        return replace(self, description=description or self.description, param_descriptions=merged)

    def encode_arguments(self, params: ParamsT) -> str:
        """Params as the JSON text a model would send."""
        return json.dumps(type_adapter(self.params_type).dump_python(params, mode="json"))


def _deps_need(handler: Callable[..., Any]) -> DepsNeed | None:
    """What `handler`'s second parameter (the context) says of deps, resolved like
    `typing.get_type_hints` resolves it; read from its text when a name cannot be resolved."""
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable: no annotations to read
        return None
    if len(parameters) < 2 or parameters[1].annotation is inspect.Parameter.empty:
        return None
    annotation = parameters[1].annotation
    try:
        hint = typing.get_type_hints(
            _Annotations({"context": annotation}), globalns=_globals_of(handler)
        )["context"]
    except Exception:  # a name the handler's module does not define at run time
        return _written_deps_need(annotation) if isinstance(annotation, str) else None
    if typing.get_origin(hint) is not ToolContext:
        return None
    (deps_type,) = typing.get_args(hint)
    if deps_type in (Any, object, None, type(None)) or isinstance(deps_type, TypeVar):
        return None
    return DepsNeed(deps_type, type_name(deps_type))


class _Annotations:
    """An object with only annotations, for `typing.get_type_hints` to resolve them."""

    def __init__(self, annotations: dict[str, Any]) -> None:
        self.__annotations__ = annotations


def _globals_of(handler: Callable[..., Any]) -> dict[str, Any]:
    """The names the handler's annotations are resolved against: its module's."""
    target = inspect.unwrap(handler)
    while isinstance(target, partial):
        target = target.func
    globalns: dict[str, Any] | None = getattr(target, "__globals__", None)
    if globalns is None:  # a callable object: its class's module
        module = inspect.getmodule(type(target))
        globalns = vars(module) if module is not None else {}
    return globalns


def _written_deps_need(annotation: str) -> DepsNeed | None:
    """The need an unresolvable annotation states in its text: `ToolContext[Deps]` needs deps
    (of a type only a type checker can see), `ToolContext` or `ToolContext[Any]` none."""
    import ast

    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Subscript):
        return None
    holder = ast.unparse(node.value)
    if holder.rsplit(".", 1)[-1] != ToolContext.__name__:
        return None
    written = ast.unparse(node.slice)
    if written.rsplit(".", 1)[-1] in ("Any", "object", "None"):
        return None
    return DepsNeed(None, written)


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _run_to_completion(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on a new event loop; on a worker thread when this thread runs one."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(coroutine))
        except BaseException as error:
            failure.append(error)

    worker = threading.Thread(target=run, name="promptkit-async-tool")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    return outcome[0]


def mask_tool_result(result: ToolResult) -> ToolResult:
    """`result` with every credential in its message and value replaced by `[REDACTED:<rule>]`.

    When anything was masked the message ends with a note saying so, so the model knows the
    value exists and is withheld rather than concluding the file holds none.
    """
    from promptkit.secrets import mask_secrets, redact_value

    masked = mask_secrets(result.message)
    value = redact_value(result.value) if result.value is not None else None
    if not masked.is_masked and value == result.value:
        return result
    message = masked.text
    if masked.is_masked:
        message += (
            f"\n[promptkit masked credentials in this result ({', '.join(masked.rules)}):"
            " the values are withheld; refer to them by where they are]"
        )
    return ToolResult(message=message, value=value, success=result.success)
