"""What a workspace's file names alone say: languages, top-level layout and notable files.

Nothing here opens a file: these facts cost one pass over the listed paths.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DirectoryCount", "LanguageCount", "count_languages", "count_layout", "is_notable"]

_SUBDIRECTORIES_PER_DIRECTORY = 4


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


def count_languages(paths: list[str]) -> tuple[LanguageCount, ...]:
    counts: Counter[tuple[str, bool]] = Counter()
    for relative in paths:
        name = relative.rpartition("/")[2]
        language = _LANGUAGES.get(name)
        if language is None:
            dot = name.rfind(".")
            if dot > 0:
                language = _LANGUAGES.get(name[dot:].lower())
        if language is not None:
            counts[language] += 1
    return tuple(
        LanguageCount(language=language, files=count, is_code=is_code)
        for (language, is_code), count in sorted(
            counts.items(), key=lambda item: (-item[1], item[0][0])
        )
    )


def count_layout(paths: list[str]) -> tuple[DirectoryCount, ...]:
    top: Counter[str] = Counter()
    second: dict[str, Counter[str]] = {}
    for relative in paths:
        parts = relative.split("/", 2)
        if len(parts) == 1:
            continue
        top[parts[0]] += 1
        if len(parts) == 3:
            second.setdefault(parts[0], Counter())[parts[1]] += 1
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


_NOTABLE_AT_ROOT = re.compile(
    r"(?:README|CONTRIBUTING|LICEN[CS]E|COPYING|CHANGELOG|CHANGES|HISTORY|SECURITY|"
    r"CODE_OF_CONDUCT)(?:\.[A-Za-z]+)?|AGENTS\.md|CLAUDE\.md|CODEOWNERS|"
    r"pyproject\.toml|setup\.py|setup\.cfg|package\.json|Cargo\.toml|go\.mod|Makefile|justfile|"
    r"tox\.ini|noxfile\.py|\.pre-commit-config\.yaml|Dockerfile|docker-compose\.ya?ml|"
    r"compose\.ya?ml",
    re.IGNORECASE,
)
_NOTABLE_ELSEWHERE = re.compile(
    r"(?:\.github|docs)/(?:CONTRIBUTING(?:\.md|\.rst)?|CODEOWNERS|copilot-instructions\.md)|"
    r".*/(?:AGENTS|CLAUDE)\.md",
    re.IGNORECASE,
)


def is_notable(relative: str) -> bool:
    if "/" not in relative:
        return _NOTABLE_AT_ROOT.fullmatch(relative) is not None
    return _NOTABLE_ELSEWHERE.fullmatch(relative) is not None
