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
from itertools import pairwise
from typing import Any, Literal, Protocol

from promptkit.repofacts._tooling.shell import tool_words

__all__ = [
    "STANDING_ORDER",
    "CommandPurpose",
    "CommandStanding",
    "FileReader",
    "ToolCommand",
    "Workflow",
    "classify_command",
    "classify_file_name",
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


# Purpose of a target, script, session or tool, from the words of its name (`test:unit`,
# `type-check`, `rspec`). A tool's name counts whole (`php-cs-fixer`, `clang-tidy`).
_TEST_WORDS = (
    "test", "tests", "pytest", "unit", "unittest", "integration", "e2e", "coverage", "cov",
    "nextest", "vitest", "jest", "mocha", "ctest", "doctest", "doctests", "rspec", "minitest",
    "phpunit", "pest", "paratest", "spec", "specs", "xctest", "verify",
)  # fmt: skip
_LINT_WORDS = (
    "lint", "linter", "linting", "ruff", "flake8", "pylint", "eslint", "clippy", "vet",
    "golangci", "golangci-lint", "oxlint", "rubocop", "standardrb", "credo", "phpstan", "phpcs",
    "swiftlint", "ktlint", "detekt", "analyze", "analyse", "clang-tidy", "checkstyle",
    "shellcheck", "staticcheck",
)  # fmt: skip
_FORMAT_WORDS = (
    "format", "fmt", "black", "prettier", "isort", "formatting", "gofumpt", "gofmt",
    "goimports", "rustfmt", "swiftformat", "scalafmt", "spotless", "pint", "ktfmt",
    "php-cs-fixer", "clang-format", "dprint", "oxfmt",
)  # fmt: skip
_TYPECHECK_WORDS = (
    "typecheck", "typing", "mypy", "pyright", "tsc", "dialyzer", "psalm", "sorbet", "srb",
)  # fmt: skip
_BUILD_WORDS = ("build", "compile", "dist", "package", "wheel", "bundle", "assemble")
_PURPOSE_BY_WORD: Mapping[str, CommandPurpose] = {
    **dict.fromkeys(_TEST_WORDS, "test"),
    **dict.fromkeys(_LINT_WORDS, "lint"),
    **dict.fromkeys(_FORMAT_WORDS, "format"),
    **dict.fromkeys(_TYPECHECK_WORDS, "typecheck"),
    **dict.fromkeys(_BUILD_WORDS, "build"),
}
_NOT_A_CHECK = frozenset(
    {
        "fetch", "generate", "gen", "codegen", "regenerate", "update", "sync", "download",
        "upload", "publish", "release", "bump", "clean", "install", "prepare", "deploy",
        "serve", "start", "bootstrap", "setup", "init", "new", "add", "migrate",
    }
)  # fmt: skip
# Words that lead into the check a name is about (`check-types`, `run_tests`, `ci-lint`).
_LEAD_WORDS = frozenset({"check", "run", "ci", "do", "verify", "all"})
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def classify_name(name: str) -> CommandPurpose:
    """What a target or script called `name` is for; "other" when its name does not say.

    A name that starts with a verb that is no check (`fetch:spec-types`, `update-snapshots`,
    `generate-types`) does something else, whatever it does it to. "Type" says type checks
    only beside "check" (`type-check`, `check:types`); alone it may name what is generated.
    """
    lowered = name.lower()
    whole = _PURPOSE_BY_WORD.get(lowered)
    if whole is not None:
        return whole
    words = [word.lower() for word in _NAME_WORD.findall(name)]
    if words and words[0] in _NOT_A_CHECK:
        return "other"
    pairs = set(pairwise(words))
    if pairs & {("check", "types"), ("check", "type"), ("type", "check"), ("types", "check")}:
        return "typecheck"
    for word in words:
        purpose = _PURPOSE_BY_WORD.get(word)
        if purpose is not None:
            return purpose
    return "other"


def classify_file_name(name: str) -> CommandPurpose:
    """What a script whose file is called `name` is for, from the start of its name only
    (`test_imports.py`, `check-format.sh`): a word further in says what the script works on
    (`update_type_stubs.py`, `gen_lint_rules.sh`), not what it does."""
    stem = name.rpartition("/")[2].partition(".")[0]
    words = [word.lower() for word in _NAME_WORD.findall(stem)]
    if not words:
        return "other"
    if words[0] in _LEAD_WORDS and len(words) > 1:
        words = words[1:]
        if words[0] in ("types", "type"):
            return "typecheck"
    return _PURPOSE_BY_WORD.get(stem.lower()) or _PURPOSE_BY_WORD.get(words[0], "other")


def classify_command(command: str) -> CommandPurpose:
    """What a whole command line is for, from the tool it runs and the words it gives it
    (`uv run ruff check .` is lint, `bundle exec rspec` test, `zig build test` test).

    The tool is found past wrappers and runners (see `shell.tool_words`); a tool whose name
    says its job (`rspec`, `phpstan`) is that job, else its arguments' words say it. A script
    run by its path is named for its job by the start of its file name. A formatter's
    `--check` still formats, and `ruff format` formats although ruff lints.
    """
    words = tool_words(command)
    if not words:
        return "other"
    tool, arguments = words[0], words[1:]
    # Paths and file names (`crates/ruff_python_ast/generate.py`) say where, not what for.
    named_words = [
        part
        for word in arguments
        if "/" not in word and "." not in word
        for part in re.split(r"=", word)
        if part
    ]
    purposes = [classify_name(word) for word in named_words]
    if "/" in tool:
        purposes.insert(0, classify_file_name(tool))
    else:
        purposes.insert(0, _PURPOSE_BY_WORD.get(tool.lower(), "other"))
    if tool == "ty" and arguments[:1] == ["check"]:
        purposes.insert(0, "typecheck")
    named = [purpose for purpose in purposes if purpose != "other"]
    if "format" in named:
        return "format"
    return named[0] if named else "other"


@dataclass(frozen=True, slots=True)
class ToolCommand:
    """A command a contributor runs, what it is for, and the file that says so.

    `detail` is what the command runs when the file spells it out (a Makefile recipe's first
    line, a package.json script body). `standing` says how canonical it is (see
    `CommandStanding`); `aliases` are other spellings of the same command that were folded in.
    `is_conventional` says it runs what its tool's convention runs for its purpose (`cargo
    test`, `mix format`), whichever options it gives.
    """

    purpose: CommandPurpose
    command: str
    source: str
    detail: str | None = None
    standing: CommandStanding = "listed"
    aliases: tuple[str, ...] = ()
    is_conventional: bool = False


@dataclass(frozen=True, slots=True)
class Workflow:
    """A CI configuration file: its name (when it has one), the shell commands it runs, and
    those among them a contributor could type as they stand (`runnable`: no CI variables,
    setup or plumbing; filled in by the scan, which knows the repository's files).

    `checks_changes` says it runs on pushes, pull requests or merge queues (or is called by a
    workflow that does): false for a workflow that only runs on a schedule, by hand, on
    issues or on a release, whose commands are no check of a change."""

    path: str
    name: str | None
    commands: tuple[str, ...]
    runnable: tuple[str, ...] = ()
    checks_changes: bool = True


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
