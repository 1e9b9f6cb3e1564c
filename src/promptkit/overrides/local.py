"""Hash-guarded section overrides stored as TOML files, one per (namespace, prompt, tag).

The store never drops entries it did not write; staleness is decided at render time. Every
read-modify-write holds the file's lock and replaces the file atomically, so concurrent writers
in any number of processes lose nothing; the root's `.gitignore` (written when absent) keeps
lock and temp files out of review. Reads are cached per file by (mtime_ns, size, inode):
a render costs one `stat` unless the file changed.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from promptkit.durable import write_atomically
from promptkit.errors import OverridesError
from promptkit.logging import get_logger
from promptkit.overrides.atomic import ensure_ignore_file, locked, remove_file
from promptkit.overrides.defaults import seed_body
from promptkit.overrides.layout import (
    FilePlace,
    override_files,
    place_of,
    prompt_file,
    require_section_path,
    shared_file,
)
from promptkit.overrides.shared import SharedSectionOverride
from promptkit.overrides.toml_format import (
    AUTHOR_KINDS,
    HASH_PATTERN,
    decode_prompt_override,
    decode_shared,
    encode_prompt_override,
    encode_shared,
)
from promptkit.prompt import (
    OverrideAuthor,
    Prompt,
    PromptDescriptor,
    PromptOverride,
    SectionDescriptor,
    SectionOverride,
    SectionPath,
    Tool,
    ToolOverride,
)
from promptkit.secrets import find_secrets

_log = get_logger("promptkit.overrides")

OPERATOR = OverrideAuthor("operator")
SEED = OverrideAuthor("seed")
_CACHE_LIMIT = 256
_Stamp = tuple[int, int, int]
_Stored = TypeVar("_Stored", PromptOverride, SharedSectionOverride)


class LocalPromptOverridesStore:
    """Overrides kept in `root` (default `overrides/`), one readable TOML file per prompt and tag.

    Files: `<root>/<ns segments>/<prompt_key>/<tag>.toml` for a prompt, and
    `<root>/_shared/<section_key>/<tag>.toml` for a section shared by every prompt with that
    key. `lock_timeout` bounds how long a write waits for another writer of the same file.
    The first write also creates `<root>/.gitignore`, when absent, for the lock and temp files.
    """

    def __init__(
        self, root: str | os.PathLike[str] = "overrides", *, lock_timeout: float = 60.0
    ) -> None:
        self._root = Path(root)
        self._lock_timeout = lock_timeout
        self._cache: dict[Path, tuple[_Stamp, PromptOverride | SharedSectionOverride]] = {}
        self._cache_lock = threading.Lock()
        self._places: dict[tuple[str, str, str], tuple[Path, FilePlace]] = {}

    def __repr__(self) -> str:
        return f"LocalPromptOverridesStore(root={str(self._root)!r})"

    @property
    def root(self) -> Path:
        return self._root

    def prompt_file(self, ns: str, prompt_key: str, tag: str = "latest") -> Path:
        """The file that holds (ns, prompt_key, tag); OverridesError for an invalid name."""
        return self._prompt_place(ns, prompt_key, tag)[0]

    def shared_file(self, section_key: str, tag: str = "latest") -> Path:
        """The file that holds the shared override of `section_key` under `tag`."""
        return shared_file(self._root, section_key, tag)

    # -- reading ------------------------------------------------------------------------------

    def resolve(self, descriptor: PromptDescriptor, tag: str = "latest") -> PromptOverride | None:
        """Every entry stored for the prompt under `tag` (stale ones included), or None."""
        file, place = self._prompt_place(descriptor.ns, descriptor.key, tag)
        return self._read(file, place, decode_prompt_override)

    def resolve_shared_section(self, section_key: str, tag: str) -> SectionOverride | None:
        """The shared override of `section_key` under `tag`, if one is stored."""
        shared = self.read_shared_section(section_key, tag)
        return shared.entry if shared else None

    def read_shared_section(self, section_key: str, tag: str) -> SharedSectionOverride | None:
        """The shared override with the file it was read from, if one is stored."""
        file = shared_file(self._root, section_key, tag)
        place = FilePlace("shared", tag=tag, section_key=section_key)
        return self._read(file, place, decode_shared)

    def list_overrides(self) -> tuple[PromptOverride | SharedSectionOverride, ...]:
        """Every file under the root, parsed; the first invalid one raises OverridesError."""
        found: list[PromptOverride | SharedSectionOverride] = []
        for file in override_files(self._root):
            place = place_of(self._root, file)
            value = self._read_place(file, place)
            if value is not None:
                found.append(value)
        return tuple(found)

    def read_file(self, file: Path) -> PromptOverride | SharedSectionOverride | None:
        """The parsed content of one file under the root, checked against its place."""
        return self._read_place(file, place_of(self._root, file))

    # -- writing ------------------------------------------------------------------------------

    def upsert(self, descriptor: PromptDescriptor, override: PromptOverride) -> PromptOverride:
        """Add or replace the entries of `override`, keeping every other entry of the file.

        Each section entry must name a section of `descriptor` that accepts overrides, with
        its current content hash; each tool entry a tool with its current contract hash.
        """
        if (override.ns, override.prompt_key) != (descriptor.ns, descriptor.key):
            raise OverridesError(
                f"override for {override.ns}/{override.prompt_key} passed with the descriptor of"
                f" {descriptor.ns}/{descriptor.key}; pass the matching prompt's descriptor"
            )
        self._prompt_place(descriptor.ns, descriptor.key, override.tag)
        sections: dict[SectionPath, SectionOverride] = {}
        for raw_path, entry in override.sections.items():
            path = require_section_path(raw_path)
            target = _writable_section(descriptor, path)
            if entry.expected_hash != target.content_hash:
                raise OverridesError(
                    f"{descriptor.ns}/{descriptor.key} section {'/'.join(path)}: expected_hash"
                    f" {entry.expected_hash} does not match the section's current hash"
                    f" {target.content_hash}; write against the current code (for instance with"
                    " set_section_override); nothing was written"
                )
            where = f"section {'/'.join(path)}"
            if not isinstance(entry.updated_at, datetime) or entry.updated_at.tzinfo is None:
                raise OverridesError(f"{where}: updated_at must be a timezone-aware datetime")
            sections[path] = SectionOverride(
                entry.expected_hash,
                _checked_text(entry.body, where=where),
                entry.updated_at.replace(microsecond=0),
                _checked_author(entry.source),
            )
        tools: dict[str, ToolOverride] = {}
        for name, tool_entry in override.tools.items():
            tool = descriptor.tool(name)
            if tool is None:
                raise OverridesError(
                    f"{descriptor.ns}/{descriptor.key} has no tool {name!r}; nothing was written"
                )
            if tool_entry.expected_contract_hash != tool.contract_hash:
                raise OverridesError(
                    f"{descriptor.ns}/{descriptor.key} tool {name}: expected_contract_hash"
                    f" {tool_entry.expected_contract_hash} does not match the tool's current"
                    f" hash {tool.contract_hash}; nothing was written"
                )
            tools[name] = _checked_tool_entry(tool_entry, where=f"tool {name}")
        return self._merge(descriptor.ns, descriptor.key, override.tag, sections, tools)

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
        target = _writable_section(prompt.descriptor, section_path)
        entry = SectionOverride(
            expected_hash=target.content_hash,
            body=_checked_text(body, where=f"section {'/'.join(section_path)}"),
            updated_at=_now(),
            source=_checked_author(source or OPERATOR),
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
        target = _find_tool(prompt, tool)
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
        entry = _checked_tool_entry(
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
        now = _now()
        sections: dict[SectionPath, SectionOverride] = {}
        tools: dict[str, ToolOverride] = {}
        for path, section in prompt.iter_sections():
            body = seed_body(section, ns=prompt.ns, prompt_key=prompt.key, path=path)
            if body is not None:
                findings = find_secrets(body)
                if findings:
                    _log.warning(
                        "seed_section_skipped",
                        ns=prompt.ns,
                        prompt_key=prompt.key,
                        path="/".join(path),
                        reason="credential-like text",
                        rules=sorted({finding.rule for finding in findings}),
                    )
                else:
                    sections[path] = SectionOverride(section.content_hash, body, now, SEED)
            if section.seedable:
                for tool in section.tools:
                    tools[tool.name] = ToolOverride(
                        tool.contract_hash, tool.description, _param_descriptions(tool)
                    )
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
    ) -> SectionOverride:
        """Store `body` for every prompt with a `section_key` section hashing to `expected_hash`.

        It replaces the previous shared body of that key and tag; prompts' own overrides of
        the section are untouched and still win over it.
        """
        file = shared_file(self._root, section_key, tag)
        if not isinstance(expected_hash, str) or HASH_PATTERN.fullmatch(expected_hash) is None:
            raise OverridesError(
                f"shared section {section_key}: expected_hash must be the section's content hash"
                f" (64 lower-case hex digits), got {expected_hash!r}"
            )
        entry = SectionOverride(
            expected_hash=expected_hash,
            body=_checked_text(body, where=f"shared section {section_key}"),
            updated_at=_now(),
            source=_checked_author(source),
        )
        place = FilePlace("shared", tag=tag, section_key=section_key)
        with self._locked(file):
            # Read first so that a malformed file is reported, not silently replaced.
            self._read(file, place, decode_shared)
            shared = SharedSectionOverride(section_key, tag, entry, str(file))
            self._write(file, encode_shared(shared), shared)
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
            with self._cache_lock:
                if len(self._places) >= _CACHE_LIMIT:
                    self._places.clear()
                self._places[key] = known
        return known

    @contextlib.contextmanager
    def _locked(self, file: Path) -> Iterator[None]:
        """Hold the lock of `file`, whose lock file the root's `.gitignore` keeps out of git."""
        ensure_ignore_file(self._root)
        with locked(file, timeout=self._lock_timeout):
            yield

    def _read_place(
        self, file: Path, place: FilePlace
    ) -> PromptOverride | SharedSectionOverride | None:
        if place.kind == "shared":
            return self._read(file, place, decode_shared)
        return self._read(file, place, decode_prompt_override)

    def _read(
        self,
        file: Path,
        place: FilePlace,
        decode: Callable[..., _Stored],
    ) -> _Stored | None:
        try:
            stat = file.stat()
        except FileNotFoundError:
            return None
        cached = self._cache.get(file)
        if cached is not None and cached[0] == (stat.st_mtime_ns, stat.st_size, stat.st_ino):
            return cast(_Stored, cached[1])
        try:
            with file.open("rb") as handle:
                # The stamp comes from the open file, so a replace between stat and open cannot
                # pair new text with an old stamp.
                opened = os.fstat(handle.fileno())
                raw = handle.read()
        except FileNotFoundError:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            line = raw[: error.start].count(b"\n") + 1
            raise OverridesError(
                f"{file} line {line}: not UTF-8 text; save the file as UTF-8"
            ) from None
        value = decode(text, file=file, place=place)
        self._remember(file, opened, value)
        return value

    def _write(self, file: Path, text: str, value: PromptOverride | SharedSectionOverride) -> None:
        """Replace `file` with `text` (the caller holds its lock) and cache `value` for it."""
        write_atomically(file, text)
        # Under the lock nobody else can have replaced the file yet, so this stamp is ours; a
        # writer that takes the lock again next skips re-reading what it just wrote.
        self._remember(file, file.stat(), value)

    def _remember(
        self, file: Path, stat: os.stat_result, value: PromptOverride | SharedSectionOverride
    ) -> None:
        with self._cache_lock:
            if len(self._cache) >= _CACHE_LIMIT and file not in self._cache:
                self._cache.pop(next(iter(self._cache)))
            self._cache[file] = ((stat.st_mtime_ns, stat.st_size, stat.st_ino), value)

    def _remove_file(self, file: Path) -> bool:
        if not file.exists():
            # Nothing to remove: do not leave folders or a lock file behind either.
            return False
        with self._locked(file):
            removed = remove_file(file)
        self._forget(file)
        return removed

    def _forget(self, file: Path) -> None:
        with self._cache_lock:
            self._cache.pop(file, None)

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
            current = self._read(file, place, decode_prompt_override) or PromptOverride(
                ns=ns, prompt_key=prompt_key, tag=tag, location=str(file)
            )
            if keep_existing:
                merged_sections = {**sections, **current.sections}
                merged_tools = {**tools, **current.tools}
            else:
                merged_sections = {**current.sections, **sections}
                merged_tools = {**current.tools, **tools}
            updated = PromptOverride(
                ns=ns,
                prompt_key=prompt_key,
                tag=tag,
                sections=merged_sections,
                tools=merged_tools,
                location=str(file),
            )
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
            current = self._read(file, place, decode_prompt_override)
            if current is None:
                return False
            sections = {p: e for p, e in current.sections.items() if p != section}
            tools = {n: e for n, e in current.tools.items() if n != tool}
            if len(sections) == len(current.sections) and len(tools) == len(current.tools):
                return False
            updated = PromptOverride(
                ns, prompt_key, tag, sections=sections, tools=tools, location=str(file)
            )
            self._write(file, encode_prompt_override(updated), updated)
        return True


