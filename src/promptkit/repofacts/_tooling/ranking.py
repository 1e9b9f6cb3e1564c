"""Ranking the commands of one scan: which is canonical, which are spellings of another.

A command's standing (see `CommandStanding`) is the best evidence for it: CI runs it,
contributor docs or agent files name it, it is a runner's bare `test`/`lint`/`fmt`/`check`
target, a file lists it, or it is only a tool's usual invocation. Commands are compared as
normalised words (`pnpm run test` is `pnpm test`; flags and a leading `cd dir &&` are ignored),
and a command whose recipe is another command's words absorbs it as an alias, so `make test`
and the `uv run pytest` it runs take one line.

Which toolchain is the project's own is decided by evidence, not by which build files exist:
among commands of the same standing and purpose, the program CI runs most comes first (a Zig
project's `zig build test` before the `cmake --build` of the CMakeLists.txt it ships for
others), and an inferred command for a purpose that CI or the docs already cover with another
program is dropped when nothing runs its own program. `ranked_tools` orders the Tools line the
same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from promptkit.repofacts._tooling.model import (
    STANDING_ORDER,
    CommandStanding,
    ToolCommand,
    Workflow,
)
from promptkit.repofacts._tooling.shell import head_of, tool_words

__all__ = ["command_words", "program_of", "rank_commands", "ranked_tools", "runs", "tool_key"]

_PURPOSE_ORDER = {"test": 0, "lint": 1, "format": 2, "typecheck": 3, "build": 4, "other": 5}
_BARE_TARGETS = frozenset(
    {"test", "tests", "lint", "fmt", "format", "check", "typecheck", "build", "ci"}
)
_RUNNERS = frozenset({"make", "just", "task", "pnpm", "npm", "yarn", "bun"})
_SEGMENT_BREAK = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_CD_PREFIX = re.compile(r"^cd\s+\S+\s*&&\s*")


def command_words(command: str) -> tuple[str, ...]:
    """The words that identify `command`: no flags, no `cd dir &&`, no `run` after pnpm/yarn,
    no `./` before a script's path."""
    command = _CD_PREFIX.sub("", command.strip())
    # `VAR=value` before a command sets its environment, after `make` a variable: neither
    # changes which command runs.
    words = [
        word.strip("'\"")
        for word in command.split()
        if not word.startswith("-") and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", word) is None
    ]
    if words:
        words[0] = words[0].removeprefix("./")  # `./script/test` is `script/test`
    if len(words) >= 3 and words[0] in ("pnpm", "yarn") and words[1] == "run":
        del words[1]
    if len(words) >= 2 and words[0] == "npm" and words[1] == "run" and words[2:3] == ["test"]:
        del words[1]
    return tuple(words)


def runs(line: str, words: tuple[str, ...], flags: frozenset[str] = frozenset()) -> bool:
    """Whether the shell `line` runs the command whose words are `words` (as one segment),
    with at least the options `flags` (see `command_flags`)."""
    if not words:
        return False
    for segment in _SEGMENT_BREAK.split(line):
        if command_words(segment)[: len(words)] == words and flags <= command_flags(segment):
            return True
    return False


def command_flags(command: str) -> frozenset[str]:
    """The options `command` gives, by name (`--fix`, `-D`; a value after `=` left off): a
    line that runs `cargo clippy --fix` does something else than one that runs `cargo clippy`."""
    return frozenset(
        word.split("=", 1)[0]
        for word in _CD_PREFIX.sub("", command.strip()).split()
        if word.startswith("-") and word != "--"
    )


def rank_commands(
    commands: Sequence[ToolCommand],
    workflows: Sequence[Workflow],
    documented: Iterable[str],
    programs: Mapping[str, int] | None = None,
    build_owner: str | None = None,
) -> tuple[ToolCommand, ...]:
    """`commands` with their standing decided, aliases folded in, best first.

    `documented` are the command lines contributor docs and agent files name; `programs`
    counts the CI lines that run each program (see `ci.ci_programs`); `build_owner` is the
    program that builds everything when the root says so (`bazel` for a Bazel workspace).
    """
    ci_counts: Mapping[str, int] = programs if programs is not None else Counter()
    ci_lines = [line for workflow in workflows for line in workflow.commands]
    doc_lines = list(documented)
    mentions = " ".join([*ci_lines, *(command.detail or "" for command in commands)])
    unique = _unique(_superseded(commands, mentions))
    folded = _without_covered_defaults(_fold_aliases(unique))
    ranked = [
        replace(command, standing=_standing(command, ci_lines, doc_lines)) for command in folded
    ]
    ranked = _without_unevidenced_defaults(ranked, ci_counts, doc_lines, build_owner)
    conventions = {
        (command.purpose, tool_key(command.command))
        for command in commands
        if command.standing == "default"
    }
    ranked = [
        replace(command, is_conventional=True)
        if (command.purpose, tool_key(command.command)) in conventions
        else command
        for command in ranked
    ]

    def order(item: tuple[int, ToolCommand]) -> tuple[int, int, int, int, int, str, int]:
        index, command = item
        depth = int(command.command.startswith("cd "))
        return (
            STANDING_ORDER[command.standing],
            depth,
            _PURPOSE_ORDER[command.purpose],
            -ci_counts.get(program_of(command.command), 0),
            0 if _is_runner_source(command.source) else 1,
            command.source,
            index,
        )

    return tuple(command for _, command in sorted(enumerate(ranked), key=order))


