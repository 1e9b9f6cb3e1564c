"""`render_static_digest`: `WorkspaceFacts` as bounded, reproducible markdown.

The digest has five subsections: Commands (the canonical ones first, then per-package
commands and capped catalogues), Layout (files, languages, what each notable folder is for,
contributor docs and key configuration), Tooling, Workflows and Watch-outs. Its body depends
only on the facts: everything is sorted, and nothing time- or machine-dependent (timestamps,
absolute paths, head_sha) goes in, so the same tree renders byte for byte the same in any
process.

The digest goes into prompts, so it is held to a stricter standard than logs: random-looking
words are concealed (see `digest_text`), and a line in which `find_secrets` still sees a
credential is never rendered. The Layout part's lines come from `digest_layout`.

The token budget is estimated at four UTF-8 bytes per token (no tokenizer dependency): a
tokenizer spends at least a token on every four bytes of ordinary text, and counting bytes,
not characters, keeps text with `…` or other multi-byte characters within it too. Each part
has a share of it that it keeps first (`_SHARES`); what is left goes to the remaining lines by
priority. Lines are kept or dropped whole, so a smaller budget shows a subset of the lines of a
larger one, and commands are never pushed out by watch-outs or workflows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from promptkit.errors import ArgumentValueError
from promptkit.repofacts._digest_layout import layout_lines
from promptkit.repofacts._digest_text import DigestLine, code_span, plain
from promptkit.repofacts._guidance import WatchOut, is_agent_file
from promptkit.repofacts._scan import WorkspaceFacts
from promptkit.repofacts._tooling import CommandPurpose, ToolCommand, classify_command
from promptkit.repofacts._tooling.model import STANDING_ORDER
from promptkit.repofacts._tooling.ranking import program_of, tool_key
from promptkit.secrets import find_secrets

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "render_static_digest"]

CHARS_PER_TOKEN = 4

_SECTIONS = ("Commands", "Layout", "Tooling", "Workflows", "Watch-outs")
# The share of the budget each part keeps before the rest is shared out by priority.
# Workflows repeat CI commands the Commands part did not take as canonical (a contributor
# seldom types them) and name CI files: measured on real repositories, the part that adds
# least to what maintainers tell agents, so it keeps the smallest share.
_SHARES: Mapping[str, float] = {
    "Commands": 0.35,
    "Layout": 0.47,
    "Tooling": 0.06,
    "Workflows": 0.04,
    "Watch-outs": 0.08,
}
_PURPOSE_LABELS: dict[CommandPurpose, str] = {
    "test": "Test",
    "lint": "Lint",
    "format": "Format",
    "typecheck": "Type-check",
    "build": "Build",
    "other": "Run",
}
_PURPOSE_ORDER: tuple[CommandPurpose, ...] = tuple(_PURPOSE_LABELS)
_STANDING_NOTES = {"ci": "CI runs it", "documented": "documented"}
_MAX_CANONICAL_PER_PURPOSE = 3
_MAX_CANONICAL = 12
_MAX_RECIPE = 60
_MAX_CATALOGUE = 8
_MAX_CATALOGUE_LINES = 5
_MAX_PACKAGE_DIRECTORIES = 3
_MAX_PACKAGE_COMMANDS = 6
_MAX_WORKFLOWS = 8
_MAX_WORKFLOW_COMMANDS = 3
_MAX_WATCH_OUTS = 12
_CD_PREFIX = re.compile(r"^cd (\S+) && (.+)$")
# A detail that describes what a command covers (`hooks: ruff, mypy`, `envs: py312, lint`).
_DESCRIPTION = re.compile(r"^[a-z]+: ")


def estimate_tokens(text: str) -> int:
    """Approximate token count of `text`: one token per four UTF-8 bytes, rounded up."""
    return -(-_size(text) // CHARS_PER_TOKEN)


def _size(text: str) -> int:
    """`text`'s length in UTF-8 bytes, the unit the budget is kept in."""
    return len(text.encode("utf-8"))


