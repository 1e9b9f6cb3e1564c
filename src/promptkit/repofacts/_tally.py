"""Counts over the names of a listing: languages, the top-level layout, and files per folder.

A listing of 100,000 files holds a few thousand folders and a few dozen kinds of file, so each
path is looked at once, to count it under its (folder, kind), and every figure is summed from
those counts: what a scan costs per file is one pass over the names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["DirectoryCount", "LanguageCount", "NameTally"]

_SUBDIRECTORIES_PER_DIRECTORY = 4
# Folder counts go this many levels deep: a monorepo package's folders are under its `src/`
# (`packages/core/src/runner/`).
_FOLDER_DEPTH = 4


@dataclass(frozen=True, slots=True)
class LanguageCount:
    """How many selected files are in `language`; `is_code` separates code from docs/data."""

    language: str
    files: int
    is_code: bool


@dataclass(frozen=True, slots=True)
class DirectoryCount:
    """Files under a directory (`path` ends with "/"), with its largest subdirectories."""

    path: str
    files: int
    subdirectories: tuple[DirectoryCount, ...] = ()


# Extension (or exact file name) -> (language, is code).
_LANGUAGES: Mapping[str, tuple[str, bool]] = {
    **dict.fromkeys((".py", ".pyi", ".pyx"), ("Python", True)),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), ("JavaScript", True)),
    **dict.fromkeys((".ts", ".mts", ".cts", ".tsx"), ("TypeScript", True)),
    ".go": ("Go", True),
    ".rs": ("Rust", True),
    ".java": ("Java", True),
    **dict.fromkeys((".kt", ".kts"), ("Kotlin", True)),
    ".scala": ("Scala", True),
    ".rb": ("Ruby", True),
    ".php": ("PHP", True),
    **dict.fromkeys((".c", ".h"), ("C", True)),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"), ("C++", True)),
    ".cs": ("C#", True),
    ".swift": ("Swift", True),
    **dict.fromkeys((".m", ".mm"), ("Objective-C", True)),
    **dict.fromkeys((".sh", ".bash", ".zsh"), ("Shell", True)),
    ".ps1": ("PowerShell", True),
    ".lua": ("Lua", True),
    **dict.fromkeys((".pl", ".pm"), ("Perl", True)),
    ".r": ("R", True),
    ".jl": ("Julia", True),
    ".dart": ("Dart", True),
    **dict.fromkeys((".ex", ".exs"), ("Elixir", True)),
    **dict.fromkeys((".erl", ".hrl"), ("Erlang", True)),
    ".hs": ("Haskell", True),
    **dict.fromkeys((".ml", ".mli"), ("OCaml", True)),
    **dict.fromkeys((".clj", ".cljs"), ("Clojure", True)),
    ".zig": ("Zig", True),
    ".sql": ("SQL", True),
    ".vue": ("Vue", True),
    ".svelte": ("Svelte", True),
    **dict.fromkeys((".html", ".htm"), ("HTML", True)),
    **dict.fromkeys((".css", ".scss", ".sass", ".less"), ("CSS", True)),
    ".tf": ("Terraform", True),
    ".proto": ("Protocol Buffers", True),
    ".ipynb": ("Jupyter Notebook", True),
    "Dockerfile": ("Dockerfile", True),
    "Makefile": ("Makefile", True),
    **dict.fromkeys((".md", ".markdown"), ("Markdown", False)),
    ".rst": ("reStructuredText", False),
    ".txt": ("Text", False),
    ".toml": ("TOML", False),
    **dict.fromkeys((".yaml", ".yml"), ("YAML", False)),
    ".json": ("JSON", False),
    ".xml": ("XML", False),
    **dict.fromkeys((".ini", ".cfg"), ("INI", False)),
    ".csv": ("CSV", False),
}


def language_of(relative: str) -> tuple[str, bool] | None:
    """(language, is code) of the file at `relative`, from its name; None when unknown."""
    return _LANGUAGES.get(_kind(relative.rpartition("/")[2]))


def is_code(relative: str) -> bool:
    """Whether the file at `relative` is code (not docs or data), from its name."""
    language = language_of(relative)
    return language is not None and language[1]


def _kind(name: str) -> str:
    """The key of `name` in the language table: the name itself (`Makefile`) or its
    lower-cased extension; "" for neither (a dot file has no extension)."""
    if name in _LANGUAGES:
        return name
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


class NameTally:
    """How many of `paths` each folder holds, by kind of file; every count below is summed
    from these."""

    def __init__(self, paths: Sequence[str]) -> None:
        folders: list[str] = []
        kinds: list[str] = []
        for path in paths:
            folder, _, name = path.rpartition("/")
            folders.append(folder)
            kinds.append(_kind(name))
        self._counts: Counter[tuple[str, str]] = Counter(zip(folders, kinds, strict=True))

    @property
    def root_file_count(self) -> int:
        """Files at the top level."""
        return sum(count for (folder, _), count in self._counts.items() if not folder)

    def languages(self) -> tuple[LanguageCount, ...]:
        """Files per known language, most first (ties by name)."""
        counts: Counter[tuple[str, bool]] = Counter()
        for (_, kind), count in self._counts.items():
            language = _LANGUAGES.get(kind)
            if language is not None:
                counts[language] += count
        return tuple(
            LanguageCount(language=language, files=count, is_code=code)
            for (language, code), count in sorted(
                counts.items(), key=lambda item: (-item[1], item[0][0])
            )
        )

    def layout(self) -> tuple[DirectoryCount, ...]:
        """Top-level folders by files held, each with its largest subfolders."""
        top: Counter[str] = Counter()
        second: dict[str, Counter[str]] = {}
        for (folder, _), count in self._counts.items():
            if not folder:
                continue
            parts = folder.split("/", 2)
            top[parts[0]] += count
            if len(parts) > 1:
                second.setdefault(parts[0], Counter())[parts[1]] += count
        return tuple(
            DirectoryCount(
                path=f"{name}/",
                files=count,
                subdirectories=tuple(
                    DirectoryCount(path=f"{name}/{child}/", files=child_count)
                    for child, child_count in sorted(
                        second.get(name, Counter()).items(), key=lambda item: (-item[1], item[0])
                    )[:_SUBDIRECTORIES_PER_DIRECTORY]
                ),
            )
            for name, count in sorted(top.items(), key=lambda item: (-item[1], item[0]))
        )

    def files_per_folder(self, *, code_only: bool = False) -> Counter[str]:
        """Files under each folder ("a/", "a/b/", ..., "a/b/c/d/": four levels deep), counting
        only code with `code_only`."""
        counts: Counter[str] = Counter()
        for (folder, kind), count in self._counts.items():
            if not folder:
                continue
            if code_only:
                language = _LANGUAGES.get(kind)
                if language is None or not language[1]:
                    continue
            parts = folder.split("/", _FOLDER_DEPTH)[:_FOLDER_DEPTH]
            for depth in range(1, len(parts) + 1):
                counts["/".join(parts[:depth]) + "/"] += count
        return counts