def program_of(command: str) -> str:
    """The program `command` starts, past `cd dir &&` and environment wrappers."""
    return head_of(_CD_PREFIX.sub("", command.strip()))


def tool_key(command: str) -> tuple[str, ...]:
    """What tells one tool invocation from another, whatever its options and paths: the tool
    past its runner, and the subcommand (and a build tool's step: `zig build test`) when the
    tool's own name does not already say what it does (`pytest -n auto` is `pytest`)."""
    words = tool_words(command)
    if not words:
        return ()
    tool = words[0]
    if tool in _SELF_NAMED:
        return (tool,)
    key = [tool]
    for word in words[1:]:
        if "/" in word or "." in word:
            continue  # a path or a file says where, not which command
        key.append(word)
        if word not in _RUNS_ANOTHER:
            break
    return tuple(key)


# A tool whose name says what it does: its arguments are paths and options.
_SELF_NAMED = frozenset(
    {
        "pytest", "mypy", "pyright", "rspec", "phpunit", "pest", "ctest", "jest", "vitest",
        "tsc", "eslint", "prettier", "rubocop", "black", "isort", "flake8", "pylint",
        "swiftlint", "swiftformat", "ktlint", "detekt", "shellcheck", "clang-format",
        "clang-tidy", "gofmt", "gofumpt", "psalm", "phpcs", "standardrb",
    }
)  # fmt: skip
# Words after which the next one says what runs (`npm run lint`, `zig build test`).
_RUNS_ANOTHER = frozenset({"run", "exec", "x", "task", "build", "flake", "tool", "-m"})


def ranked_tools(
    tools: Iterable[str],
    depths: Mapping[str, int],
    programs: Mapping[str, int],
    ci_systems: Iterable[str],
) -> tuple[str, ...]:
    """The Tools line's order: the tools CI runs most first, then those the top-level build
    files configure, then the rest by name; CI systems last."""
    uses: Counter[str] = Counter()
    for program, count in programs.items():
        uses[_tool_name(program)] += count

    def order(tool: str) -> tuple[int, int, str]:
        return (-uses.get(tool, 0), depths.get(tool, 0), tool)

    return (*sorted(set(tools), key=order), *sorted(set(ci_systems)))


# Programs whose tool goes by another name (`./gradlew` runs Gradle, `bundle` is Bundler).
_TOOL_NAMES = {"gradlew": "gradle", "mvnw": "maven", "mvn": "maven", "bundle": "bundler"}


def _tool_name(program: str) -> str:
    name = program.rpartition("/")[2]
    return _TOOL_NAMES.get(name, name)


def _without_unevidenced_defaults(
    commands: list[ToolCommand],
    ci_counts: Mapping[str, int],
    doc_lines: list[str],
    build_owner: str | None = None,
) -> list[ToolCommand]:
    """Drop an inferred command for a purpose CI or the docs already cover with another
    program, when nothing runs its own program (no CI line, doc or written command): a
    CMakeLists.txt shipped beside a Zig build does not make `ctest` this project's test.
    Where one program builds everything (a Bazel workspace builds and tests its Go code with
    `rules_go`), another program's inferred command needs that evidence for any purpose."""
    used = {program_of(line) for line in doc_lines} | {
        program_of(spelling)
        for command in commands
        if command.standing != "default"
        for spelling in (command.command, command.detail or "")
    }
    covered = {command.purpose for command in commands if command.standing in ("ci", "documented")}
    return [
        command
        for command in commands
        if command.standing != "default"
        or (command.purpose not in covered and build_owner in (None, program_of(command.command)))
        or ci_counts.get(program_of(command.command), 0) > 0
        or program_of(command.command) in used
    ]


def _superseded(commands: Sequence[ToolCommand], mentions: str) -> list[ToolCommand]:
    """Defaults replaced by what the project really runs (prek for pre-commit, gofumpt)."""
    uses_prek = re.search(r"\bprek\b", mentions) is not None
    uses_gofumpt = "gofumpt" in mentions
    result: list[ToolCommand] = []
    for command in commands:
        if uses_prek and command.command.startswith("pre-commit run"):
            command = replace(command, command="prek" + command.command.removeprefix("pre-commit"))
        if uses_gofumpt and command.standing == "default" and command.command.startswith("gofmt"):
            continue
        result.append(command)
    return result


