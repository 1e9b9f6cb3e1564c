"""`render_static_digest`: `WorkspaceFacts` as bounded, reproducible markdown.

The digest has five subsections: Commands (the canonical ones first, then per-package
commands and capped catalogues), Layout (files, languages, what each notable folder is for,
contributor docs and key configuration), Tooling, Workflows and Watch-outs. Its body depends
only on the facts: everything is sorted, and nothing time- or machine-dependent (timestamps,
absolute paths, head_sha) goes in, so the same tree renders byte for byte the same in any
process.

The digest goes into prompts, so it is held to a stricter standard than logs: on top of
`redact_secrets` (applied by the scan), any long word that mixes upper case, lower case and
digits with high entropy, such as a password passed as `-p <value>`, is replaced by
`[REDACTED:random-string]`. A line in which `find_secrets` still sees a credential is never
rendered.

The token budget is estimated at four characters per token (no tokenizer dependency). Each
part has a share of it that it keeps first (`_SHARES`); what is left goes to the remaining
lines by priority. Lines are kept or dropped whole, so a smaller budget shows a subset of the
lines of a larger one, and commands are never pushed out by watch-outs or workflows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from promptkit.secrets import find_secrets, shannon_entropy
from promptkit.workspace.guidance import as_command
from promptkit.workspace.scan import WorkspaceFacts
from promptkit.workspace.tooling import CommandPurpose, ToolCommand, classify_command

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "render_static_digest"]

CHARS_PER_TOKEN = 4

_SECTIONS = ("Commands", "Layout", "Tooling", "Workflows", "Watch-outs")
# The share of the budget each part keeps before the rest is shared out by priority.
_SHARES: Mapping[str, float] = {
    "Commands": 0.40,
    "Layout": 0.28,
    "Tooling": 0.07,
    "Workflows": 0.10,
    "Watch-outs": 0.12,
}
_PURPOSE_LABELS: dict[CommandPurpose, str] = {
    "test": "Test",
    "lint": "Lint",
    "format": "Format",
    "typecheck": "Type-check",
    "build": "Build",
    "other": "Run",
}
_STANDING_NOTES = {"ci": "CI runs it", "documented": "documented"}
_SKIP_LABELS = {
    "binary": "binary",
    "credential": "credential",
    "hard_link": "hard links",
    "too_large": "too large",
    "symlink_outside_root": "symlinked outside the root",
    "symlinked_directory": "under a symlinked directory",
    "unreadable": "unreadable",
    "not_regular_file": "not regular files",
    "non_utf8_name": "with non-UTF-8 names",
    "missing": "deleted",
}
_MAX_CODE_LANGUAGES = 8
_MAX_OTHER_TYPES = 6
_MAX_NOTABLE = 16
_MAX_CANONICAL_PER_PURPOSE = 3
_MAX_CANONICAL = 12
_MAX_RECIPE = 60
_MAX_CATALOGUE = 8
_MAX_CATALOGUE_LINES = 3
_MAX_PACKAGE_DIRECTORIES = 3
_MAX_PACKAGE_COMMANDS = 8
_MAX_WORKFLOWS = 8
_MAX_WORKFLOW_COMMANDS = 4
_MAX_WATCH_OUTS = 12
_BACKTICKS = re.compile(r"`+")
_CD_PREFIX = re.compile(r"^cd (\S+) && (.+)$")
# Paths and dotted names split at "/" and ".", so only opaque runs are candidates.
_OPAQUE_WORD = re.compile(r"[A-Za-z0-9+=_\-]{16,}")
_MIN_RANDOM_ENTROPY = 3.5
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def estimate_tokens(text: str) -> int:
    """Approximate token count of `text`: one token per four characters, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class _Line:
    section: str
    priority: float
    text: str