def render_static_digest(facts: WorkspaceFacts, *, max_tokens: int = 2000) -> str:
    """Markdown describing the workspace, at most `max_tokens` estimated tokens long.

    Lines are kept whole, each part first within its own share of the budget, then by
    priority; a budget too small for any line gives an empty string. Raises ValueError for a
    negative budget.
    """
    if max_tokens < 0:
        raise ArgumentValueError(f"max_tokens must be zero or more, got {max_tokens}")
    commands, shown = _commands(facts)
    lines = [
        line
        for line in (
            *commands,
            *layout_lines(facts),
            *_tooling(facts),
            *_workflows(facts, shown),
            *_watch_outs(facts),
        )
        if not find_secrets(line.text)
    ]
    kept = _fit(lines, max_tokens * CHARS_PER_TOKEN)
    blocks: list[str] = []
    for section in _SECTIONS:
        body = [
            line.text
            for index, line in enumerate(lines)
            if index in kept and line.section == section
        ]
        if body:
            blocks.append("\n".join([f"### {section}", *body]))
    return "\n\n".join(blocks)


class _Budget:
    """The assembled digest's length in UTF-8 bytes, tracked per section as lines are kept."""

    def __init__(self) -> None:
        self.chars = dict.fromkeys(_SECTIONS, 0)
        self.lines = dict.fromkeys(_SECTIONS, 0)

    def length(self) -> int:
        present = [section for section in _SECTIONS if self.lines[section]]
        headings = sum(_size(f"### {section}") + 1 + self.chars[section] for section in present)
        # Each section's last line has no newline; sections are separated by a blank line.
        return headings - len(present) + 2 * max(len(present) - 1, 0)

    def with_line(self, line: DigestLine) -> int:
        self.keep(line)
        length = self.length()
        self.drop(line)
        return length

    def keep(self, line: DigestLine) -> None:
        self.chars[line.section] += _size(line.text) + 1
        self.lines[line.section] += 1

    def drop(self, line: DigestLine) -> None:
        self.chars[line.section] -= _size(line.text) + 1
        self.lines[line.section] -= 1


def _fit(lines: list[DigestLine], budget: int) -> set[int]:
    """Indices of the lines to keep so that the assembled digest is at most `budget` bytes.

    First each section keeps its best lines within its share; then the remaining lines are
    taken by priority while they fit. Among equal priorities the earlier line goes first.
    """
    by_priority = sorted(range(len(lines)), key=lambda index: (-lines[index].priority, index))
    state = _Budget()
    kept: set[int] = set()
    for section in _SECTIONS:
        share = int(budget * _SHARES[section])
        used = 0
        for index in by_priority:
            line = lines[index]
            size = _size(line.text) + 1
            if not line.in_share or line.section != section or used + size > share:
                continue
            if state.with_line(line) <= budget:
                state.keep(line)
                kept.add(index)
                used += size
    for index in by_priority:
        if index not in kept and state.with_line(lines[index]) <= budget:
            state.keep(lines[index])
            kept.add(index)
    return kept


# -- commands ----------------------------------------------------------------------------------


