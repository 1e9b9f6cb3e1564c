"""The override values a render applies, and the one method a render needs from a store.

Stores that persist these values (files, databases) live in `promptkit.overrides`; keeping the
values here lets `Prompt.render` apply overrides without knowing where they come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from promptkit.prompt._rendered import PromptDescriptor

SectionPath = tuple[str, ...]
AuthorKind = Literal["operator", "optimizer", "seed"]


@dataclass(frozen=True)
class OverrideAuthor:
    """Who wrote an override entry: an operator, the optimizer (with its model), or `seed`."""

    kind: AuthorKind
    model: str | None = None


@dataclass(frozen=True)
class SectionOverride:
    """Replacement body for one section, valid while the section's hash is `expected_hash`.

    `code_default` is the section's default text in the code the body was written against,
    when the store recorded it: once the code changes, it is the base of a three-way merge.
    """

    expected_hash: str
    body: str
    updated_at: datetime
    source: OverrideAuthor
    code_default: str | None = None


@dataclass(frozen=True)
class ToolOverride:
    """Replacement description (and parameter descriptions) for one tool."""

    expected_contract_hash: str
    description: str | None = None
    param_descriptions: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PromptOverride:
    """Every override entry for one (namespace, prompt key, tag).

    `location` names where the entries were read from (a file path, a URL) so warnings about
    stale entries can say where to fix them. `promotion` is the evidence a promotion bound into
    the entries it wrote (plain TOML/JSON values; `promptkit.overrides` writes and checks it),
    None for entries that were never promoted; a render ignores it.
    """

    ns: str
    prompt_key: str
    tag: str
    sections: Mapping[SectionPath, SectionOverride] = field(default_factory=dict)
    tools: Mapping[str, ToolOverride] = field(default_factory=dict)
    location: str | None = None
    promotion: Mapping[str, Any] | None = None


class OverridesLookup(Protocol):
    """What `Prompt.render` needs from an overrides store."""

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        """The overrides stored for the descriptor's prompt under `tag`, if any."""
        ...
