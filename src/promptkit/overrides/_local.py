"""Hash-guarded section overrides stored as TOML files, one per (namespace, prompt, tag).

The store never drops entries it did not write; staleness is decided at render time. Every
read-modify-write holds the file's lock, reads the file from disk and replaces it atomically,
so concurrent writers in any number of processes lose nothing on any filesystem; the root's
`.gitignore` (written when absent) keeps lock and temp files out of review. Parses are cached
by content (`promptkit.overrides._reading`).

A render never fails because of a file: for a file it cannot use, `resolve` serves the last
text it read from that file (the code's defaults when it read none) and logs
`override_unreadable` once per file and error, unless the store was made with
`strict_overrides=True`. The other reads (`read_file`, `list_overrides`, the writes) raise.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from promptkit._durable import remove_orphaned_temps, write_atomically
from promptkit._names import is_valid_key
from promptkit.clock import SYSTEM_CLOCK
from promptkit.errors import OverridesError
from promptkit.logging import get_logger
from promptkit.overrides._atomic import ensure_ignore_file, locked, remove_file
from promptkit.overrides._defaults import default_body, seed_entries
from promptkit.overrides._files import DEFAULT_MAX_FILE_BYTES, OverrideFileError, require_inside
from promptkit.overrides._layout import (
    FilePlace,
    override_files,
    place_of,
    prompt_file,
    require_section_path,
    shared_file,
)
from promptkit.overrides._promotion import OverridesSnapshot, replaced_entries
from promptkit.overrides._reading import Decoder, OverrideReader, Stored
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
_Value = TypeVar("_Value", PromptOverride, SharedSectionOverride)


class LocalPromptOverridesStore:
    """Overrides kept in `root` (default `overrides/`), one readable TOML file per prompt and tag.

    Files: `<root>/<ns segments>/<prompt_key>/<tag>.toml` for a prompt, and
    `<root>/_shared/<section_key>/<tag>.toml` for a section shared by every prompt with that
    key. `default_tag` is the project's tag: a tag with no shared digest of its own renders
    that tag's (see `SharedSectionStore.default_tag`). `lock_timeout` bounds how long a write
    waits for another writer of the same file.
    `strict_overrides=True` makes a render raise on a file it cannot use instead of falling
    back to the defaults. `max_file_bytes` bounds the size of a file read or written (default
    1 MiB). The first write also creates `<root>/.gitignore`, when absent, for the lock and
    temp files.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "overrides",
        *,
        default_tag: str = "latest",
        lock_timeout: float = 60.0,
        strict_overrides: bool = False,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        if not isinstance(max_file_bytes, int) or max_file_bytes <= 0:
            raise OverridesError(
                f"max_file_bytes must be a positive number of bytes, got {max_file_bytes!r}"
            )
        if not isinstance(default_tag, str) or not is_valid_key(default_tag):
            raise OverridesError(f"default_tag must be an overrides tag, got {default_tag!r}")
        self._root = Path(root)
        self._default_tag = default_tag
        self._lock_timeout = lock_timeout
        self._strict = strict_overrides
        self._max_file_bytes = max_file_bytes
        self._reader = OverrideReader(self._root, max_file_bytes=max_file_bytes)
        self._places_lock = threading.Lock()
        self._places: dict[tuple[str, str, str], tuple[Path, FilePlace]] = {}

    def __repr__(self) -> str:
        return f"LocalPromptOverridesStore(root={str(self._root)!r})"

    @property
    def root(self) -> Path:
        return self._root

    @property
    def default_tag(self) -> str:
        """The project's tag: a tag without a shared digest of its own renders this tag's."""
        return self._default_tag

    @property
    def strict_overrides(self) -> bool:
        """Whether a render raises on a file it cannot use (else: defaults, and one log)."""
        return self._strict

    def prompt_file(self, ns: str, prompt_key: str, tag: str = "latest") -> Path:
        """The file that holds (ns, prompt_key, tag); OverridesError for an invalid name."""
        return self._prompt_place(ns, prompt_key, tag)[0]

    def shared_file(self, section_key: str, tag: str = "latest") -> Path:
        """The file that holds the shared override of `section_key` under `tag`."""
        return shared_file(self._root, section_key, tag)

    # -- reading ------------------------------------------------------------------------------

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        """Every entry stored for the prompt under `tag` (stale ones included), or None.

        A file that cannot be used gives None and one `override_unreadable` log (see the
        module doc), or OverridesError with `strict_overrides=True`.
        """
        file, place = self._prompt_place(descriptor.ns, descriptor.key, tag)
        return self._lenient(file, place, decode_prompt_override)

    def resolve_shared_section(self, section_key: str, tag: str) -> SectionOverride | None:
        """The shared override of `section_key` under `tag`, if one is stored (as `resolve`)."""
        shared = self.read_shared_section(section_key, tag)
        return shared.entry if shared else None

    def read_shared_section(self, section_key: str, tag: str) -> SharedSectionOverride | None:
        """The shared override with the file it was read from, if one is stored (as `resolve`)."""
        file = shared_file(self._root, section_key, tag)
        place = FilePlace("shared", tag=tag, section_key=section_key)
        return self._lenient(file, place, decode_shared)

    def list_overrides(self) -> tuple[Stored, ...]:
        """Every file under the root, parsed; the first invalid one raises OverridesError."""
        found: list[Stored] = []
        for file in override_files(self._root):
            value = self.read_file(file)
            if value is not None:
                found.append(value)
        return tuple(found)

    def read_file(self, file: Path) -> Stored | None:
        """The parsed content of one file under the root, checked against its place;
        OverrideFileError when it cannot be used."""
        place = place_of(self._root, file)
        return self._reader.read(file, place, _decoder(place))

    def record_hand_edits(self, file: Path, *, dry_run: bool = False) -> bool:
        """Rewrite `file` in promptkit's form when it differs from it, which records bodies
        edited by hand as the operator's, dated by the file's modification time. True when the
        file differs (and, unless `dry_run`, was rewritten)."""
        place = place_of(self._root, file)
        if dry_run:
            value = self._reader.read(file, place, _decoder(place))
            return value is not None and self._differs(file, value)
        with self._locked(file):
            value = self._reader.read(file, place, _decoder(place))
            if value is None or not self._differs(file, value):
                return False
            self._write(file, self._encode(value), value)
        _log.info("overrides_hand_edits_recorded", file=str(file))
        return True

    # -- writing ------------------------------------------------------------------------------

    def upsert(self, descriptor: PromptDescriptor, override: PromptOverride) -> PromptOverride:
        """Add or replace the entries of `override`, keeping every other entry of the file.

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
        replace of the file, when the stored entries still match `expected` (compared under the
        file's lock); OverridesConflictError naming what changed otherwise. Entries are checked
        as `upsert` checks them; a writer killed at any point leaves the old file or the new."""
        file, place = self._prompt_place(descriptor.ns, descriptor.key, override.tag)
        sections, tools = checked_entries(descriptor, override)
        with self._locked(file):
            stored = self._reader.read(file, place, decode_prompt_override)
            updated = replaced_entries(stored, override, sections, tools, expected, str(file))
            self._write(file, encode_prompt_override(updated), updated)
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
        """Remove the file of (ns, prompt_key, tag); False when there was none."""
        file, _ = self._prompt_place(ns, prompt_key, tag)
        return self._remove_file(file)

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
        field) and `workspace` (the folder the body describes, stored relative to the root)
        are kept with it for freshness checks. `updated_at` (default: now) is for putting back
        an entry as it was.
        """
        file = shared_file(self._root, section_key, tag)
        if not isinstance(expected_hash, str) or HASH_PATTERN.fullmatch(expected_hash) is None:
            raise OverridesError(
                f"shared section {section_key}: expected_hash must be the section's content hash"
                f" (64 lower-case hex digits), got {expected_hash!r}"
            )
        where = f"shared section {section_key}"
        entry = SectionOverride(
            expected_hash=expected_hash,
            body=checked_text(body, where=where),
            updated_at=updated_at.replace(microsecond=0) if updated_at else _now(),
            source=checked_author(source),
        )
        checked_provenance(provenance, where=where)
        shared = SharedSectionOverride(
            section_key,
            tag,
            entry,
            str(file),
            provenance=dict(provenance) if provenance is not None else None,
            workspace=Path(workspace) if workspace is not None else None,
        )
        with self._locked(file):
            # Read first so that a malformed file is reported, not silently replaced.
            self._reader.read(
                file, FilePlace("shared", tag=tag, section_key=section_key), decode_shared
            )
            self._write(file, self._encode(shared), shared)
        return entry

    def delete_shared_section(self, *, section_key: str, tag: str) -> bool:
        """Remove the shared override of `section_key` under `tag`; False when there was none."""
        return self._remove_file(shared_file(self._root, section_key, tag))

    # -- internals ----------------------------------------------------------------------------

    def _prompt_place(self, ns: str, prompt_key: str, tag: str) -> tuple[Path, FilePlace]:
        key = (ns, prompt_key, tag)
        known = self._places.get(key)
        if known is None:
            file = prompt_file(self._root, ns, prompt_key, tag)
            known = (file, FilePlace("prompt", tag=tag, ns=ns, prompt_key=prompt_key))
            with self._places_lock:
                if len(self._places) >= _PLACES_LIMIT:
                    self._places.clear()
                self._places[key] = known
        return known

    @contextlib.contextmanager
    def _locked(self, file: Path) -> Iterator[None]:
        """Hold the lock of `file`, whose lock file the root's `.gitignore` keeps out of git;
        refused before anything is created when the file's folder leads out of the root."""
        require_inside(self._root, file)
        ensure_ignore_file(self._root)
        with locked(file, timeout=self._lock_timeout):
            # A writer killed mid-write left its temp file; under the lock it is no one's.
            remove_orphaned_temps(file)
            yield

    def _lenient(self, file: Path, place: FilePlace, decode: Decoder[_Value]) -> _Value | None:
        """`read`, or with `strict_overrides` off, the reader's lenient read (the last good
        text of a file that cannot be used, and one log record)."""
        if self._strict:
            return self._reader.read(file, place, decode)
        return self._reader.read_leniently(file, place, decode)

    def _differs(self, file: Path, value: Stored) -> bool:
        return self._encode(value).encode("utf-8") != self._reader.cached_bytes(file)

    def _encode(self, value: Stored) -> str:
        if isinstance(value, PromptOverride):
            return encode_prompt_override(value)
        workspace = None
        if value.workspace is not None:
            relative = os.path.relpath(value.workspace.resolve(), self._root.resolve())
            workspace = Path(relative).as_posix()
        return encode_shared(value, workspace=workspace)

    def _write(self, file: Path, text: str, value: Stored) -> None:
        """Replace `file` with `text` (the caller holds its lock) and remember `value` for it."""
        size = len(text.encode("utf-8"))
        if size > self._max_file_bytes:
            raise OverrideFileError(
                file,
                f"would be {size} bytes, over the limit of {self._max_file_bytes} bytes for an"
                " override file; nothing was written (shorten the text, or pass a larger"
                " max_file_bytes to LocalPromptOverridesStore)",
            )
        write_atomically(file, text)
        self._reader.wrote(file, text, value)

    def _remove_file(self, file: Path) -> bool:
        if not file.exists():
            # Nothing to remove: do not leave folders or a lock file behind either.
            return False
        with self._locked(file):
            removed = remove_file(file)
        self._reader.forget(file)
        return removed

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
        """Add entries to the file under its lock; never drops entries it does not name.

        With `keep_existing` the entries already stored win over the new ones (seeding);
        otherwise the new ones replace them.
        """
        file, place = self._prompt_place(ns, prompt_key, tag)
        with self._locked(file):
            # Read from disk under the lock: the merge is into what another writer just wrote.
            current = self._reader.read(file, place, decode_prompt_override) or PromptOverride(
                ns=ns, prompt_key=prompt_key, tag=tag, location=str(file)
            )
            if keep_existing:
                merged_sections = {**sections, **current.sections}
                merged_tools = {**tools, **current.tools}
            else:
                merged_sections = {**current.sections, **sections}
                merged_tools = {**current.tools, **tools}
            # Evidence of a promotion stays: `check` then names what changed since.
            updated = replace(current, sections=merged_sections, tools=merged_tools)
            self._write(file, encode_prompt_override(updated), updated)
        _log.info(
            "overrides_written",
            file=str(file),
            sections=len(merged_sections),
            tools=len(merged_tools),
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
        file, place = self._prompt_place(ns, prompt_key, tag)
        if not file.exists():
            return False
        with self._locked(file):
            current = self._reader.read(file, place, decode_prompt_override)
            if current is None:
                return False
            sections = {p: e for p, e in current.sections.items() if p != section}
            tools = {n: e for n, e in current.tools.items() if n != tool}
            if len(sections) == len(current.sections) and len(tools) == len(current.tools):
                return False
            updated = replace(current, sections=sections, tools=tools, location=str(file))
            self._write(file, encode_prompt_override(updated), updated)
        return True


def _decoder(place: FilePlace) -> Decoder[Any]:
    return decode_shared if place.kind == "shared" else decode_prompt_override


def _now() -> datetime:
    return SYSTEM_CLOCK.now().replace(microsecond=0)
