"""The section tree: `Section`, the unit a prompt is built from, and what a render passes it.

A section has a title, a key (its segment in the section path), optional children, tools and
params. Its content hash is the sha256 of `original_body_template()`: overrides written against
one hash are not applied once the code's text changes.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Self

from promptkit._names import require_key
from promptkit.errors import PromptValidationError
from promptkit.prompt._hashing import content_hash
from promptkit.prompt._override_types import OverridesLookup, SectionPath
from promptkit.prompt._params import is_params_type
from promptkit.prompt._tool import Tool

LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


@dataclass(frozen=True)
class RenderContext:
    """Where a section is being rendered: its prompt, its path, and the overrides in use."""

    prompt_ns: str
    prompt_key: str
    path: SectionPath
    overrides: OverridesLookup | None = None
    tag: str = "latest"


@dataclass(frozen=True, kw_only=True, eq=False)
class Section(ABC):
    """One titled part of a prompt; subclasses decide how the body is produced.

    `enabled`, when set, is called with the section's params; returning False skips the section
    and its whole subtree. `params_type` is the class of params object this section reads;
    `default_params` is used when a render is not given one. `seedable=False` keeps the section
    out of `PromptOverridesStore.seed`.
    """

    title: str
    key: str
    children: tuple[Section, ...] = ()
    enabled: Callable[[Any], bool] | None = None
    tools: tuple[Tool[Any], ...] = ()
    accepts_overrides: bool = True
    params_type: type[Any] | None = None
    default_params: Any = None
    seedable: bool = True

    def __post_init__(self) -> None:
        require_key(self.key, what="section key", error=PromptValidationError)
        if not isinstance(self.title, str) or not self.title.strip() or _has_line_break(self.title):
            raise PromptValidationError(
                f"section {self.key!r}: title must be one non-empty line, got {self.title!r}"
            )
        object.__setattr__(self, "title", self.title.strip())
        object.__setattr__(self, "children", tuple(self.children))
        object.__setattr__(self, "tools", tuple(self.tools))
        for child in self.children:
            if not isinstance(child, Section):
                raise PromptValidationError(
                    f"section {self.key!r}: children must be Sections, got {type(child).__name__}"
                )
        _require_unique_keys(self.children, parent=self.key)
        for tool in self.tools:
            if not isinstance(tool, Tool):
                raise PromptValidationError(
                    f"section {self.key!r}: tools must be Tool objects, got {type(tool).__name__}"
                )
        if self.params_type is not None and not is_params_type(self.params_type):
            raise PromptValidationError(
                f"section {self.key!r}: params_type must be a pydantic model or a dataclass,"
                f" got {self.params_type!r}"
            )
        if self.default_params is not None and (
            self.params_type is None or not isinstance(self.default_params, self.params_type)
        ):
            expected = self.params_type.__name__ if self.params_type else "no params"
            raise PromptValidationError(
                f"section {self.key!r}: default_params is a {type(self.default_params).__name__},"
                f" expected {expected}"
            )

    @abstractmethod
    def original_body_template(self) -> str:
        """The text the content hash is computed from: the body as written in code."""

    @abstractmethod
    def render_body(self, params: Any, context: RenderContext) -> str:
        """The body for `params` (None when the section takes no params)."""

    def resolve_body(self, params: Any, override: str | None, context: RenderContext) -> str:
        """The body a render shows: the override exactly as stored, else the rendered body.

        Sections whose body comes from elsewhere (a session, a workspace) refine this order.
        """
        if override is not None:
            return override
        return self.render_body(params, context)

    def validate(self, path: SectionPath) -> None:  # noqa: B027 - optional hook, no-op default
        """Checks that need the section's place in a prompt; raise PromptValidationError."""

    @cached_property
    def content_hash(self) -> str:
        """sha256 hex of `original_body_template()`."""
        return content_hash(self.original_body_template())

    def clone(self, **changes: Any) -> Self:
        """A copy with `changes` applied to its constructor arguments."""
        return replace(self, **changes)


def _has_line_break(text: str) -> bool:
    return len(text.splitlines()) > 1 or text.endswith(("\n", "\r"))


def normalize_body(text: str) -> str:
    """A body without leading blank lines or trailing whitespace."""
    return LEADING_BLANK_LINES.sub("", text.rstrip())


def _require_unique_keys(sections: tuple[Section, ...], *, parent: str) -> None:
    seen: set[str] = set()
    for section in sections:
        if section.key in seen:
            raise PromptValidationError(f"{parent}: two sections share the key {section.key!r}")
        seen.add(section.key)


@dataclass(frozen=True, kw_only=True, eq=False)
class TextSection(Section):
    """A section with fixed text: no template, no params."""

    text: str = field(default="")

    def original_body_template(self) -> str:
        return self.text

    def render_body(self, params: Any, context: RenderContext) -> str:
        return self.text