def _writable_section(descriptor: PromptDescriptor, path: SectionPath) -> SectionDescriptor:
    target = descriptor.section(path)
    name = f"{descriptor.ns}/{descriptor.key}"
    if target is None:
        writable = [
            "/".join(entry.path) for entry in descriptor.sections if entry.accepts_overrides
        ]
        shown = ", ".join(writable[:12]) + (", ..." if len(writable) > 12 else "")
        raise OverridesError(
            f"prompt {name} has no section at {'/'.join(path)!r} (sections that accept"
            f" overrides: {shown or 'none'}); nothing was written"
        )
    if not target.accepts_overrides:
        raise OverridesError(
            f"prompt {name} section {'/'.join(path)} does not accept overrides; nothing was written"
        )
    return target


def _checked_text(text: object, *, where: str) -> str:
    if not isinstance(text, str):
        raise OverridesError(f"{where}: the text must be a str, got {type(text).__name__}")
    # TOML turns a CRLF inside a multi-line string into LF on reading; storing LF keeps the
    # text read back equal to the text written.
    text = text.replace("\r\n", "\n")
    findings = find_secrets(text)
    if findings:
        where_found = ", ".join(f"{f.rule} on line {f.line}" for f in findings)
        raise OverridesError(
            f"{where}: the text contains what looks like a credential ({where_found}); remove it"
            " and refer to it by name instead; nothing was written"
        )
    return text


