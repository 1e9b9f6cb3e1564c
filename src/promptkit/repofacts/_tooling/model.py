"""The values the tooling parsers produce, and the text helpers they share.

`ToolCommand` is a command a contributor runs; `Workflow` is a CI file's shell commands;
`FileReader` is the one seam through which a parser reads a further file of the workspace
(a workspace package's manifest, a Cargo alias file), so parsers never open files themselves.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "STANDING_ORDER",
    "CommandPurpose",
    "CommandStanding",
    "FileReader",
    "ToolCommand",
    "Workflow",
    "classify_command",
    "classify_name",
]

CommandPurpose = Literal["test", "lint", "format", "typecheck", "build", "other"]

# How canonical a command is, best first: CI runs it; contributor docs or agent files name it;
# it is a task runner's bare `test`/`lint`/`fmt`/`check` target; a file lists it; or it is a
# tool's usual invocation, inferred from that tool's configuration.
CommandStanding = Literal["ci", "documented", "bare-target", "listed", "default"]
STANDING_ORDER: Mapping[CommandStanding, int] = {
    "ci": 0,
    "documented": 1,
    "bare-target": 2,
    "listed": 3,
    "default": 4,
}


class FileReader(Protocol):
    """Reads the workspace file at relative `path`, at most `limit` bytes, as redacted text.

    Returns None when the file is absent, unreadable or outside the workspace.
    """

    def __call__(self, path: str, limit: int = ..., /) -> str | None: ...


# Purpose of a target, script or session, from the words of its name (`test:unit`, `type-check`).
_PURPOSE_BY_WORD: Mapping[str, CommandPurpose] = {
    **dict.fromkeys(
        (
            "test",
            "tests",
            "pytest",
            "unit",
            "unittest",
            "integration",
            "e2e",
            "coverage",
            "cov",
            "nextest",
            "vitest",
            "jest",
            "ctest",
        ),
        "test",
    ),
    **dict.fromkeys(
        (
            "lint",
            "linter",
            "linting",
            "ruff",
            "flake8",
            "pylint",
            "eslint",
            "clippy",
            "vet",
            "golangci",
            "oxlint",
        ),
        "lint",
    ),
    **dict.fromkeys(
        ("format", "fmt", "black", "prettier", "isort", "formatting", "gofumpt", "gofmt"),
        "format",
    ),
    **dict.fromkeys(
        ("typecheck", "types", "type", "typing", "mypy", "pyright", "tsc"), "typecheck"
    ),
    **dict.fromkeys(("build", "compile", "dist", "package", "wheel", "bundle"), "build"),
}
_NOT_A_CHECK = frozenset(
    {
        "fetch", "generate", "gen", "codegen", "regenerate", "update", "sync", "download",
        "upload", "publish", "release", "bump", "clean", "install", "prepare", "deploy",
        "serve", "start", "bootstrap", "setup", "init", "new", "add", "migrate",
    }
)  # fmt: skip
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def classify_name(name: str) -> CommandPurpose:
    """What a target or script called `name` is for; "other" when its name does not say.

    A name that starts with a verb that is no check (`fetch:spec-types`, `update-snapshots`,
    `generate-types`) does something else, whatever it does it to.
    """
    words = _NAME_WORD.findall(name)
    if words and words[0].lower() in _NOT_A_CHECK:
        return "other"
    for word in words:
        purpose = _PURPOSE_BY_WORD.get(word.lower())
        if purpose is not None:
            return purpose
    return "other"


def classify_command(command: str) -> CommandPurpose:
    """What a whole command line is for, from its words (`uv run ruff check .` is lint).

    A formatter's `--check` still formats, and `ruff format` formats although ruff lints.
    """
    # Paths and file names (`crates/ruff_python_ast/generate.py`) say where, not what for.
    purposes = [
        classify_name(word)
        for word in re.split(r"[\s=]+", command)
        if word and not word.startswith("-") and "/" not in word and "." not in word
    ]
    if re.search(r"(?:^|\s)ty\s+check\b", command):
        purposes.insert(0, "typecheck")
    named = [purpose for purpose in purposes if purpose != "other"]
    if "format" in named:
        return "format"
    if not named:
        # A script run by its path (`script/test`, `./scripts/lint.sh`) is named for its job.
        head = command.split(maxsplit=1)[0] if command.strip() else ""
        if "/" in head:
            return classify_name(head.rpartition("/")[2].partition(".")[0])
    return named[0] if named else "other"


@dataclass(frozen=True, slots=True)
class ToolCommand:
    """A command a contributor runs, what it is for, and the file that says so.

    `detail` is what the command runs when the file spells it out (a Makefile recipe's first
    line, a package.json script body). `standing` says how canonical it is (see
    `CommandStanding`); `aliases` are other spellings of the same command that were folded in.
    """

    purpose: CommandPurpose
    command: str
    source: str
    detail: str | None = None
    standing: CommandStanding = "listed"
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Workflow:
    """A CI configuration file: its name (when it has one) and the shell commands it runs."""

    path: str
    name: str | None
    commands: tuple[str, ...]


def one_line(text: str | None, limit: int = 120) -> str | None:
    """`text` on one line, at most `limit` characters, cut at a word boundary with an ellipsis."""
    if text is None:
        return None
    collapsed = " ".join(text.split())
    if len(collapsed) <= limit:
        return collapsed or None
    cut = collapsed[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def unquote(value: str) -> str:
    """`value` without one pair of matching surrounding quotes."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def load_toml(text: str) -> dict[str, Any] | None:
    """The TOML document in `text`, or None when it does not parse."""
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None


def ini_sections(text: str) -> dict[str, dict[str, str]] | None:
    """The sections of an INI file, or None when it does not parse."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return {name: dict(parser.items(name)) for name in parser.sections()}


def table(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """`document[key]` when it is a table, else an empty mapping."""
    value = document.get(key)
    return value if isinstance(value, dict) else {}