def _unique(commands: Sequence[ToolCommand]) -> list[ToolCommand]:
    """One command per spelling; a command a file writes out wins over an inferred one."""
    best: dict[str, ToolCommand] = {}
    order: list[str] = []
    for command in commands:
        key = " ".join(command_words(command.command)) or command.command
        if command.command.startswith("cd "):
            key = command.command.split("&&", 1)[0] + "&& " + key
        held = best.get(key)
        if held is None:
            best[key] = command
            order.append(key)
        elif STANDING_ORDER[command.standing] < STANDING_ORDER[held.standing]:
            # Keep the file that defines it (and what it runs); take the better standing.
            is_defined = held.detail is not None or held.standing == "listed"
            kept = replace(held, standing=command.standing, detail=held.detail or command.detail)
            best[key] = kept if is_defined else command
    return [best[key] for key in order]


def _fold_aliases(commands: list[ToolCommand]) -> list[ToolCommand]:
    """Fold each command that another's recipe runs, spelled exactly so, into it as an alias.

    Only a tool's invocation is folded (`make test` takes in the `uv run pytest` it runs): a
    target with a recipe of its own (`task test`, `deno task lint`) is what a contributor
    types, whichever hook or aggregate target also runs it."""
    by_spelling = {" ".join(command.command.split()): command for command in commands}
    absorbed: dict[str, list[str]] = {}
    folded_away: set[int] = set()
    for wrapper in commands:
        if not wrapper.detail or wrapper.command.startswith("cd "):
            continue
        for segment in _SEGMENT_BREAK.split(wrapper.detail):
            inner = by_spelling.get(" ".join(segment.split()))
            if inner is None or inner is wrapper or id(inner) in folded_away:
                continue
            if inner.detail is not None:
                continue
            if inner.command.startswith("cd ") or id(wrapper) in folded_away:
                continue
            folded_away.add(id(inner))
            absorbed.setdefault(wrapper.command, []).append(inner.command)
            break
    result: list[ToolCommand] = []
    for command in commands:
        if id(command) in folded_away:
            continue
        aliases = tuple(absorbed.get(command.command, ()))
        result.append(replace(command, aliases=aliases) if aliases else command)
    return result


# Tools whose subcommand is the tool that runs (`cargo clippy` lints, `cargo xtask` may not).
_SUBCOMMAND_TOOLS = frozenset(
    {
        "cargo", "go", "npm", "pnpm", "yarn", "bun", "make", "just", "task", "zig", "dotnet",
        "mix", "flutter", "dart", "swift", "deno", "bazel", "meson", "nix", "sbt", "rake",
        "composer", "gradle", "./gradlew", "mvn", "./mvnw", "melos",
    }
)  # fmt: skip


def _tool_word(command: str) -> str:
    """The tool a command runs, past any runner prefix (`uv run mypy src` runs mypy)."""
    words = tool_words(command)
    if words and words[0] in _SUBCOMMAND_TOOLS:
        return " ".join(words[:2])
    return words[0] if words else ""


def _without_covered_defaults(commands: list[ToolCommand]) -> list[ToolCommand]:
    """Drop an inferred command when a written one runs the same tool for the same purpose."""
    written = {
        (command.purpose, _tool_word(spelling))
        for command in commands
        if command.standing != "default"
        for spelling in (command.command, *command.aliases, command.detail or "")
    }
    return [
        command
        for command in commands
        if command.standing != "default"
        or (command.purpose, _tool_word(command.command)) not in written
    ]


def _standing(command: ToolCommand, ci_lines: list[str], doc_lines: list[str]) -> CommandStanding:
    # A CI or doc line stands for the command only if it gives the command's options too: CI
    # running `cargo clippy -- -D warnings` does not make `cargo clippy --fix` canonical.
    spellings = [
        (command_words(spelling), command_flags(spelling))
        for spelling in (command.command, *command.aliases)
    ]
    directory = _CD_PREFIX.match(command.command)
    if directory is not None:
        # A package's `pnpm test` is not what a root-level `pnpm test` line runs.
        folder = directory.group(0).split()[1]
        ci_lines = [line for line in ci_lines if folder in line]
        doc_lines = [line for line in doc_lines if folder in line]
    if any(runs(line, words, flags) for line in ci_lines for words, flags in spellings):
        return "ci"
    if command.standing == "documented" or any(
        runs(line, words, flags) for line in doc_lines for words, flags in spellings
    ):
        return "documented"
    words = spellings[0][0]
    is_bare = len(words) == 2 and words[0] in _RUNNERS and words[1] in _BARE_TARGETS
    if is_bare and command.standing == "listed":
        return "bare-target"
    return command.standing


def _is_runner_source(source: str) -> bool:
    name = source.rpartition("/")[2]
    return name.lower() in ("makefile", "gnumakefile", "justfile", ".justfile", "package.json") or (
        name.lower().startswith("taskfile")
    )
