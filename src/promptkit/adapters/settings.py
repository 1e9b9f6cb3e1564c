"""`ModelSettings`: the sampling and output settings of a request, and how each wire API spells
them.

Settings are set on an adapter and overridden per call (`evaluate(..., settings=...)`); a field
left None is not sent, so the provider's default applies. Each wire API takes a different subset
under different names; a setting an API does not accept is a `UnsupportedSettingError` raised
before any request is sent, never silently dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, get_args

from promptkit.errors import PromptkitError

ReasoningEffort = Literal["minimal", "low", "medium", "high"]


class UnsupportedSettingError(PromptkitError, ValueError):
    """A `ModelSettings` field the wire API in use does not accept; nothing was sent."""


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
            raise ValueError(
                f"ModelSettings.max_output_tokens must be an int >= 1, got"
                f" {self.max_output_tokens!r}"
            )
        if self.stop_sequences is not None:
            if isinstance(self.stop_sequences, str) or not all(
                isinstance(stop, str) and stop for stop in self.stop_sequences
            ):
                raise ValueError(
                    "ModelSettings.stop_sequences must be a tuple of non-empty strings, got"
                    f" {self.stop_sequences!r}"
                )
            object.__setattr__(self, "stop_sequences", tuple(self.stop_sequences))
        if self.seed is not None and not _is_int(self.seed):
            raise ValueError(f"ModelSettings.seed must be an int, got {self.seed!r}")
        if self.reasoning_effort is not None and self.reasoning_effort not in get_args(
            ReasoningEffort
        ):
            raise ValueError(
                f"ModelSettings.reasoning_effort must be one of"
                f" {', '.join(get_args(ReasoningEffort))}, got {self.reasoning_effort!r}"
            )
        if self.parallel_tool_calls is not None and not isinstance(self.parallel_tool_calls, bool):
            raise ValueError(
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
        raise ValueError(f"ModelSettings.{name} must be a number from {low:g} to {high:g}")


# -- per wire API -------------------------------------------------------------------------------

Options = dict[str, Any]
_Mapper = Callable[[ModelSettings, bool], Options]


def _responses(settings: ModelSettings, has_tools: bool) -> Options:
    options: Options = _copied(settings, temperature="temperature", top_p="top_p")
    if settings.max_output_tokens is not None:
        options["max_output_tokens"] = settings.max_output_tokens
    if settings.reasoning_effort is not None:
        options["reasoning"] = {"effort": settings.reasoning_effort}
    if settings.parallel_tool_calls is not None and has_tools:
        options["parallel_tool_calls"] = settings.parallel_tool_calls
    return options


def _chat(settings: ModelSettings, has_tools: bool) -> Options:
    options: Options = _copied(
        settings,
        temperature="temperature",
        top_p="top_p",
        seed="seed",
        reasoning_effort="reasoning_effort",
        max_output_tokens="max_completion_tokens",
    )
    if settings.stop_sequences is not None:
        options["stop"] = list(settings.stop_sequences)
    # OpenAI refuses parallel_tool_calls on a request without tools.
    if settings.parallel_tool_calls is not None and has_tools:
        options["parallel_tool_calls"] = settings.parallel_tool_calls
    return options


def _messages(settings: ModelSettings, has_tools: bool) -> Options:
    options: Options = _copied(settings, max_output_tokens="max_tokens")
    if settings.stop_sequences is not None:
        options["stop_sequences"] = list(settings.stop_sequences)
    if settings.reasoning_effort is not None:
        options["output_config"] = {"effort": settings.reasoning_effort}
    if settings.parallel_tool_calls is not None and has_tools:
        options["tool_choice"] = {
            "type": "auto",
            "disable_parallel_tool_use": not settings.parallel_tool_calls,
        }
    return options


def _copied(settings: ModelSettings, **names: str) -> Options:
    return {
        wire_name: getattr(settings, field_name)
        for field_name, wire_name in names.items()
        if getattr(settings, field_name) is not None
    }


@dataclass(frozen=True)
class _WireRules:
    mapper: _Mapper
    unsupported: Mapping[str, str]
    """Field name -> why the API cannot take it and what to do instead."""
    refused_values: Mapping[str, tuple[Any, ...]]


_RULES: dict[str, _WireRules] = {
    "responses": _WireRules(
        _responses,
        unsupported={
            "stop_sequences": "the Responses API has no stop sequences; use api='chat'",
            "seed": "the Responses API has no seed; use api='chat'",
        },
        refused_values={},
    ),
    "chat": _WireRules(_chat, unsupported={}, refused_values={}),
    "messages": _WireRules(
        _messages,
        unsupported={
            name: f"the Anthropic Messages API (anthropic SDK 2) takes no {name}; leave it unset"
            for name in ("temperature", "top_p", "seed")
        },
        refused_values={"reasoning_effort": ("minimal",)},
    ),
}


def request_options(api: str, settings: ModelSettings, *, has_tools: bool) -> Options:
    """The request fields `settings` become on wire API `api` (`responses`, `chat`,
    `messages`); `UnsupportedSettingError` for a setting that API does not accept."""
    rules = _RULES[api]
    for name, value in settings.chosen().items():
        reason = rules.unsupported.get(name)
        if reason is not None:
            raise UnsupportedSettingError(
                f"ModelSettings.{name}={value!r} is not supported on the {api} API: {reason}"
            )
        if value in rules.refused_values.get(name, ()):
            raise UnsupportedSettingError(
                f"ModelSettings.{name}={value!r} is not accepted by the {api} API; choose"
                " another value"
            )
    return rules.mapper(settings, has_tools)