def _commands(facts: WorkspaceFacts) -> tuple[list[DigestLine], set[str]]:
    """Canonical commands, then per-package commands, then catalogues per source file.

    Also returns the command spellings shown, so workflows do not repeat them.
    """
    lines: list[DigestLine] = []
    shown: set[str] = set()
    per_purpose: dict[CommandPurpose, int] = {}
    rest: list[ToolCommand] = []
    per_package: dict[str, list[str]] = {}
    keys: set[tuple[CommandPurpose, tuple[str, ...]]] = set()
    ci_keys = Counter(tool_key(line) for workflow in facts.workflows for line in workflow.commands)
    for command in _each_program_first(_shortest_spellings_first(facts.commands), ci_keys):
        inner = _CD_PREFIX.match(command.command)
        if inner is not None and command.standing not in ("ci", "documented"):
            per_package.setdefault(inner.group(2), []).append(inner.group(1))
            continue
        # Another spelling of a command shown already (`pytest -n auto`, `pytest -m slow`)
        # would take the place of a different one.
        key = (command.purpose, tool_key(command.command))
        if key in keys and command.standing in ("ci", "documented"):
            continue
        keys.add(key)
        count = per_purpose.get(command.purpose, 0)
        is_canonical = command.standing in ("ci", "documented", "bare-target") or count == 0
        if command.purpose == "other" and command.standing not in ("ci", "documented"):
            is_canonical = False
        too_many = count >= _MAX_CANONICAL_PER_PURPOSE or len(lines) >= _MAX_CANONICAL
        if not is_canonical or too_many:
            rest.append(command)
            continue
        per_purpose[command.purpose] = count + 1
        priority = 99 - len(lines) * 0.5
        lines.append(DigestLine("Commands", priority, _command_line(command)))
        shown.update((command.command, *command.aliases))
    lines.extend(_package_lines(per_package))
    by_source: dict[str, list[ToolCommand]] = {}
    workflow_files = {workflow.path for workflow in facts.workflows}
    for command in rest:
        if command.source not in workflow_files:
            by_source.setdefault(command.source, []).append(command)
    # A long catalogue is cut into lines, so the budget can show its head and drop its tail:
    # ordered as the canonical lines are (a bare `just lint` first, checks before the rest),
    # and of each kind the broader targets first (`test:e2e` before `test:e2e:chrome`).
    for rank, (source, listed) in enumerate(sorted(by_source.items())):
        commands = sorted(listed, key=_catalogue_order)
        shown_count = min(len(commands), _MAX_CATALOGUE * _MAX_CATALOGUE_LINES)
        for start in range(0, shown_count, _MAX_CATALOGUE):
            chunk = commands[start : start + _MAX_CATALOGUE]
            names = ", ".join(code_span(command.command) for command in chunk)
            more = len(commands) - start - len(chunk)
            tail = f" and {more} more" if more > 0 else ""
            label = f"Also in {code_span(source)}" if start == 0 else f"More in {code_span(source)}"
            # The root's own files first: a package's catalogue matters less than the root's.
            base = 52 if "/" not in source.rstrip("/") else 40
            priority = base - min(rank, 30) * 0.5 - 12 * (start // _MAX_CATALOGUE)
            lines.append(DigestLine("Commands", priority, f"- {label}: {names}{tail}"))
    return lines, shown


def _catalogue_order(command: ToolCommand) -> tuple[int, int, int]:
    """Standing, then purpose, then how narrow the target's name is."""
    purpose = _PURPOSE_ORDER.index(command.purpose)
    return STANDING_ORDER[command.standing], purpose, _narrowness(command)


def _narrowness(command: ToolCommand) -> int:
    """How many namespaces a target's name is nested in (`test:e2e:chrome` is in two): a
    nested target runs a case of a broader one."""
    words = command.command.split()
    return words[-1].count(":") if words else 0


def _shortest_spellings_first(commands: tuple[ToolCommand, ...]) -> list[ToolCommand]:
    """`commands` in their order, but where spellings of one tool invocation with the same
    standing and purpose follow each other, the shortest first (the plainest to type)."""
    ordered = list(commands)
    groups: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}
    for index, command in enumerate(ordered):
        key = (command.standing, command.purpose, tool_key(command.command))
        groups.setdefault(key, []).append(index)
    result = list(ordered)
    for indices in groups.values():
        members = sorted((ordered[i] for i in indices), key=lambda c: len(c.command))
        for index, member in zip(indices, members, strict=True):
            result[index] = member
    return result


