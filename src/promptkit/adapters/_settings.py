"""`ModelSettings`: the sampling and output settings of a request.

Settings are set on an adapter and overridden per call (`evaluate(..., settings=...)`); a field
left None is not sent, so the provider's default applies. Each wire API takes a different subset
under different names (its module's `settings_fields`); a setting an API does not accept is a
`UnsupportedSettingError` raised before any request is sent, never silently dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, get_args

from promptkit.errors import ArgumentValueError

ReasoningEffort = Literal["minimal", "low", "medium", "high"]


class UnsupportedSettingError(ArgumentValueError):
    """A `ModelSettings` field the wire API in use does not accept; nothing was sent. The
    caller's mistake (a `UsageError`), and a `ValueError` as before."""


@dataclass(frozen=True)
class ModelSettings:
    """How the model should answer; None leaves a setting to the provider's default.

    `max_output_tokens` caps each reply (Anthropic's `max_tokens`); `stop_sequences` end a reply
    when generated; `seed` asks for reproducible sampling where the API offers it;
    `reasoning_effort` is OpenAI's `reasoning.effort` / `reasoning_effort` and Anthropic's
    `output_config.effort`; `parallel_tool_calls` False asks for at most one tool call per reply.
    """

    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    stop_sequences: tuple[str, ...] | None = None
    seed: int | None = None
    reasoning_effort: ReasoningEffort | None = None
    parallel_tool_calls: bool | None = None

    def __post_init__(self) -> None:
        _check_number("temperature", self.temperature, low=0.0, high=2.0)
        _check_number("top_p", self.top_p, low=0.0, high=1.0)
        if self.max_output_tokens is not None and (
            not _is_int(self.max_output_tokens) or self.max_output_tokens < 1
        ):
            raise ArgumentValueError(
                f"ModelSettings.max_output_tokens must be an int >= 1, got"
                f" {self.max_output_tokens!r}"
            )
        if self.stop_sequences is not None:
            if isinstance(self.stop_sequences, str) or not all(
                isinstance(stop, str) and stop for stop in self.stop_sequences
            ):
                raise ArgumentValueError(
                    "ModelSettings.stop_sequences must be a tuple of non-empty strings, got"
                    f" {self.stop_sequences!r}"
                )
            object.__setattr__(self, "stop_sequences", tuple(self.stop_sequences))
        if self.seed is not None and not _is_int(self.seed):
            raise ArgumentValueError(f"ModelSettings.seed must be an int, got {self.seed!r}")
        if self.reasoning_effort is not None and self.reasoning_effort not in get_args(
            ReasoningEffort
        ):
            raise ArgumentValueError(
                f"ModelSettings.reasoning_effort must be one of"
                f" {', '.join(get_args(ReasoningEffort))}, got {self.reasoning_effort!r}"
            )
        if self.parallel_tool_calls is not None and not isinstance(self.parallel_tool_calls, bool):
            raise ArgumentValueError(
                f"ModelSettings.parallel_tool_calls must be a bool, got"
                f" {self.parallel_tool_calls!r}"
            )

    def merged(self, overrides: ModelSettings | None) -> ModelSettings:
        """These settings with every field `overrides` sets replacing this one's."""
        if overrides is None:
            return self
        changes = {
            item.name: getattr(overrides, item.name)
            for item in fields(overrides)
            if getattr(overrides, item.name) is not None
        }
        return replace(self, **changes)

    def chosen(self) -> dict[str, Any]:
        """The fields that are set, by name."""
        return {
            item.name: getattr(self, item.name)
            for item in fields(self)
            if getattr(self, item.name) is not None
        }


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_number(name: str, value: float | None, *, low: float, high: float) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ArgumentValueError(f"ModelSettings.{name} must be a number from {low:g} to {high:g}")


def copied_settings(settings: ModelSettings, **names: str) -> dict[str, Any]:
    """The set fields among `names` (field name -> request field name), under their request
    names: for the settings a wire API takes as they are."""
    return {
        wire_name: getattr(settings, field_name)
        for field_name, wire_name in names.items()
        if getattr(settings, field_name) is not None
    }
