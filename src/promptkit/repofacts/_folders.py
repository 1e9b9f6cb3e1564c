"""What each notable folder is for, in one line, from what the folder says about itself.

A folder's purpose is the first sentence of its README, its package manifest's description
(package.json, Cargo.toml, pyproject.toml), or its package docstring (`__init__.py`, `lib.rs`,
`doc.go`). Notable folders are the top-level ones, plus one or two levels into the folder that
holds most of the code, where a project's concepts live (`src/promptkit/workspace/`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from promptkit.repofacts._tooling.model import FileReader, load_toml, one_line, table

__all__ = ["FolderNote", "describe_folders"]

_PURPOSE_READ_LIMIT = 16 * 1024
_MAX_TOP_LEVEL = 16
_MAX_INNER = 20
_MAX_UNNOTED = 40
_SECONDARY = frozenset(
    {
        "test", "tests", "testing", "spec", "e2e", "docs", "doc", "examples", "example",
        "benchmarks", "bench", "fixtures", "integration_tests", "integration-tests", "scripts",
        "vendor", "third_party", "playground", "website", "site",
    }
)  # fmt: skip
_MAX_PURPOSE = 100
# Minimum share of its parent's code for the heaviest child to be looked into as well.
_DOMINANT_SHARE = 0.5
_BOILERPLATE_REPEATS = 3


@dataclass(frozen=True, slots=True)
class FolderNote:
    """A folder (`path` ends with "/"), how many files it holds, and what it is for.

    `subfolders` are its subfolders that have no note of their own, largest first (bounded);
    `source` is the file the purpose was read from.
    """

    path: str
    files: int
    purpose: str | None
    subfolders: tuple[str, ...] = ()
    source: str | None = None


def describe_folders(
    files: Counter[str], code: Counter[str], present: frozenset[str], read: FileReader
) -> tuple[FolderNote, ...]:
    """Notes for the top-level folders and those inside the one holding most of the code.

    `files` and `code` count the files (and the code files) under each folder, four levels
    deep ("src/", "src/promptkit/", ...); `present` holds every listed path. Ordered as a
    reader walks them: each top-level folder, its inner folders right after it.
    """
    top = sorted(
        (folder for folder in files if folder.count("/") == 1),
        key=lambda folder: (-files[folder], folder),
    )[:_MAX_TOP_LEVEL]
    inner = _inner_folders(top, files, code)
    noted = {*top, *inner}

    def note(folder: str) -> FolderNote:
        unnoted = [child for child in _children(folder, files) if child not in noted]
        purpose, source = _purpose(folder, present, read)
        return FolderNote(folder, files[folder], purpose, tuple(unnoted[:_MAX_UNNOTED]), source)

    notes: list[FolderNote] = []
    for folder in sorted(top, key=lambda folder: (-files[folder], folder)):
        notes.append(note(folder))
        notes.extend(note(child) for child in inner if child.startswith(folder))
    # A sentence many folders share ("This crate is an internal component") says nothing.
    repeated = Counter(note.purpose for note in notes if note.purpose)
    return tuple(
        replace(note, purpose=None, source=None)
        if note.purpose and repeated[note.purpose] >= _BOILERPLATE_REPEATS
        else note
        for note in notes
    )


def _inner_folders(top: list[str], files: Counter[str], code: Counter[str]) -> list[str]:
    """Children (and grandchildren, under a dominant child) of the folder with most code."""
    candidates = [folder for folder in top if code[folder]]
    # Tests, docs and examples often outnumber the code they exercise; look there last.
    # `docs_src/` and `integration-tests/` are docs and tests too: their name's words say so.
    primary = [
        folder
        for folder in candidates
        if not any(word in _SECONDARY for word in re.split(r"[_\-.]", folder.rstrip("/").lower()))
    ]
    candidates = primary or candidates
    if not candidates:
        return []
    heaviest = max(candidates, key=lambda folder: (code[folder], folder))
    chosen = _children(heaviest, files)[:_MAX_INNER]
    if not chosen:
        return []
    main = max(chosen, key=lambda child: (code[child], child))
    if code[main] >= _DOMINANT_SHARE * code[heaviest]:
        # A package keeps its code under `src/`: the folders there say what it holds.
        source = f"{main}src/"
        in_source = code[source] >= _DOMINANT_SHARE * code[main] and _children(source, files)
        inner = source if in_source else main
        position = chosen.index(main) + 1
        chosen[position:position] = _children(inner, files)[:_MAX_INNER]
    return chosen


def _children(folder: str, files: Counter[str]) -> list[str]:
    depth = folder.count("/") + 1
    return sorted(
        (path for path in files if path.count("/") == depth and path.startswith(folder)),
        key=lambda path: (-files[path], path),
    )


def _purpose(
    folder: str, present: frozenset[str], read: FileReader
) -> tuple[str | None, str | None]:
    """What the folder is for, and the file that says so."""
    for name, extract in _SOURCES:
        path = f"{folder}{name}"
        if path not in present:
            continue
        text = read(path, _PURPOSE_READ_LIMIT)
        purpose = extract(text) if text is not None else None
        if purpose:
            return one_line(purpose, _MAX_PURPOSE), path
    return None, None


def _first_sentence(text: str) -> str | None:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(?:\s|$)", text)
    sentence = match.group(1) if match else text
    return sentence if len(sentence) >= 8 else None


def _readme(text: str) -> str | None:
    for paragraph in _paragraphs(text):
        cleaned = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", paragraph)
        cleaned = re.sub(r"\*\*|__|`", "", cleaned).strip()
        if cleaned and re.search(r"[a-z]{3}", cleaned):
            return _first_sentence(cleaned)
    return None


def _paragraphs(text: str) -> Iterator[str]:
    current: list[str] = []
    in_fence = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        skip = (
            stripped.startswith(("#", "<", "|", "[!", "!", "---", "===", "..", ":")) or not stripped
        )
        if in_fence or skip:
            if current:
                yield " ".join(current)
                current = []
            continue
        current.append(stripped.lstrip("> ").lstrip("*- "))
    if current:
        yield " ".join(current)


def _package_json(text: str) -> str | None:
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    description = document.get("description") if isinstance(document, dict) else None
    return _first_sentence(description) if isinstance(description, str) else None


def _manifest_description(section: str) -> Callable[[str], str | None]:
    def extract(text: str) -> str | None:
        document = load_toml(text)
        description = table(document, section).get("description") if document else None
        return _first_sentence(description) if isinstance(description, str) else None

    return extract


def _python_docstring(text: str) -> str | None:
    match = re.match(r'\s*(?:#[^\n]*\n\s*)*[rRuU]?("""|\'\'\')(.*?)(?:\1|$)', text, re.DOTALL)
    return _first_sentence(match.group(2)) if match else None


def _rust_doc(text: str) -> str | None:
    lines = [
        line.strip()[3:].strip() for line in text.splitlines() if line.strip().startswith("//!")
    ]
    doc = " ".join(line for line in lines if line and not line.startswith(("#", "[", "<", "!")))
    return _first_sentence(doc) if doc else None


def _go_doc(text: str) -> str | None:
    lines: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            lines.append(stripped[2:].strip())
        elif stripped.startswith("package "):
            break
        elif lines:
            lines = []
    doc = " ".join(lines)
    return _first_sentence(doc) if doc.startswith("Package ") else None


_SOURCES: tuple[tuple[str, Callable[[str], str | None]], ...] = (
    ("README.md", _readme),
    ("readme.md", _readme),
    ("README.rst", _readme),
    ("README", _readme),
    ("package.json", _package_json),
    ("Cargo.toml", _manifest_description("package")),
    ("pyproject.toml", _manifest_description("project")),
    ("__init__.py", _python_docstring),
    ("src/lib.rs", _rust_doc),
    ("lib.rs", _rust_doc),
    ("mod.rs", _rust_doc),
    ("src/main.rs", _rust_doc),
    ("doc.go", _go_doc),
)
