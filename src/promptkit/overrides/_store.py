"""`PromptOverridesStore`: what every overrides store offers, whatever it keeps files in.

`Prompt.render` only needs `resolve`; the write methods check every entry against the prompt
(known path, section accepts overrides, current hash) before anything is stored, and a write
never drops the entries it was not asked to change. `PromotableOverridesStore` adds the one
write promotion needs: a tag's entries and their evidence replaced together, all or nothing, and
only when the entries still are what the evaluation ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from promptkit.overrides._promotion import OverridesSnapshot
from promptkit.overrides._shared import SharedSectionOverride
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


@runtime_checkable
class PromotableOverridesStore(PromptOverridesStore, Protocol):
    """A store promotion can write to.

    `replace_entries` is a compare-and-swap of one (ns, prompt, tag) document: a file store
    compares under the file's lock and replaces the file with one rename; a database store
    compares and updates the document's row in one transaction (with the row locked, `SELECT
    ... FOR UPDATE`). Either way a reader, or a writer killed midway, sees the old entries or
    the new ones with their evidence, never a mix.
    """

    def replace_entries(
        self,
        descriptor: PromptDescriptor,
        override: PromptOverride,
        *,
        expected: OverridesSnapshot,
    ) -> PromptOverride:
        """Make the tag's entries exactly `override`'s, with its `promotion` evidence, when the
        stored entries still match `expected`; OverridesConflictError naming what changed
        otherwise, with nothing written."""
        ...
