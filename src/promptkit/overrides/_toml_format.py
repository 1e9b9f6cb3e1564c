"""The TOML form of override files: written with tomli-w, read and checked with tomllib.

A prompt file holds a header (`version = 1`, `ns`, `prompt_key`, `tag`), one table per section
path (`[sections."intro/child"]`) and one per tool (`[tools.search]`). Entries are sorted so a
diff shows only what changed, and bodies are multi-line strings a person can edit. Reading
checks the header against the file's place and every field's type, and reports the file and
line of the first problem.

Each section entry records `body_sha256`, the hash of the body as promptkit wrote it. A body
that no longer matches was edited by hand: it is read as the operator's, dated by the file's
modification time, and the next write records it so. A shared file may end with a
`[provenance]` table of what its body describes (`SharedSectionOverride.provenance`). A prompt
file written by a promotion ends with a `[promotion]` table, its evidence
(`PromptOverride.promotion`, read back by `promptkit.overrides._promotion`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any, cast, get_args

import tomli_w

from promptkit._names import is_valid_key
from promptkit.clock import SYSTEM_CLOCK
from promptkit.overrides._files import OverrideFileError
from promptkit.overrides._layout import FilePlace
from promptkit.overrides._promotion import PROMOTION_TABLE
from promptkit.overrides._shared import ProvenanceValue, SharedSectionOverride
from promptkit.prompt import (
    TOOL_NAME_PATTERN,
    AuthorKind,
    OverrideAuthor,
    PromptOverride,
    SectionOverride,
    SectionPath,
    ToolOverride,
)

FORMAT_VERSION = 1
# Where an error is: a line number, or the (table, name) of an entry whose line is looked up
# only when an error is raised, so reading a valid file never scans its lines.
_At = int | tuple[str, str] | None
HASH_PATTERN = re.compile(r"[0-9a-f]{64}")
AUTHOR_KINDS: tuple[str, ...] = get_args(AuthorKind)

_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)$")
_SECTION_KEYS = frozenset(
    {"expected_hash", "updated_at", "source", "model", "body_sha256", "code_default", "body"}
)
_OPERATOR = OverrideAuthor("operator")
_PROVENANCE = "provenance"
_WORKSPACE = "workspace"
_REQUIRED_SECTION_KEYS = ("expected_hash", "updated_at", "source", "body")
_TOOL_KEYS = frozenset({"expected_contract_hash", "description", "param_descriptions"})
_PROMPT_HEADER = ("ns", "prompt_key", "tag")
_SHARED_HEADER = ("section_key", "tag")


def encode_prompt_override(override: PromptOverride) -> str:
    """The file text for `override`: header, then sections and tools sorted by name."""
    header = {
        "version": FORMAT_VERSION,
        "ns": override.ns,
        "prompt_key": override.prompt_key,
        "tag": override.tag,
    }
    comment = (
        f"# promptkit overrides for prompt {override.ns}/{override.prompt_key}, tag"
        f" {override.tag!r}.\n# Edit a body, then run `promptkit overrides check`.\n\n"
    )
    chunks = [comment + tomli_w.dumps(header)]
    chunks.extend(
        _section_chunk("/".join(path), entry) for path, entry in sorted(override.sections.items())
    )
    chunks.extend(_tool_chunk(name, entry) for name, entry in sorted(override.tools.items()))
    if override.promotion is not None:
        chunks.append(tomli_w.dumps({PROMOTION_TABLE: dict(override.promotion)}))
    return "\n".join(chunks)


# Each section entry is encoded on its own and remembered: a write to a file of many entries
# then encodes only the entry it changed. The text is what tomli-w gives for the whole document.
@functools.lru_cache(maxsize=4096)
def _section_chunk(name: str, entry: SectionOverride) -> str:
    return tomli_w.dumps({"sections": {name: _section_table(entry)}}, multiline_strings=True)


def _tool_chunk(name: str, entry: ToolOverride) -> str:
    return tomli_w.dumps({"tools": {name: _tool_table(entry)}}, multiline_strings=True)


def encode_shared(shared: SharedSectionOverride, *, workspace: str | None = None) -> str:
    """The file text for a shared section override; `workspace` is its workspace's folder as
    stored (relative to the root), written into `[provenance]` with `shared.provenance`."""
    document: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "section_key": shared.section_key,
        "tag": shared.tag,
        **_section_table(shared.entry),
    }
    if shared.provenance is not None or workspace is not None:
        provenance: dict[str, Any] = {} if workspace is None else {_WORKSPACE: workspace}
        for key, value in (shared.provenance or {}).items():
            provenance[key] = list(value) if isinstance(value, tuple) else value
        document[_PROVENANCE] = provenance
    comment = (
        f"# promptkit shared override of section {shared.section_key!r}, tag {shared.tag!r}:"
        "\n# used by every prompt with a section of this key that has no override of its own.\n\n"
    )
    return comment + tomli_w.dumps(document, multiline_strings=True)


def decode_prompt_override(
    text: str, *, file: Path | str, place: FilePlace, modified_at: datetime | None = None
) -> PromptOverride:
    """Parse and check a prompt file; OverrideFileError names the file and line of a problem.

    `modified_at` (the file's modification time) dates entries edited by hand.
    """
    data = _parse(text, file)
    reader = _Reader(text, file, modified_at)
    reader.check_header(data, place, _PROMPT_HEADER, allowed={"sections", "tools", PROMOTION_TABLE})
    sections: dict[SectionPath, SectionOverride] = {}
    for name, value in reader.table(data, "sections").items():
        where = f"sections.{_quoted(name)}"
        at = ("sections", name)
        path = tuple(name.split("/"))
        if not all(is_valid_key(part) for part in path):
            raise reader.error(
                at,
                f"{where}: a section path is keys joined by '/', each lower-case letters,"
                " digits, '.', '_' or '-'",
            )
        sections[path] = reader.section_entry(value, where=where, at=at, allowed=_SECTION_KEYS)
    tools: dict[str, ToolOverride] = {}
    for name, value in reader.table(data, "tools").items():
        where = f"tools.{_quoted(name)}"
        at = ("tools", name)
        if TOOL_NAME_PATTERN.fullmatch(name) is None:
            raise reader.error(at, f"{where}: a tool name is 1-64 of a-z, 0-9, '_' or '-'")
        tools[name] = reader.tool_entry(value, where=where, at=at)
    return PromptOverride(
        ns=place.ns,
        prompt_key=place.prompt_key,
        tag=place.tag,
        sections=sections,
        tools=tools,
        location=str(file),
        promotion=reader.promotion(data.get(PROMOTION_TABLE)),
    )


def decode_shared(
    text: str,
    *,
    file: Path | str,
    place: FilePlace,
    modified_at: datetime | None = None,
    files_root: Path | None = None,
) -> SharedSectionOverride:
    """Parse and check a shared section file (`<root>/_shared/<key>/<tag>.toml`); its workspace
    is stored relative to `files_root` (default: the root `file` is in)."""
    data = _parse(text, file)
    reader = _Reader(text, file, modified_at)
    reader.check_header(data, place, _SHARED_HEADER, allowed={*_SECTION_KEYS, _PROVENANCE})
    fields = {key: value for key, value in data.items() if key in _SECTION_KEYS}
    entry = reader.section_entry(fields, where="entry", at=None, allowed=_SECTION_KEYS)
    provenance = reader.provenance(data.get(_PROVENANCE))
    workspace = provenance.pop(_WORKSPACE, None) if provenance is not None else None
    if workspace is not None and not isinstance(workspace, str):
        raise reader.error(reader.table_header(_PROVENANCE), "provenance.workspace must be a path")
    return SharedSectionOverride(
        place.section_key,
        place.tag,
        entry,
        str(file),
        provenance=provenance,
        # The folder is stored relative to the root, which is two levels above this file.
        workspace=(
            Path(os.path.normpath((files_root or Path(file).parents[2]) / workspace))
            if workspace
            else None
        ),
    )


def _parse(text: str, file: Path | str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively.
        raise OverrideFileError(
            file,
            "malformed TOML: values are nested too deeply to read (an override file needs no"
            " nesting below its tables)",
            line=_deepest_line(text),
        ) from None
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        line = getattr(error, "lineno", None)
        found = _AT_LINE.search(message)
        if line is None and found:
            line = int(found.group(1))
        elif line is None:
            line = text.count("\n") + 1
        message = _AT_LINE.sub("", message).replace("(at end of document)", "").strip()
        raise OverrideFileError(file, f"malformed TOML: {message}", line=line) from None


def _deepest_line(text: str) -> int:
    """The line where `[`/`{` nesting is deepest (strings are not skipped: a hint only)."""
    depth = deepest = 0
    line = where = 1
    for character in text:
        if character in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        elif character in "]}":
            depth = max(0, depth - 1)
        elif character == "\n":
            line += 1
    return where


def body_sha256(body: str) -> str:
    """The hash recorded with a body, to tell later whether it was edited by hand."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _section_table(entry: SectionOverride) -> dict[str, Any]:
    table: dict[str, Any] = {
        "expected_hash": entry.expected_hash,
        "updated_at": entry.updated_at,
        "source": entry.source.kind,
    }
    if entry.source.model is not None:
        table["model"] = entry.source.model
    table["body_sha256"] = body_sha256(entry.body)
    if entry.code_default is not None:
        table["code_default"] = entry.code_default
    table["body"] = entry.body
    return table


def _tool_table(entry: ToolOverride) -> dict[str, Any]:
    table: dict[str, Any] = {"expected_contract_hash": entry.expected_contract_hash}
    if entry.description is not None:
        table["description"] = entry.description
    if entry.param_descriptions:
        table["param_descriptions"] = dict(sorted(entry.param_descriptions.items()))
    return table


def table_line(lines: list[str], table: str, name: str) -> int | None:
    """The line number of the `[table.name]` header (quoted or bare name) in `lines`."""
    pattern = re.compile(
        rf'\s*\[\s*{re.escape(table)}\s*\.\s*(?:"{re.escape(name)}"|{re.escape(name)})\s*\]'
    )
    return next((n for n, line in enumerate(lines, 1) if pattern.match(line)), None)


def table_header_line(lines: list[str], name: str) -> int | None:
    """The line number of the `[name]` table header in `lines`."""
    pattern = re.compile(rf"\s*\[\s*{re.escape(name)}\s*\]")
    return next((n for n, line in enumerate(lines, 1) if pattern.match(line)), None)


def key_line(lines: list[str], key: str) -> int | None:
    """The line number of a top-level `key = ...` in `lines`, before the first table."""
    pattern = re.compile(rf'\s*(?:{re.escape(key)}|"{re.escape(key)}")\s*=')
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("["):
            return None
        if pattern.match(line):
            return number
    return None


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f'"{name}"'


class _Reader:
    """Checks parsed data against the format, knowing the text to point at lines."""

    def __init__(self, text: str, file: Path | str, modified_at: datetime | None) -> None:
        self.text = text
        self.file = file
        self.modified_at = modified_at

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def error(self, at: _At, message: str) -> OverrideFileError:
        """An error at a line number, or at the header line of a (table, name) entry."""
        line = table_line(self.lines, *at) if isinstance(at, tuple) else at
        return OverrideFileError(self.file, message, line=line)

    def key_line(self, key: str) -> int | None:
        """The line of a top-level `key = ...`, before the first table."""
        return key_line(self.lines, key)

    def check_header(
        self,
        data: Mapping[str, Any],
        place: FilePlace,
        header: tuple[str, ...],
        *,
        allowed: set[str] | frozenset[str],
    ) -> None:
        version = data.get("version")
        if version != FORMAT_VERSION:
            hint = (
                "it was written by a newer promptkit; upgrade promptkit"
                if isinstance(version, int) and version > FORMAT_VERSION
                else f"expected version = {FORMAT_VERSION}"
            )
            raise self.error(self.key_line("version"), f"unsupported version {version!r}: {hint}")
        for key in header:
            expected = getattr(place, key)
            if key not in data:
                raise self.error(None, f"missing header {key} = {expected!r}")
            if data[key] != expected:
                raise self.error(
                    self.key_line(key),
                    f"header {key} = {data[key]!r} does not match the file's place, which says"
                    f" {expected!r}; move the file or correct the header",
                )
        unknown = sorted(set(data) - {"version", *header} - set(allowed))
        if unknown:
            raise self.error(
                self.key_line(unknown[0]),
                f"unknown top-level key {unknown[0]!r} (expected: {', '.join(sorted(allowed))})",
            )

    def table(self, data: Mapping[str, Any], name: str) -> dict[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise self.error(self.key_line(name), f"{name} must be a table of entries")
        return cast(dict[str, Any], value)

    # One check per field of a section entry, in the file format's order.
    def section_entry(  # noqa: C901
        self, value: object, *, where: str, at: _At, allowed: frozenset[str]
    ) -> SectionOverride:
        fields = self._fields(value, where=where, at=at, allowed=allowed)
        missing = [key for key in _REQUIRED_SECTION_KEYS if key not in fields]
        if missing:
            raise self.error(at, f"{where}: missing {', '.join(missing)}")
        expected_hash = fields.get("expected_hash")
        if not isinstance(expected_hash, str) or HASH_PATTERN.fullmatch(expected_hash) is None:
            raise self.error(at, f"{where}: expected_hash must be 64 lower-case hex digits")
        body = fields.get("body")
        if not isinstance(body, str):
            raise self.error(at, f"{where}: body must be a string")
        updated_at = fields.get("updated_at")
        if not isinstance(updated_at, datetime):
            raise self.error(
                at, f"{where}: updated_at must be a date-time such as 2025-01-31T09:30:00Z"
            )
        if updated_at.tzinfo is None:
            updated_at = updated_at.replace(tzinfo=UTC)
        source = fields.get("source")
        if source not in AUTHOR_KINDS:
            raise self.error(at, f"{where}: source must be one of {', '.join(AUTHOR_KINDS)}")
        model = fields.get("model")
        if model is not None and not isinstance(model, str):
            raise self.error(at, f"{where}: model must be a string")
        author = OverrideAuthor(cast(AuthorKind, source), model)
        recorded_hash = fields.get("body_sha256")
        if recorded_hash is not None and (
            not isinstance(recorded_hash, str) or HASH_PATTERN.fullmatch(recorded_hash) is None
        ):
            raise self.error(at, f"{where}: body_sha256 must be 64 lower-case hex digits")
        code_default = fields.get("code_default")
        if code_default is not None and not isinstance(code_default, str):
            raise self.error(at, f"{where}: code_default must be a string")
        if recorded_hash is not None and recorded_hash != body_sha256(body):
            # Edited by hand since promptkit wrote it: the text is the operator's now.
            author = _OPERATOR
            updated_at = self.modified_at or SYSTEM_CLOCK.now().replace(microsecond=0)
        return SectionOverride(expected_hash, body, updated_at, author, code_default)

    def provenance(self, value: object) -> dict[str, ProvenanceValue] | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error(self.key_line(_PROVENANCE), "provenance must be a table")
        fields: dict[str, ProvenanceValue] = {}
        for key, item in value.items():
            if isinstance(item, list) and all(isinstance(note, str) for note in item):
                fields[key] = tuple(item)
            elif isinstance(item, str | bool):
                fields[key] = item
            else:
                raise self.error(
                    self.table_header(_PROVENANCE),
                    f"provenance.{key} must be text, true/false or a list of text",
                )
        return fields

    def promotion(self, value: object) -> dict[str, Any] | None:
        # Only its shape is checked here: a render never fails on evidence, and `check`
        # compares its content with the entries.
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error(self.key_line(PROMOTION_TABLE), "promotion must be a table")
        return cast(dict[str, Any], value)

    def table_header(self, name: str) -> int | None:
        """The line of the `[name]` table header."""
        return table_header_line(self.lines, name)

    def tool_entry(self, value: object, *, where: str, at: _At) -> ToolOverride:
        fields = self._fields(value, where=where, at=at, allowed=_TOOL_KEYS)
        if "expected_contract_hash" not in fields:
            raise self.error(at, f"{where}: missing expected_contract_hash")
        contract_hash = fields.get("expected_contract_hash")
        if not isinstance(contract_hash, str) or HASH_PATTERN.fullmatch(contract_hash) is None:
            raise self.error(
                at, f"{where}: expected_contract_hash must be 64 lower-case hex digits"
            )
        description = fields.get("description")
        if description is not None and not isinstance(description, str):
            raise self.error(at, f"{where}: description must be a string")
        params = fields.get("param_descriptions", {})
        if not isinstance(params, dict) or not all(
            isinstance(key, str) and isinstance(text, str) for key, text in params.items()
        ):
            raise self.error(at, f"{where}: param_descriptions must be a table of parameter = text")
        return ToolOverride(contract_hash, description, dict(params))

    def _fields(
        self, value: object, *, where: str, at: _At, allowed: frozenset[str]
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(at, f"{where} must be a table")
        unknown = sorted(set(value) - allowed)
        if unknown:
            nested = isinstance(value[unknown[0]], dict)
            hint = (
                '; write a nested section path as one quoted key: [sections."parent/child"]'
                if nested
                else ""
            )
            raise self.error(
                at,
                f"{where}: unknown key {unknown[0]!r} (expected: {', '.join(sorted(allowed))})"
                + hint,
            )
        return cast(dict[str, Any], value)
