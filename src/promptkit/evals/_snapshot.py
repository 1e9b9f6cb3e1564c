"""The overrides one evaluation run renders with, read once and held for the whole run.

A store read at every render would let a write made during the run (`overrides set --tag
candidate` in another terminal) change the text of the cases still to run, and the report
would then describe a mix. `RunOverrides` answers every lookup of a (prompt, tag), and of a
shared section, with what the store held the first time it was asked, and records the snapshot
(`OverridesSnapshot`) of each tag evaluated, which promotion compares with the store later.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from promptkit.errors import InvalidStateError
from promptkit.overrides import (
    OverridesSnapshot,
    ProvenanceValue,
    SharedSectionOverride,
    SharedSectionStore,
)
from promptkit.prompt import (
    OverrideAuthor,
    OverridesLookup,
    PromptDescriptor,
    PromptOverride,
    SectionOverride,
)


class RunOverrides:
    """A read-only view of `store` that keeps the first answer to each lookup (see the module
    doc). Shared sections are found only when `store` keeps them."""

    def __init__(self, store: OverridesLookup) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._prompts: dict[tuple[str, str, str], PromptOverride | None] = {}
        self._shared: dict[tuple[str, str], SharedSectionOverride | None] = {}

    def __repr__(self) -> str:
        return f"RunOverrides({self._store!r})"

    @property
    def default_tag(self) -> str:
        """The store's project tag (`SharedSectionStore.default_tag`), else `latest`."""
        store = self._store
        return store.default_tag if isinstance(store, SharedSectionStore) else "latest"

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        key = (descriptor.ns, descriptor.key, tag)
        with self._lock:
            if key not in self._prompts:
                self._prompts[key] = self._store.resolve(descriptor, tag)
            return self._prompts[key]

    def snapshot(self, descriptor: PromptDescriptor, tag: str) -> OverridesSnapshot:
        """The entries of (prompt, tag) this run renders with, by content."""
        return OverridesSnapshot.of(self.resolve(descriptor, tag))

    def read_shared_section(self, section_key: str, tag: str) -> SharedSectionOverride | None:
        key = (section_key, tag)
        with self._lock:
            if key not in self._shared:
                store = self._store
                found = (
                    store.read_shared_section(section_key, tag)
                    if isinstance(store, SharedSectionStore)
                    else None
                )
                self._shared[key] = found
            return self._shared[key]

    def resolve_shared_section(self, section_key: str, tag: str) -> SectionOverride | None:
        shared = self.read_shared_section(section_key, tag)
        return shared.entry if shared is not None else None

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
        raise InvalidStateError(
            "an evaluation run reads overrides and never writes them; write to the store"
            " itself, outside the run"
        )
