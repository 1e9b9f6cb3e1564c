"""Shared section overrides: one body for a section key, found by every prompt that has it.

A GLOBAL workspace digest written while optimizing one prompt is stored once per (section key,
tag) and any other prompt with a section of that key can use it; a prompt's own override for
the section still wins. A section that can use shared entries (the workspace digest section)
looks them up in its `resolve_body` through `SharedSectionStore.resolve_shared_section`, and
compares the entry's `expected_hash` with its own content hash before using it.

A shared entry may carry `provenance`: what the writer recorded about the workspace the body
describes (for a GLOBAL digest, the workspace manifest fields and a content fingerprint), kept
as plain values so this layer needs no knowledge of workspaces. `workspace` is that workspace's
directory, stored relative to the store so a committed file works in every checkout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from promptkit.prompt import OverrideAuthor, SectionOverride

ProvenanceValue = str | bool | tuple[str, ...]
"""A provenance field: text, a flag, or a list of notes."""


@dataclass(frozen=True)
class SharedSectionOverride:
    """The shared override of `section_key` under `tag`, and where it was read from.

    `provenance` and `workspace` are set when the writer recorded them (see the module doc).
    """

    section_key: str
    tag: str
    entry: SectionOverride
    location: str | None = None
    provenance: Mapping[str, ProvenanceValue] | None = None
    workspace: Path | None = None


@runtime_checkable
class SharedSectionStore(Protocol):
    """A store that also keeps section overrides shared by every prompt with that section key.

    `default_tag` is the tag a project serves: a section that finds no shared override under
    the tag it renders with uses this tag's (the workspace digest of a new candidate tag is the
    project's, not none), and says so.
    """

    @property
    def default_tag(self) -> str:
        """The project's tag, whose shared sections a tag without its own falls back to."""
        ...

    def set_shared_section(
        self,
        *,
        section_key: str,
        tag: str,
        body: str,
        expected_hash: str,
        source: OverrideAuthor,
        provenance: Mapping[str, ProvenanceValue] | None = None,
        workspace: Path | None = None,
        updated_at: datetime | None = None,
    ) -> SectionOverride:
        """Store `body` for every prompt whose `section_key` section hashes to `expected_hash`,
        with the provenance of what it describes when given; `updated_at` (default: now) puts
        an entry back as it was."""
        ...

    def resolve_shared_section(self, section_key: str, tag: str) -> SectionOverride | None:
        """The shared override of `section_key` under `tag`, if one is stored."""
        ...

    def read_shared_section(self, section_key: str, tag: str) -> SharedSectionOverride | None:
        """The shared override with where it was read from and its provenance, if stored."""
        ...
