"""The events promptkit itself dispatches, and the events that model direct slice changes.

`PromptRendered`, `ModelReplied`, `ToolInvoked` and `PromptExecuted` are recorded by every
session: they are registered slice types (names `promptkit.prompt-rendered`,
`promptkit.model-replied`, `promptkit.tool-invoked`, `promptkit.prompt-executed`) and, having
no reducer of their own, are appended to a slice of their own type. `SliceSeeded`,
`SliceCleared` and `SessionRolledBack` are what `seed_slice`, `clear_slice` and `rollback`
dispatch, so subscribers and an attached store see those changes too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from promptkit.session._slices import register_slice_type
from promptkit.session._snapshot import SessionSnapshot


@dataclass(frozen=True)
class PromptRendered:
    """A prompt was rendered to `text`, exposing the tools named in `tool_names`."""

    prompt_ns: str
    prompt_key: str
    prompt_name: str | None
    text: str
    tool_names: tuple[str, ...]
    rendered_at: datetime


@dataclass(frozen=True)
class ToolInvoked:
    """A tool ran: `params` and `value` are JSON-ready, `result_message` is what the model saw."""

    prompt_ns: str
    prompt_key: str
    name: str
    params: Mapping[str, Any]
    result_message: str
    value: Any
    success: bool
    duration_s: float
    call_id: str
    invoked_at: datetime


@dataclass(frozen=True)
class PromptExecuted:
    """A provider answered a prompt; `output` is the parsed structured output, JSON-ready, and
    `finish_reason` why the answer ended (`stop`, `length`, `refusal`, ...)."""

    prompt_ns: str
    prompt_key: str
    prompt_name: str | None
    provider: str
    model: str
    text: str
    output: Any
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    duration_s: float
    executed_at: datetime
    # Added later: events stored before them load with None.
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    finish_reason: str | None = None
    cost: float | None = None
    """US dollars, when the adapter's price table lists the model."""


@dataclass(frozen=True)
class ModelReplied:
    """One reply of the model arrived: the `request`-th of an evaluation of the prompt, with
    the tokens it reports (None when the server reports none), how many tool calls it asked for
    and why it ended. An evaluation with tool rounds has one per round; `PromptExecuted` comes
    once, at its end. What a progress display counts while an evaluation runs."""

    prompt_ns: str
    prompt_key: str
    request: int
    input_tokens: int | None
    output_tokens: int | None
    tool_calls: int
    finish_reason: str
    replied_at: datetime


@dataclass(frozen=True)
class SliceSeeded:
    """The slice of `slice_type` was set to exactly `values` (`Session.seed_slice`)."""

    slice_type: type[Any]
    values: tuple[Any, ...]


@dataclass(frozen=True)
class SliceCleared:
    """Values of `slice_type` matching `predicate` (all when None) were removed."""

    slice_type: type[Any]
    predicate: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class SessionRolledBack:
    """Every slice was restored to `snapshot` (`Session.rollback`)."""

    snapshot: SessionSnapshot


SLICE_SEEDED = "promptkit.slice-seeded"
SLICE_CLEARED = "promptkit.slice-cleared"
SESSION_ROLLED_BACK = "promptkit.session-rolled-back"

register_slice_type("promptkit.prompt-rendered", PromptRendered)
register_slice_type("promptkit.model-replied", ModelReplied)
register_slice_type("promptkit.tool-invoked", ToolInvoked)
register_slice_type("promptkit.prompt-executed", PromptExecuted)
