"""`PromptOverridesStore`: what every overrides store offers, whatever it keeps files in.

`Prompt.render` only needs `resolve`; the write methods check every entry against the prompt
(known path, section accepts overrides, current hash) before anything is stored, and a write
never drops the entries it was not asked to change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from promptkit.overrides.shared import SharedSectionOverride
from promptkit.prompt import (
    OverrideAuthor,
    Prompt,
    PromptDescriptor,
    PromptOverride,
    SectionPath,
)


@runtime_checkable
class PromptOverridesStore(Protocol):
    """Hash-guarded overrides of section bodies and tool descriptions, per (ns, key, tag)."""

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        """Every entry stored for the prompt under `tag`, stale ones included, or None."""
        ...

    def upsert(self, descriptor: PromptDescriptor, override: PromptOverride) -> PromptOverride:
        """Add or replace the entries of `override`, keeping all others; returns the result."""
        ...

    def delete(self, *, ns: str, prompt_key: str, tag: str) -> bool:
        """Remove every entry of (ns, prompt_key, tag); False when there was none."""
        ...

    def set_section_override(
        self,
        prompt: Prompt[Any],
        *,
        tag: str = "latest",
        path: SectionPath | str,
        body: str,
        source: OverrideAuthor | None = None,
    ) -> PromptOverride:
        """Store `body` for the section at `path`, against its current content hash."""
        ...

    def seed(self, prompt: Prompt[Any], *, tag: str = "latest") -> PromptOverride:
        """Write the default bodies of seedable sections and tools that have no entry yet."""
        ...

    def list_overrides(self) -> Sequence[PromptOverride | SharedSectionOverride]:
        """Everything stored: prompt overrides and, where supported, shared sections."""
        ...
