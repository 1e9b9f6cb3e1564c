"""Shared section overrides: one body for a section key, found by every prompt that has it.

A GLOBAL workspace digest written while optimizing one prompt is stored once per (section key,
tag) and any other prompt with a section of that key can use it; a prompt's own override for
the section still wins. A section that can use shared entries (the workspace digest section)
looks them up in its `resolve_body` through `SharedSectionStore.resolve_shared_section`, and
compares the entry's `expected_hash` with its own content hash before using it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from promptkit.prompt import OverrideAuthor, SectionOverride


@dataclass(frozen=True)
class SharedSectionOverride:
    """The shared override of `section_key` under `tag`, and where it was read from."""

    section_key: str
    tag: str
    entry: SectionOverride
    location: str | None = None


@runtime_checkable
class SharedSectionStore(Protocol):
    """A store that also keeps section overrides shared by every prompt with that section key."""

    def set_shared_section(
        self,
        *,
        section_key: str,
        tag: str,
        body: str,
        expected_hash: str,
        source: OverrideAuthor,
    ) -> SectionOverride:
        """Store `body` for every prompt whose `section_key` section hashes to `expected_hash`."""
        ...

    def resolve_shared_section(self, section_key: str, tag: str) -> SectionOverride | None:
        """The shared override of `section_key` under `tag`, if one is stored."""
        ...