def _each_program_first(
    commands: list[ToolCommand], ci_keys: Counter[tuple[str, ...]]
) -> list[ToolCommand]:
    """`commands` where, among those of one standing and purpose, each program's first comes
    before any program's second: a monorepo's `mix test` is not crowded out by three spellings
    of `pnpm test`. A program's commands go with its conventional one first (`cargo test`
    before a project's `cargo coverage` alias), then by how often CI runs them, then plainest
    first: fewer words say the command, more say a case, and so does a nested name."""
    groups: dict[tuple[str, str], int] = {}
    members: dict[tuple[str, str, str], list[int]] = {}
    for index, command in enumerate(commands):
        groups.setdefault((command.standing, command.purpose), len(groups))
        program = (command.standing, command.purpose, program_of(command.command))
        members.setdefault(program, []).append(index)
    keys: list[tuple[int, int, int, int]] = []
    for (standing, purpose, _), indices in members.items():
        group = groups[(standing, purpose)]
        ordered = sorted(
            indices,
            key=lambda i: (
                not commands[i].is_conventional,
                -ci_keys.get(tool_key(commands[i].command), 0),
                len(commands[i].command.split()),
                _narrowness(commands[i]),
                i,
            ),
        )
        keys.extend((group, rank, indices[0], index) for rank, index in enumerate(ordered))
    return [commands[key[3]] for key in sorted(keys)]


def _package_lines(per_package: dict[str, list[str]]) -> list[DigestLine]:
    """Workspace packages' scripts: those run in the same packages share a line; a check in
    many packages first, a one-package `start:demo` script last; the rest named, then counted."""
    by_places: dict[tuple[str, ...], list[str]] = {}
    for spelling, directories in per_package.items():
        by_places.setdefault(tuple(sorted(directories)), []).append(spelling)

    def is_other(spelling: str) -> bool:
        return classify_command(spelling) == "other"

    def order(spelling: str) -> tuple[int, str]:
        return _PURPOSE_ORDER.index(classify_command(spelling)), spelling

    groups = sorted(
        (sorted(spellings, key=order), places) for places, spellings in by_places.items()
    )
    groups.sort(key=lambda group: (all(map(is_other, group[0])), -len(group[1])))
    lines: list[DigestLine] = []
    for rank, (spellings, places) in enumerate(groups[:_MAX_PACKAGE_COMMANDS]):
        listed = ", ".join(code_span(d + "/") for d in places[:_MAX_PACKAGE_DIRECTORIES])
        more = len(places) - _MAX_PACKAGE_DIRECTORIES
        where = f"{listed} and {more} more" if more > 0 else listed
        names = ", ".join(code_span(spelling) for spelling in spellings[:_MAX_CATALOGUE])
        extra = len(spellings) - _MAX_CATALOGUE
        names += f" and {extra} more" if extra > 0 else ""
        lines.append(DigestLine("Commands", 44 - rank, f"- {names} in {where}"))
    rest = sorted(
        (spelling for spellings, _ in groups[_MAX_PACKAGE_COMMANDS:] for spelling in spellings),
        key=order,
    )
    if rest:
        names = ", ".join(code_span(spelling) for spelling in rest[:_MAX_CATALOGUE])
        more = len(rest) - _MAX_CATALOGUE
        tail = f" and {more} more" if more > 0 else ""
        text = f"- Other package scripts: {names}{tail}"
        lines.append(DigestLine("Commands", 44 - _MAX_PACKAGE_COMMANDS, text))
    return lines


def _command_line(command: ToolCommand) -> str:
    notes = [plain(command.source)]
    note = _STANDING_NOTES.get(command.standing)
    if note is not None:
        notes.append(note)
    runs = command.aliases[0] if command.aliases else command.detail
    same = ""
    if runs is not None and _DESCRIPTION.match(runs):
        notes.append(plain(_shortened(runs)))  # `hooks: ruff, mypy` says what, not a command
    elif runs is not None and "$" not in runs:
        # A recipe's own variables (`$(BIN)/ruff`) are set as it runs: not something to type.
        same = f" = {code_span(_shortened(runs))}"
    label = _PURPOSE_LABELS[command.purpose]
    return f"- {label}: {code_span(command.command)}{same} ({'; '.join(notes)})"


