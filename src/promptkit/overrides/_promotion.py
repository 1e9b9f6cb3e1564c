"""Promotion integrity: what a tag's entries were, by content, and the evidence bound to them.

`OverridesSnapshot` identifies a tag's entries at one moment by the hash of each entry (a
section's body with the code hash it was written for; a tool's texts with its contract hash).
An evaluation records the snapshot of every tag it ran; promotion refuses when the candidate or
the target no longer matches its snapshot, and names the entries that changed.

A promotion writes the candidate's entries over the target's and, in the same document (one
atomic replace of one file, or one row in a transaction), a `[promotion]` table: the evidence
(scores, dataset hash, model, settings), the hash of every promoted entry, the hash of the
entries it replaced, and `evidence_sha256`, a seal over all of it. `promotion_problems` reads
that table back against the entries beside it: an entry edited after the promotion (by hand or
by a later write), evidence edited after it (the seal no longer matches) and a dataset file
changed since are each named. The seal catches edits, not a forger who recomputes it: that
takes a signature, which needs a key this layer does not have.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptkit.errors import OverridesConflictError
from promptkit.prompt import PromptOverride, SectionOverride, SectionPath, ToolOverride

PROMOTION_TABLE = "promotion"
SEAL_KEY = "evidence_sha256"
SECTION_HASHES = "section_sha256"
TOOL_HASHES = "tool_sha256"
ENTRIES_HASH = "entries_sha256"
REPLACED_HASH = "replaced_sha256"
DATASET_FILE = "dataset_file"
DATASET_HASH = "dataset_sha256"
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class OverridesSnapshot:
    """A tag's entries identified by content: a hash per section path (`a/b`) and per tool.

    Only what a render uses is hashed (bodies, descriptions and the hashes they were written
    against), not who wrote an entry or when, so recording a hand edit's author changes nothing.
    No entries and no document are the same snapshot.
    """

    sections: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, override: PromptOverride | None) -> OverridesSnapshot:
        """The snapshot of `override`'s entries (no entries for None)."""
        if override is None:
            return cls()
        sections = {
            "/".join(path): _digest({"expected_hash": entry.expected_hash, "body": entry.body})
            for path, entry in override.sections.items()
        }
        tools = {
            name: _digest(
                {
                    "expected_contract_hash": entry.expected_contract_hash,
                    "description": entry.description,
                    "param_descriptions": dict(entry.param_descriptions),
                }
            )
            for name, entry in override.tools.items()
        }
        return cls(dict(sorted(sections.items())), dict(sorted(tools.items())))

    @property
    def content_hash(self) -> str:
        """One hash over every entry's hash."""
        return _digest(self.to_json())

    @property
    def is_empty(self) -> bool:
        return not self.sections and not self.tools

    def changes_since(self, earlier: OverridesSnapshot) -> tuple[str, ...]:
        """What differs from `earlier`, one phrase per entry (`section intro edited`)."""
        return (
            *_changes("section", earlier.sections, self.sections),
            *_changes("tool", earlier.tools, self.tools),
        )

    def to_json(self) -> dict[str, Any]:
        return {"sections": dict(self.sections), "tools": dict(self.tools)}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> OverridesSnapshot:
        return cls(dict(value.get("sections", {})), dict(value.get("tools", {})))


def bind_promotion(
    entries: PromptOverride, evidence: Mapping[str, Any], *, replaced: OverridesSnapshot
) -> dict[str, Any]:
    """The `[promotion]` table for `entries`: `evidence` (JSON values; None values are left out,
    as TOML has no null), the hash of every entry, of all of them and of the entries replaced,
    and the seal over the whole table."""
    promoted = OverridesSnapshot.of(entries)
    table: dict[str, Any] = _without_nulls(dict(evidence))
    table[SECTION_HASHES] = dict(promoted.sections)
    table[TOOL_HASHES] = dict(promoted.tools)
    table[ENTRIES_HASH] = promoted.content_hash
    table[REPLACED_HASH] = replaced.content_hash
    table[SEAL_KEY] = seal_of(table)
    return table


