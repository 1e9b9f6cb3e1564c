"""The options of one call to `evaluate`, `aevaluate`, `stream` or `astream`, declared once.

`CallOptions` is the one declaration: the four methods take it as `**options:
Unpack[CallOptions[Deps]]`, so a type checker knows every keyword and rejects a misspelt one, and
`Evaluation` reads it, checking the names and values at run time as well. Adding an option is
a field here and its use there. Every option may be left out, but `deps` for a prompt that
declares a deps type (`CallOptionsWithDeps`: a type checker then also rejects a forgotten
`deps=`); the defaults are the constants below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Required, TypedDict

# A default lets a bare `CallOptions` mean `CallOptions[Any]` (PEP 696).
from typing_extensions import TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import timedelta
    from pathlib import Path

    from promptkit.adapters._conversation import Message
    from promptkit.adapters._cost import PriceTable
    from promptkit.adapters._settings import ModelSettings
    from promptkit.adapters._stream import StreamLimits
    from promptkit.prompt import OverridesLookup

DEFAULT_USER_MESSAGE = "Follow the instructions above."
"""The user turn sent after the rendered prompt when a call is not given one."""

DEFAULT_MAX_TOOL_ROUNDS = 16
"""The rounds of tool calls a call allows when not told otherwise."""

DEFAULT_OUTPUT_RETRIES = 1
"""How often a reply that does not parse goes back to the model when not told otherwise."""

DEFAULT_OVERRIDES_TAG = "latest"
"""The tag of the section overrides a call renders with when not told otherwise."""

DEFAULT_TOOL_CONCURRENCY = 8
"""The tool calls of one reply that run at once when not told otherwise (see
`CallOptions.tool_concurrency`)."""

DepsT = TypeVar("DepsT", default=Any)


class _RunOptions(TypedDict, total=False):
    """Every call option but `deps`, which the two declarations below type by the prompt."""

    overrides_store: OverridesLookup | None
    """Section overrides applied when the prompt is rendered, as `Prompt.render` applies them."""
    overrides_tag: str
    """The tag of those overrides (default `DEFAULT_OVERRIDES_TAG`)."""
    deadline: float | timedelta | None
    """Bounds the whole evaluation, every request and tool round: seconds or a timedelta from
    the call (default: none)."""
    max_tool_rounds: int
    """Rounds of tool calls before `ToolLoopLimitError` (default `DEFAULT_MAX_TOOL_ROUNDS`)."""
    output_dir: str | Path | None
    """Where `manifest.json` records the run (with `response.json` or `raw_output.txt`)."""
    user_message: str | None
    """The user turn after the rendered prompt (default `DEFAULT_USER_MESSAGE`)."""
    messages: Sequence[Message] | None
    """Earlier turns to continue (an earlier response's `messages`)."""
    conversation: str | None
    """A conversation kept in the session instead of `messages`: read before the call and
    extended after it."""
    settings: ModelSettings | None
    """Overrides the adapter's `ModelSettings`, field by field."""
    output_retries: int
    """How often a reply that does not parse into the output type goes back to the model with
    the error (default `DEFAULT_OUTPUT_RETRIES`)."""
    tool_concurrency: int
    """How many tool calls of one reply run at once, at most (default
    `DEFAULT_TOOL_CONCURRENCY`); only calls whose tools are `runs_concurrently` overlap."""
    prices: PriceTable | None
    """The prices `usage.cost` comes from for this call (default: the adapter's)."""
    stream_limits: StreamLimits | None
    """The bytes each streamed reply of `stream` and `astream` may take, and its time when
    there is no `deadline` (default `StreamLimits()`: 64 MiB, 30 minutes)."""


class CallOptions(_RunOptions, Generic[DepsT], total=False):
    """The keyword arguments of `evaluate`, `aevaluate`, `stream` and `astream` besides
    `session`; every one may be left out (`deps` for a prompt without a deps type)."""

    deps: DepsT
    """The application's value for tool handlers, as `ToolContext.deps`: of the prompt's
    `deps_type`."""


class CallOptionsWithDeps(_RunOptions, Generic[DepsT], total=False):
    """`CallOptions` of a prompt that declares a deps type: `deps` must be passed."""

    deps: Required[DepsT]
    """The application's value for tool handlers, as `ToolContext.deps`: of the prompt's
    `deps_type`."""


CALL_OPTION_NAMES: frozenset[str] = CallOptions.__required_keys__ | CallOptions.__optional_keys__
"""Every option's name, for the run-time check of callers a type checker does not see."""