# -- tooling, workflows, watch-outs ------------------------------------------------------------


def _tooling(facts: WorkspaceFacts) -> list[DigestLine]:
    lines = [
        DigestLine("Tooling", 75 - min(rank, 20), f"- {plain(project)}")
        for rank, project in enumerate(facts.projects)
    ]
    if facts.tools:
        lines.append(DigestLine("Tooling", 90, f"- Tools: {', '.join(map(plain, facts.tools))}"))
    return lines


def _workflows(facts: WorkspaceFacts, shown: set[str]) -> list[DigestLine]:
    lines: list[DigestLine] = []
    # Only the commands a person could run too: not CI plumbing (`set -e`, `${{ }}`, `x=$y`).
    runnable = [(workflow, list(workflow.runnable)) for workflow in facts.workflows]
    listed_workflows = [
        (workflow, commands)
        for workflow, commands in runnable
        if [command for command in commands if command not in shown]
    ]
    for rank, (workflow, commands_run) in enumerate(listed_workflows[:_MAX_WORKFLOWS]):
        name = f" ({plain(workflow.name)})" if workflow.name else ""
        fresh = [command for command in commands_run if command not in shown]
        listed = fresh[:_MAX_WORKFLOW_COMMANDS]
        commands = "; ".join(code_span(command) for command in listed)
        more = len(fresh) - len(listed)
        tail = f" and {more} more" if more > 0 else ""
        body = f": {commands}{tail}" if commands else ""
        priority = 50 - min(rank, 20)
        lines.append(DigestLine("Workflows", priority, f"- {code_span(workflow.path)}{name}{body}"))
    shown_paths = {workflow.path for workflow, _ in listed_workflows[:_MAX_WORKFLOWS]}
    rest = [workflow.path for workflow in facts.workflows if workflow.path not in shown_paths]
    if rest:
        names = ", ".join(code_span(path) for path in rest[:_MAX_WORKFLOWS])
        more = len(rest) - _MAX_WORKFLOWS
        tail = f" and {more} more" if more > 0 else ""
        lines.append(DigestLine("Workflows", 44, f"- Other CI files: {names}{tail}"))
    return lines


def _shortened(text: str) -> str:
    """A recipe on a canonical line: its start says what it runs; the rest is in the file."""
    if len(text) <= _MAX_RECIPE:
        return text
    return text[: _MAX_RECIPE - 1].rsplit(" ", 1)[0] + "…"


def _watch_outs(facts: WorkspaceFacts) -> list[DigestLine]:
    # A rule from an agent file, or one that names code (a command, a path), is about the work;
    # a contributor guide's other rules are often about its process (issues, labels, sign-off),
    # which matters less to a code change: those only fill room that is left over, after the
    # first lines of the command catalogues.
    # A `.github/instructions/` file applies to the files its `applyTo` names, not to the work
    # in general: its rules fill room left over too.
    def is_work(watch_out: WatchOut) -> bool:
        if watch_out.source.startswith(".github/instructions/"):
            return False
        return "`" in watch_out.text or is_agent_file(watch_out.source)

    ordered = sorted(facts.watch_outs, key=lambda watch_out: not is_work(watch_out))
    lines: list[DigestLine] = []
    for rank, watch_out in enumerate(ordered[:_MAX_WATCH_OUTS]):
        text = f"- {plain(watch_out.text)} ({plain(watch_out.source)})"
        work = is_work(watch_out)
        priority = 72 - min(rank, 40) if work else 30 - min(rank, 20) * 0.5
        lines.append(DigestLine("Watch-outs", priority, text, in_share=work))
    return lines