def replaced_entries(
    stored: PromptOverride | None,
    override: PromptOverride,
    sections: Mapping[SectionPath, SectionOverride],
    tools: Mapping[str, ToolOverride],
    expected: OverridesSnapshot,
    location: str,
) -> PromptOverride:
    """What `replace_entries` writes over `stored`: `override`'s checked `sections` and `tools`
    and its promotion evidence, and nothing else; OverridesConflictError when `stored` no
    longer matches `expected`. Every store calls it while it holds the document."""
    changes = OverridesSnapshot.of(stored).changes_since(expected)
    if changes:
        raise OverridesConflictError(
            f"{location}: changed since it was read ({', '.join(changes)}); nothing was written",
            changes=changes,
        )
    return PromptOverride(
        ns=override.ns,
        prompt_key=override.prompt_key,
        tag=override.tag,
        sections=dict(sections),
        tools=dict(tools),
        location=location,
        promotion=override.promotion,
    )


def seal_of(table: Mapping[str, Any]) -> str:
    """The hash of a promotion table without its own seal."""
    return _digest({key: value for key, value in table.items() if key != SEAL_KEY})


def promotion_problems(override: PromptOverride, *, root: Path | None = None) -> tuple[str, ...]:
    """Where `override` no longer matches the evidence of the promotion that wrote it: the seal,
    each promoted entry, and the dataset file when it is still there (`dataset_file` is stored
    relative to the overrides `root`). Empty when it matches or was never promoted."""
    table = override.promotion
    if table is None:
        return ()
    promoted_at = table.get("promoted_at", "an unknown time")
    origin = f"promoted from {table.get('from_tag', '?')!s} at {promoted_at!s}"
    if table.get(SEAL_KEY) != seal_of(table):
        return (
            f"the promotion evidence ({origin}) was edited after it was written: its"
            f" {SEAL_KEY} no longer matches its scores and hashes; promote again to record"
            " real evidence",
        )
    sections, tools = table.get(SECTION_HASHES), table.get(TOOL_HASHES)
    if not isinstance(sections, Mapping) or not isinstance(tools, Mapping):
        return (f"the promotion evidence ({origin}) has no entry hashes; promote again",)
    problems = [
        f"{change} since it was {origin}"
        for change in OverridesSnapshot.of(override).changes_since(
            OverridesSnapshot(dict(sections), dict(tools))
        )
    ]
    dataset_problem = _dataset_problem(table, root)
    if dataset_problem is not None:
        problems.append(dataset_problem)
    return tuple(problems)


def file_sha256(path: Path) -> str:
    """The sha256 of a regular file's bytes, read in chunks (memory stays bounded)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _dataset_problem(table: Mapping[str, Any], root: Path | None) -> str | None:
    relative, recorded = table.get(DATASET_FILE), table.get(DATASET_HASH)
    if root is None or not isinstance(relative, str) or not isinstance(recorded, str):
        return None
    dataset = Path(os.path.normpath(root / relative))
    try:
        # Only a regular file is hashed: a FIFO or a device named here would block or never end.
        if not stat.S_ISREG(dataset.stat().st_mode):
            return None
        current = file_sha256(dataset)
    except OSError:
        return None  # the dataset is not in this checkout: nothing to compare
    if current == recorded:
        return None
    return (
        f"the dataset {dataset} changed since the promotion was evaluated on it (sha256"
        f" {recorded[:12]}..., now {current[:12]}...); evaluate and promote again"
    )


def _changes(kind: str, before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    changes = []
    for name in sorted({*before, *after}):
        if name not in after:
            changes.append(f"{kind} {name} removed")
        elif name not in before:
            changes.append(f"{kind} {name} added")
        elif before[name] != after[name]:
            changes.append(f"{kind} {name} edited")
    return changes


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list | tuple):
        return [_without_nulls(item) for item in value if item is not None]
    return value


def _digest(value: Any) -> str:
    # `default=str`: a date typed into the table by hand is hashed as its text, not an error.
    canonical = json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
