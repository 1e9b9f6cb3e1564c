"""Ranking the commands of one scan: which is canonical, which are spellings of another.

A command's standing (see `CommandStanding`) is the best evidence for it: CI runs it,
contributor docs or agent files name it, it is a runner's bare `test`/`lint`/`fmt`/`check`
target, a file lists it, or it is only a tool's usual invocation. Commands are compared as
normalised words (`pnpm run test` is `pnpm test`; flags and a leading `cd dir &&` are ignored),
and a command whose recipe is another command's words absorbs it as an alias, so `make test`
and the `uv run pytest` it runs take one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from promptkit.repofacts._tooling.model import (
    STANDING_ORDER,
    CommandStanding,
    ToolCommand,
    Workflow,
)

__all__ = ["command_words", "rank_commands", "runs"]

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
) -> tuple[ToolCommand, ...]:
    """`commands` with their standing decided, aliases folded in, best first.

    `documented` are the command lines contributor docs and agent files name.
    """
    ci_lines = [line for workflow in workflows for line in workflow.commands]
    doc_lines = list(documented)
    mentions = " ".join([*ci_lines, *(command.detail or "" for command in commands)])
    unique = _unique(_superseded(commands, mentions))
    folded = _without_covered_defaults(_fold_aliases(unique))
    ranked = [
        replace(command, standing=_standing(command, ci_lines, doc_lines)) for command in folded
    ]

    def order(item: tuple[int, ToolCommand]) -> tuple[int, int, int, int, str, int]:
        index, command = item
        depth = int(command.command.startswith("cd "))
        return (
            STANDING_ORDER[command.standing],
            depth,
            _PURPOSE_ORDER[command.purpose],
            0 if _is_runner_source(command.source) else 1,
            command.source,
            index,
        )

    return tuple(command for _, command in sorted(enumerate(ranked), key=order))


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
    """Fold each command that another's recipe runs, spelled exactly so, into it as an alias."""
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


_RUNNER_PREFIXES = (
    ("uv", "run"),
    ("poetry", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("pipenv", "run"),
    ("pnpm", "exec"),
    ("npx",),
    ("bunx",),
    ("uvx",),
    ("python", "-m"),
)


# Tools whose subcommand is the tool that runs (`cargo clippy` lints, `cargo xtask` may not).
_SUBCOMMAND_TOOLS = frozenset({"cargo", "go", "npm", "pnpm", "yarn", "bun", "make", "just", "task"})


def _tool_word(command: str) -> str:
    """The tool a command runs, past any runner prefix (`uv run mypy src` runs mypy)."""
    words = _CD_PREFIX.sub("", command).split()
    for prefix in _RUNNER_PREFIXES:
        if tuple(words[: len(prefix)]) == prefix:
            words = words[len(prefix) :]
            break
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
