"""What every overrides store does with its documents, whatever keeps them: files or rows.

A store keeps one TOML document per (namespace, prompt, tag) and per (shared section, tag), at
the place `promptkit.overrides._layout` names (`FilePlace`), in the text
`promptkit.overrides._toml_format` writes. `DocumentOverridesStore` holds everything about the
entries: which are checked before a write (known path, section accepts overrides, current
hash, clean text), how a write merges into what is stored without dropping what it does not
name, how seeding keeps existing entries, how a promotion replaces a tag's entries when they
are still what was evaluated. A store adds the three things that differ:

- `_where(place)`: what it keeps the document at (a file's path, a row's key);
- `_read(where, place, decode, lenient=...)`: the stored document, decoded (lenient: the last
  good value of a document that cannot be used, and one log record);
- `_update(where, place, decode, change)`: read-modify-write under the document's lock (a file
  lock, a database lock), all or nothing; and `_remove(where)`.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from promptkit._names import is_valid_key
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import OverridesError
from promptkit.logging import get_logger
from promptkit.overrides._defaults import default_body, seed_entries
from promptkit.overrides._layout import (
    FilePlace,
    place_at,
    prompt_place,
    require_section_path,
    shared_place,
)
from promptkit.overrides._promotion import OverridesSnapshot, replaced_entries
from promptkit.overrides._reading import Decoder, Stored
from promptkit.overrides._shared import ProvenanceValue, SharedSectionOverride
from promptkit.overrides._toml_format import (
    HASH_PATTERN,
    decode_prompt_override,
    decode_shared,
    encode_prompt_override,
    encode_shared,
)
from promptkit.overrides._validation import (
    checked_author,
    checked_entries,
    checked_provenance,
    checked_text,
    checked_tool_entry,
    credential_text,
    find_tool,
    writable_section,
)
from promptkit.prompt import (
    OverrideAuthor,
    Prompt,
    PromptDescriptor,
    PromptOverride,
    SectionOverride,
    SectionPath,
    ToolOverride,
)

_log = get_logger("promptkit.overrides")

OPERATOR = OverrideAuthor("operator")
_PLACES_LIMIT = 256
Where = TypeVar("Where")
_Value = TypeVar("_Value", PromptOverride, SharedSectionOverride)
Change = Callable[[_Value | None], _Value | None]
"""What a write makes of the stored value (None when there is none): the value to store, or
None to leave the document as it is."""


@dataclass(frozen=True)
class ReadDocument:
    """One stored document as `read_documents` found it: how the store names it, its text, and
    its value, or the error that makes it unusable (then `value` is None)."""

    location: str
    text: str | None
    value: Stored | None
    error: OverridesError | None = None


class DocumentOverridesStore(ABC, Generic[Where]):
    """The entry logic of an overrides store over documents kept at a `Where` (module doc)."""

    def __init__(self, files_root: Path, *, default_tag: str = "latest") -> None:
        if not isinstance(default_tag, str) or not is_valid_key(default_tag):
            raise OverridesError(f"default_tag must be an overrides tag, got {default_tag!r}")
        # The folder relative paths in documents are relative to (a shared digest's workspace).
        self._files_root = files_root
        self._default_tag = default_tag
        self._places_lock = threading.Lock()
        self._places: dict[tuple[str, str, str], tuple[Where, FilePlace]] = {}

    # -- what a store provides ----------------------------------------------------------------

    @abstractmethod
    def _where(self, place: FilePlace) -> Where:
        """Where the document of `place` is kept."""

    @abstractmethod
    def _read(
        self, where: Where, place: FilePlace, decode: Decoder[_Value], *, lenient: bool
    ) -> _Value | None:
        """The stored value, None when there is none (module doc)."""

    @abstractmethod
    def _update(
        self, where: Where, place: FilePlace, decode: Decoder[_Value], change: Change[_Value]
    ) -> _Value | None:
        """Apply `change` to the stored value under the document's lock and store what it
        returns; returns that (None: nothing was written)."""

    @abstractmethod
    def _remove(self, where: Where) -> bool:
        """Remove the document; False when there was none."""

    @abstractmethod
    def tag_documents(self, tag: str) -> dict[str, str]:
        """The text of every document of `tag`, exactly as stored, by its path under an
        overrides folder (`ns/prompt_key/tag.toml`, `_shared/section_key/tag.toml`)."""

    @abstractmethod
    def replace_documents(
        self, documents: Mapping[str, str], *, tag: str
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Make the documents of `tag` exactly `documents` (path: text, stored byte for byte),
        each checked first (`checked_documents`: nothing is written when one fails); returns
        the paths written and the paths removed."""

    def checked_documents(self, documents: Mapping[str, str], *, tag: str) -> None:
        """OverridesError for the first of `documents` that is not a usable document of `tag`
        at its path: a place that fits no override or another tag, unreadable TOML, an entry
        that does not parse, or a credential in the text."""
        # Imported here: a program that only reads overrides compiles no secret rule.
        from promptkit.secrets import find_secrets

        for path, text in documents.items():
            place = place_at(tuple(path.split("/")), path)
            location = self._location(self._where(place))
            if place.tag != tag:
                raise OverridesError(f"{location}: not a document of tag {tag!r}")
            if place.kind == "shared":
                decode_shared(text, file=location, place=place, files_root=self._files_root)
            else:
                decode_prompt_override(text, file=location, place=place)
            findings = find_secrets(text)
            if findings:
                raise OverridesError(
                    f"{location} line {findings[0].line}: looks like a credential"
                    f" ({credential_text(findings)}); remove it and refer to it by name"
                )

    @abstractmethod
    def read_documents(self) -> tuple[ReadDocument, ...]:
        """Every stored document, by its path under an overrides folder, each read strictly:
        one that cannot be used is listed with its error, not raised."""

    def list_overrides(self) -> tuple[Stored, ...]:
        """Every stored document, parsed; the first invalid one raises OverridesError."""
        found: list[Stored] = []
        for document in self.read_documents():
            if document.error is not None:
                raise document.error
            if document.value is not None:
                found.append(document.value)
        return tuple(found)

    def record_all_hand_edits(self, *, dry_run: bool = False) -> tuple[str, ...]:
        """The documents not in the form promptkit writes (edited by hand, or written by an
        older promptkit), by location; unless `dry_run`, each is rewritten in that form, which
        records bodies edited by hand as the operator's, dated by the document's last change."""
        edited: list[str] = []
        for document in self.read_documents():
            value = document.value
            if value is None or document.text is None or self._encode(value) == document.text:
                continue  # an unusable document is `check`'s to report
            edited.append(document.location)
            if dry_run:
                continue
            if isinstance(value, PromptOverride):
                where, place = self._prompt_place(value.ns, value.prompt_key, value.tag)
            else:
                place = shared_place(value.section_key, value.tag)
                where = self._where(place)
            # Storing what is stored writes it in promptkit's form, under the document's lock.
            self._update(where, place, decoder_of(place), lambda stored: stored)
            _log.info("overrides_hand_edits_recorded", file=document.location)
        return tuple(edited)

    @abstractmethod
    def _location(self, where: Where) -> str:
        """How values and messages name the document."""

    @property
    @abstractmethod
    def strict_overrides(self) -> bool:
        """Whether a render raises on a document it cannot use (else: last good text, one log)."""

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the store keeps its documents: a folder, or a database (without password)."""

    @property
    def default_tag(self) -> str:
        """The project's tag: a tag without a shared digest of its own renders this tag's."""
        return self._default_tag

    @property
    def files_root(self) -> Path:
        """The overrides folder relative paths in documents are relative to."""
        return self._files_root

    def prompt_location(self, ns: str, prompt_key: str, tag: str = "latest") -> str:
        """How the store names the document of (ns, prompt_key, tag), stored or not."""
        return self._location(self._prompt_place(ns, prompt_key, tag)[0])

    def shared_location(self, section_key: str, tag: str = "latest") -> str:
        """How the store names the document of the shared `section_key` under `tag`."""
        return self._location(self._where(shared_place(section_key, tag)))

    # -- reading ------------------------------------------------------------------------------

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        """Every entry stored for the prompt under `tag` (stale ones included), or None.

        A document that cannot be used gives the last good value read from it (None when there
        is none) and one `override_unreadable` log, or OverridesError with
        `strict_overrides=True`.
        """
        where, place = self._prompt_place(descriptor.ns, descriptor.key, tag)
        return self._read(where, place, decode_prompt_override, lenient=not self.strict_overrides)

    def resolve_shared_section(self, section_key: str, tag: str) -> SectionOverride | None:
        """The shared override of `section_key` under `tag`, if one is stored (as `resolve`)."""
        shared = self.read_shared_section(section_key, tag)
        return shared.entry if shared else None

    def read_shared_section(self, section_key: str, tag: str) -> SharedSectionOverride | None:
        """The shared override with where it was read from, if one is stored (as `resolve`)."""
        place = shared_place(section_key, tag)
        return self._read(
            self._where(place), place, decode_shared, lenient=not self.strict_overrides
        )

    # -- writing ------------------------------------------------------------------------------

    def upsert(self, descriptor: PromptDescriptor, override: PromptOverride) -> PromptOverride:
        """Add or replace the entries of `override`, keeping every other entry of the document.

        Each section entry must name a section of `descriptor` that accepts overrides, with
        its current content hash; each tool entry a tool with its current contract hash.
        """
        self._prompt_place(descriptor.ns, descriptor.key, override.tag)
        sections, tools = checked_entries(descriptor, override)
        return self._merge(descriptor.ns, descriptor.key, override.tag, sections, tools)

    def replace_entries(
        self,
        descriptor: PromptDescriptor,
        override: PromptOverride,
        *,
        expected: OverridesSnapshot,
    ) -> PromptOverride:
        """Make `override`'s tag hold exactly its entries and `promotion` evidence, in one atomic
        write of the document, when the stored entries still match `expected` (compared under
        the document's lock); OverridesConflictError naming what changed otherwise. Entries are
        checked as `upsert` checks them; a writer killed at any point leaves the old document
        or the new."""
        where, place = self._prompt_place(descriptor.ns, descriptor.key, override.tag)
        sections, tools = checked_entries(descriptor, override)
        location = self._location(where)

        def change(stored: PromptOverride | None) -> PromptOverride:
            return replaced_entries(stored, override, sections, tools, expected, location)

        updated = self._update(where, place, decode_prompt_override, change)
        assert updated is not None  # `change` always gives a value
        return updated

    def set_section_override(
        self,
        prompt: Prompt[Any],
        *,
        tag: str = "latest",
        path: SectionPath | str,
        body: str,
        source: OverrideAuthor | None = None,
    ) -> PromptOverride:
        """Store `body` for the section at `path`, against the section's current hash.

        `source` defaults to the operator; the optimizer passes `OverrideAuthor("optimizer",
        model)`. The body is stored exactly (line endings as `\\n`) and never evaluated.
        """
        section_path = require_section_path(path)
        self._prompt_place(prompt.ns, prompt.key, tag)
        target = writable_section(prompt.descriptor, section_path)
        section = prompt.section_at(section_path)
        entry = SectionOverride(
            expected_hash=target.content_hash,
            body=checked_text(body, where=f"section {'/'.join(section_path)}"),
            updated_at=_now(),
            source=checked_author(source or OPERATOR),
            # The default is kept as the base of a merge once the code changes; a section
            # that opts out of seeding (a workspace digest) has no default worth merging.
            code_default=(
                default_body(section, ns=prompt.ns, prompt_key=prompt.key, path=section_path)
                if section is not None and section.seedable
                else None
            ),
        )
        return self._merge(prompt.ns, prompt.key, tag, {section_path: entry}, {})

    def set_tool_override(
        self,
        prompt: Prompt[Any],
        *,
        tag: str = "latest",
        tool: str,
        description: str | None = None,
        param_descriptions: Mapping[str, str] | None = None,
    ) -> PromptOverride:
        """Store a description (and parameter descriptions) for `tool`, against its contract."""
        self._prompt_place(prompt.ns, prompt.key, tag)
        target = find_tool(prompt, tool)
        if target is None:
            raise OverridesError(
                f"{prompt.ns}/{prompt.key} has no tool {tool!r}; nothing was written"
            )
        known = set(target.parameters_schema.get("properties", {}))
        unknown = sorted(set(param_descriptions or {}) - known)
        if unknown:
            raise OverridesError(
                f"tool {tool}: no parameters named {unknown} (parameters: {sorted(known)});"
                " nothing was written"
            )
        entry = checked_tool_entry(
            ToolOverride(target.contract_hash, description, dict(param_descriptions or {})),
            where=f"tool {tool}",
        )
        return self._merge(prompt.ns, prompt.key, tag, {}, {tool: entry})

    def seed(self, prompt: Prompt[Any], *, tag: str = "latest") -> PromptOverride:
        """Write the default bodies of seedable sections, and tool descriptions, as a start.

        Existing entries are never overwritten. Sections that do not accept overrides, that
        opt out (`seedable=False`, as workspace digests do) or whose template reads params are
        left out, so a seeded placeholder never hides a missing digest.
        """
        self._prompt_place(prompt.ns, prompt.key, tag)
        sections, tools = seed_entries(prompt, now=_now())
        return self._merge(prompt.ns, prompt.key, tag, sections, tools, keep_existing=True)

    def delete(self, *, ns: str, prompt_key: str, tag: str) -> bool:
        """Remove the document of (ns, prompt_key, tag); False when there was none."""
        where, _ = self._prompt_place(ns, prompt_key, tag)
        return self._remove(where)

    def delete_section_override(
        self, *, ns: str, prompt_key: str, tag: str, path: SectionPath | str
    ) -> bool:
        """Remove one section entry, keeping the others; False when there was none."""
        section_path = require_section_path(path)
        return self._remove_entry(ns, prompt_key, tag, section=section_path)

    def delete_tool_override(self, *, ns: str, prompt_key: str, tag: str, tool: str) -> bool:
        """Remove one tool entry, keeping the others; False when there was none."""
        return self._remove_entry(ns, prompt_key, tag, tool=tool)

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
        """Store `body` for every prompt with a `section_key` section hashing to `expected_hash`.

        It replaces the previous shared body of that key and tag; prompts' own overrides of
        the section are untouched and still win over it. `provenance` (text, flag or notes per
        field) and `workspace` (the folder the body describes, stored relative to the overrides
        folder) are kept with it for freshness checks. `updated_at` (default: now) is for
        putting back an entry as it was.
        """
        place = shared_place(section_key, tag)
        where = self._where(place)
        if not isinstance(expected_hash, str) or HASH_PATTERN.fullmatch(expected_hash) is None:
            raise OverridesError(
                f"shared section {section_key}: expected_hash must be the section's content hash"
                f" (64 lower-case hex digits), got {expected_hash!r}"
            )
        label = f"shared section {section_key}"
        entry = SectionOverride(
            expected_hash=expected_hash,
            body=checked_text(body, where=label),
            updated_at=updated_at.replace(microsecond=0) if updated_at else _now(),
            source=checked_author(source),
        )
        checked_provenance(provenance, where=label)
        shared = SharedSectionOverride(
            section_key,
            tag,
            entry,
            self._location(where),
            provenance=dict(provenance) if provenance is not None else None,
            workspace=Path(workspace) if workspace is not None else None,
        )
        # The stored value is read first (`_update` does) so that a malformed document is
        # reported, not silently replaced.
        self._update(where, place, decode_shared, lambda _: shared)
        return entry

    def delete_shared_section(self, *, section_key: str, tag: str) -> bool:
        """Remove the shared override of `section_key` under `tag`; False when there was none."""
        return self._remove(self._where(shared_place(section_key, tag)))

    # -- shared internals ---------------------------------------------------------------------

    def _prompt_place(self, ns: str, prompt_key: str, tag: str) -> tuple[Where, FilePlace]:
        key = (ns, prompt_key, tag)
        known = self._places.get(key)
        if known is None:
            place = prompt_place(ns, prompt_key, tag)
            known = (self._where(place), place)
            with self._places_lock:
                if len(self._places) >= _PLACES_LIMIT:
                    self._places.clear()
                self._places[key] = known
        return known

    def _encode(self, value: Stored) -> str:
        """The document text of `value`; a shared entry's workspace is stored relative to the
        overrides folder, so the text is the same in every checkout."""
        if isinstance(value, PromptOverride):
            return encode_prompt_override(value)
        workspace = None
        if value.workspace is not None:
            relative = os.path.relpath(value.workspace.resolve(), self._files_root.resolve())
            workspace = Path(relative).as_posix()
        return encode_shared(value, workspace=workspace)

    def _merge(
        self,
        ns: str,
        prompt_key: str,
        tag: str,
        sections: Mapping[SectionPath, SectionOverride],
        tools: Mapping[str, ToolOverride],
        *,
        keep_existing: bool = False,
    ) -> PromptOverride:
        """Add entries to the document under its lock; never drops entries it does not name.

        With `keep_existing` the entries already stored win over the new ones (seeding);
        otherwise the new ones replace them.
        """
        where, place = self._prompt_place(ns, prompt_key, tag)
        location = self._location(where)

        def change(stored: PromptOverride | None) -> PromptOverride:
            # Read under the lock: the merge is into what another writer just wrote.
            current = stored or PromptOverride(
                ns=ns, prompt_key=prompt_key, tag=tag, location=location
            )
            if keep_existing:
                merged_sections = {**sections, **current.sections}
                merged_tools = {**tools, **current.tools}
            else:
                merged_sections = {**current.sections, **sections}
                merged_tools = {**current.tools, **tools}
            # Evidence of a promotion stays: `check` then names what changed since.
            return replace(current, sections=merged_sections, tools=merged_tools)

        updated = self._update(where, place, decode_prompt_override, change)
        assert updated is not None  # `change` always gives a value
        _log.info(
            "overrides_written",
            file=location,
            sections=len(updated.sections),
            tools=len(updated.tools),
        )
        return updated

    def _remove_entry(
        self,
        ns: str,
        prompt_key: str,
        tag: str,
        *,
        section: SectionPath | None = None,
        tool: str | None = None,
    ) -> bool:
        where, place = self._prompt_place(ns, prompt_key, tag)
        location = self._location(where)

        def change(current: PromptOverride | None) -> PromptOverride | None:
            if current is None:
                return None
            sections = {p: e for p, e in current.sections.items() if p != section}
            tools = {n: e for n, e in current.tools.items() if n != tool}
            if len(sections) == len(current.sections) and len(tools) == len(current.tools):
                return None
            return replace(current, sections=sections, tools=tools, location=location)

        return self._update(where, place, decode_prompt_override, change) is not None


def decoder_of(place: FilePlace) -> Decoder[Any]:
    """How the document at `place` is read: a shared entry, or a prompt's entries."""
    return decode_shared if place.kind == "shared" else decode_prompt_override


def _now() -> datetime:
    return SYSTEM_CLOCK.now().replace(microsecond=0)