def render_static_digest(facts: WorkspaceFacts, *, max_tokens: int = 2000) -> str:
    """Markdown describing the workspace, at most `max_tokens` estimated tokens long.

    Lines are kept whole, each part first within its own share of the budget, then by
    priority; a budget too small for any line gives an empty string. Raises ValueError for a
    negative budget.
    """
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be zero or more, got {max_tokens}")
    commands, shown = _commands(facts)
    lines = [
        line
        for line in (
            *commands,
            *_layout(facts),
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
    """The assembled digest's length, tracked per section as lines are kept."""

    def __init__(self) -> None:
        self.chars = dict.fromkeys(_SECTIONS, 0)
        self.lines = dict.fromkeys(_SECTIONS, 0)

    def length(self) -> int:
        present = [section for section in _SECTIONS if self.lines[section]]
        headings = sum(len(f"### {section}") + 1 + self.chars[section] for section in present)
        # Each section's last line has no newline; sections are separated by a blank line.
        return headings - len(present) + 2 * max(len(present) - 1, 0)

    def with_line(self, line: _Line) -> int:
        self.keep(line)
        length = self.length()
        self.drop(line)
        return length

    def keep(self, line: _Line) -> None:
        self.chars[line.section] += len(line.text) + 1
        self.lines[line.section] += 1

    def drop(self, line: _Line) -> None:
        self.chars[line.section] -= len(line.text) + 1
        self.lines[line.section] -= 1


def _fit(lines: list[_Line], budget: int) -> set[int]:
    """Indices of the lines to keep so that the assembled digest is at most `budget` chars.

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
            if line.section != section or used + len(line.text) + 1 > share:
                continue
            if state.with_line(line) <= budget:
                state.keep(line)
                kept.add(index)
                used += len(line.text) + 1
    for index in by_priority:
        if index not in kept and state.with_line(lines[index]) <= budget:
            state.keep(lines[index])
            kept.add(index)
    return kept


# -- commands ----------------------------------------------------------------------------------


def _commands(facts: WorkspaceFacts) -> tuple[list[_Line], set[str]]:
    """Canonical commands, then per-package commands, then catalogues per source file.

    Also returns the command spellings shown, so workflows do not repeat them.
    """
    lines: list[_Line] = []
    shown: set[str] = set()
    per_purpose: dict[CommandPurpose, int] = {}
    rest: list[ToolCommand] = []
    per_package: dict[str, list[str]] = {}
    for command in facts.commands:
        inner = _CD_PREFIX.match(command.command)
        if inner is not None and command.standing not in ("ci", "documented"):
            per_package.setdefault(inner.group(2), []).append(inner.group(1))
            continue
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
        lines.append(_Line("Commands", priority, _command_line(command)))
        shown.update((command.command, *command.aliases))
    # A check in many packages first; a one-package `start:demo` script last, then summed up.
    packaged = sorted(
        per_package.items(),
        key=lambda item: (
            classify_command(item[0]) == "other",
            -len(item[1]),
            item[0],
        ),
    )
    for rank, (spelling, directories) in enumerate(packaged[:_MAX_PACKAGE_COMMANDS]):
        listed = ", ".join(_code(d + "/") for d in sorted(directories)[:_MAX_PACKAGE_DIRECTORIES])
        more = len(directories) - _MAX_PACKAGE_DIRECTORIES
        where = f"{listed} and {more} more" if more > 0 else listed
        lines.append(_Line("Commands", 52 - rank, f"- {_code(spelling)} in {where}"))
    if len(packaged) > _MAX_PACKAGE_COMMANDS:
        rest_count = len(packaged) - _MAX_PACKAGE_COMMANDS
        text = f"- and {rest_count} more package scripts"
        lines.append(_Line("Commands", 52 - _MAX_PACKAGE_COMMANDS, text))
    by_source: dict[str, list[ToolCommand]] = {}
    for command in rest:
        by_source.setdefault(command.source, []).append(command)
    # A long catalogue is cut into lines, so the budget can show its head and drop its tail.
    for rank, (source, commands) in enumerate(sorted(by_source.items())):
        shown_count = min(len(commands), _MAX_CATALOGUE * _MAX_CATALOGUE_LINES)
        for start in range(0, shown_count, _MAX_CATALOGUE):
            chunk = commands[start : start + _MAX_CATALOGUE]
            names = ", ".join(_code(command.command) for command in chunk)
            more = len(commands) - start - len(chunk)
            tail = f" and {more} more" if more > 0 else ""
            label = f"Also in {_code(source)}" if start == 0 else f"More in {_code(source)}"
            priority = 46 - min(rank, 30) - 12 * (start // _MAX_CATALOGUE)
            lines.append(_Line("Commands", priority, f"- {label}: {names}{tail}"))
    return lines, shown


def _command_line(command: ToolCommand) -> str:
    notes = [_plain(command.source)]
    note = _STANDING_NOTES.get(command.standing)
    if note is not None:
        notes.append(note)
    runs = command.aliases[0] if command.aliases else command.detail
    same = f" = {_code(_shortened(runs))}" if runs else ""
    return (
        f"- {_PURPOSE_LABELS[command.purpose]}: {_code(command.command)}{same} ({'; '.join(notes)})"
    )


# -- layout ------------------------------------------------------------------------------------


def _layout(facts: WorkspaceFacts) -> list[_Line]:
    lines = [_Line("Layout", 100, _files_summary(facts))]
    code = [language for language in facts.languages if language.is_code]
    other = [language for language in facts.languages if not language.is_code]
    if code:
        listed = ", ".join(f"{lang.language} {lang.files:,}" for lang in code[:_MAX_CODE_LANGUAGES])
        lines.append(_Line("Layout", 96, f"- Languages: {listed}"))
    for rank, folder in enumerate(facts.folders):
        depth = folder.path.count("/")
        purpose = f": {_plain(folder.purpose)}" if folder.purpose else ""
        indent = "  " * (depth - 1)
        text = f"{indent}- {_code(folder.path)} ({_count(folder.files, 'file')}){purpose}"
        base = 82 if folder.purpose else 70
        priority = base - min(rank, 40) * 0.5 - (depth - 1) * 4
        lines.append(_Line("Layout", priority, text))
    top_level = sum(1 for folder in facts.folders if folder.path.count("/") == 1)
    rest = facts.layout[top_level:]
    if rest:
        files = sum(directory.files for directory in rest)
        text = f"- {len(rest):,} more top-level directories with {_count(files, 'file')}"
        lines.append(_Line("Layout", 60, text))
    if facts.root_file_count:
        text = f"- Top level: {_count(facts.root_file_count, 'file')}"
        lines.append(_Line("Layout", 58, text))
    if facts.notable_files:
        shown = ", ".join(_code(path) for path in facts.notable_files[:_MAX_NOTABLE])
        more = len(facts.notable_files) - _MAX_NOTABLE
        suffix = f" and {more} more" if more > 0 else ""
        lines.append(_Line("Layout", 88, f"- Docs and config: {shown}{suffix}"))
    if other:
        listed = ", ".join(f"{lang.language} {lang.files:,}" for lang in other[:_MAX_OTHER_TYPES])
        lines.append(_Line("Layout", 55, f"- Other files: {listed}"))
    return lines


def _files_summary(facts: WorkspaceFacts) -> str:
    if not facts.file_count:
        summary = "- No readable text files"
    else:
        summary = f"- {_count(facts.file_count, 'file')}"
    left_out = [
        f"{count:,} {_SKIP_LABELS.get(reason, reason)}" for reason, count in facts.skipped if count
    ]
    return f"{summary} (left out: {', '.join(left_out)})" if left_out else summary


# -- tooling, workflows, watch-outs ------------------------------------------------------------


def _tooling(facts: WorkspaceFacts) -> list[_Line]:
    lines = [
        _Line("Tooling", 75 - min(rank, 20), f"- {_plain(project)}")
        for rank, project in enumerate(facts.projects)
    ]
    if facts.tools:
        lines.append(_Line("Tooling", 90, f"- Tools: {', '.join(map(_plain, facts.tools))}"))
    return lines


def _workflows(facts: WorkspaceFacts, shown: set[str]) -> list[_Line]:
    lines: list[_Line] = []
    # Only the commands a person could run too: not CI plumbing (`set -e`, `${{ }}`, `x=$y`).
    runnable = [
        (workflow, [line for line in workflow.commands if _is_runnable(line)])
        for workflow in facts.workflows
    ]
    listed_workflows = [
        (workflow, commands)
        for workflow, commands in runnable
        if [command for command in commands if command not in shown]
    ]
    for rank, (workflow, commands_run) in enumerate(listed_workflows[:_MAX_WORKFLOWS]):
        name = f" ({_plain(workflow.name)})" if workflow.name else ""
        fresh = [command for command in commands_run if command not in shown]
        listed = fresh[:_MAX_WORKFLOW_COMMANDS]
        commands = "; ".join(_code(command) for command in listed)
        more = len(fresh) - len(listed)
        tail = f" and {more} more" if more > 0 else ""
        body = f": {commands}{tail}" if commands else ""
        priority = 60 - min(rank, 20)
        lines.append(_Line("Workflows", priority, f"- {_code(workflow.path)}{name}{body}"))
    rest = len(facts.workflows) - min(len(listed_workflows), _MAX_WORKFLOWS)
    if rest > 0:
        lines.append(_Line("Workflows", 39, f"- and {rest} more workflow files"))
    return lines


def _shortened(text: str) -> str:
    """A recipe on a canonical line: its start says what it runs; the rest is in the file."""
    if len(text) <= _MAX_RECIPE:
        return text
    return text[: _MAX_RECIPE - 1].rsplit(" ", 1)[0] + "…"


def _is_runnable(line: str) -> bool:
    return "${{" not in line and as_command(line) is not None


def _watch_outs(facts: WorkspaceFacts) -> list[_Line]:
    return [
        _Line(
            "Watch-outs",
            72 - min(rank, 40),
            f"- {_plain(watch_out.text)} ({_plain(watch_out.source)})",
        )
        for rank, watch_out in enumerate(facts.watch_outs[:_MAX_WATCH_OUTS])
    ]


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def _plain(text: str) -> str:
    """`text` safe to place on one markdown line: one line, no random-looking words."""
    return _OPAQUE_WORD.sub(_conceal_if_random, _UNPRINTABLE.sub("?", text))


def _conceal_if_random(match: re.Match[str]) -> str:
    word = match.group()
    is_mixed = (
        any(char.isupper() for char in word)
        and any(char.islower() for char in word)
        and any(char.isdigit() for char in word)
    )
    if is_mixed and shannon_entropy(word) >= _MIN_RANDOM_ENTROPY:
        return "[REDACTED:random-string]"
    return word


def _code(text: str) -> str:
    """`text` as inline code, fenced with enough backticks to hold any it contains."""
    text = _plain(text)
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in _BACKTICKS.findall(text)) + 1)
    return f"{fence} {text} {fence}"