def _checked_tool_entry(entry: ToolOverride, *, where: str) -> ToolOverride:
    description = (
        None if entry.description is None else _checked_text(entry.description, where=where)
    )
    params: dict[str, str] = {}
    for name, text in entry.param_descriptions.items():
        if not isinstance(name, str) or not name:
            raise OverridesError(f"{where}: parameter names must be non-empty strings")
        params[name] = _checked_text(text, where=f"{where} parameter {name}")
    return ToolOverride(entry.expected_contract_hash, description, params)


def _checked_author(author: OverrideAuthor) -> OverrideAuthor:
    if not isinstance(author, OverrideAuthor) or author.kind not in AUTHOR_KINDS:
        raise OverridesError(
            f"source must be OverrideAuthor('operator'|'optimizer'|'seed', model), got {author!r}"
        )
    if author.model is not None and not isinstance(author.model, str):
        raise OverridesError(f"source model must be a string, got {author.model!r}")
    return author


def _find_tool(prompt: Prompt[Any], name: str) -> Tool[Any] | None:
    tools = (tool for _, section in prompt.iter_sections() for tool in section.tools)
    return next((tool for tool in tools if tool.name == name), None)


def _param_descriptions(tool: Tool[Any]) -> dict[str, str]:
    properties = tool.parameters_schema.get("properties", {})
    return {
        name: schema["description"]
        for name, schema in properties.items()
        if isinstance(schema, dict) and isinstance(schema.get("description"), str)
    }


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
