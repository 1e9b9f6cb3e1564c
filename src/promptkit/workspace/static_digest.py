"""`render_static_digest`: `WorkspaceFacts` as bounded, reproducible markdown.

The digest has four subsections (Layout, Tooling, Workflows, Watch-outs). Its body depends only
on the facts: everything is sorted, and nothing time- or machine-dependent (timestamps, absolute
paths, head_sha) goes in, so the same tree renders byte for byte the same in any process.

The digest goes into prompts, so it is held to a stricter standard than logs: on top of
`redact_secrets` (applied by the scan), any long word that mixes upper case, lower case and
digits with high entropy, such as a password passed as `-p <value>`, is replaced by
`[REDACTED:random-string]`.

The token budget is estimated at four characters per token (no tokenizer dependency) and kept by
dropping whole lines, lowest priority first: the file count, languages and the test/lint
commands outlast the long tail of targets and workflows. A line in which `find_secrets` still
sees a credential is never rendered, on top of the redaction the scan already applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from promptkit.errors import ArgumentValueError
from promptkit.secrets import find_secrets, shannon_entropy
from promptkit.workspace.scan import WorkspaceFacts
from promptkit.workspace.tooling import CommandPurpose

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "render_static_digest"]

CHARS_PER_TOKEN = 4

_SECTIONS = ("Layout", "Tooling", "Workflows", "Watch-outs")
_PURPOSE_LABELS: dict[CommandPurpose, str] = {
    "test": "Test",
    "lint": "Lint",
    "format": "Format",
    "typecheck": "Type-check",
    "build": "Build",
    "other": "Other",
}
_SKIP_LABELS = {
    "binary": "binary",
    "credential": "credential",
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
_MAX_NOTABLE = 14
_MAX_DIRECTORIES = 16
_MAX_WORKFLOW_COMMANDS = 6
_BACKTICKS = re.compile(r"`+")
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

    Lines are dropped whole, lowest priority first, until the text fits; a budget too small
    for any line gives an empty string. Raises ValueError for a negative budget.
    """
    if max_tokens < 0:
        raise ArgumentValueError(f"max_tokens must be zero or more, got {max_tokens}")
    lines = [
        line
        for line in (*_layout(facts), *_tooling(facts), *_workflows(facts), *_watch_outs(facts))
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


def _fit(lines: list[_Line], budget: int) -> set[int]:
    """Indices of the lines to keep so that the assembled digest is at most `budget` chars.

    The length is tracked per section (a section is its heading plus its lines; sections are
    separated by a blank line), so dropping a line costs no re-rendering.
    """
    section_chars = dict.fromkeys(_SECTIONS, 0)
    section_lines = dict.fromkeys(_SECTIONS, 0)
    for line in lines:
        section_chars[line.section] += len(line.text) + 1
        section_lines[line.section] += 1

    def length() -> int:
        present = [section for section in _SECTIONS if section_lines[section]]
        headings = sum(len(f"### {section}") + section_chars[section] for section in present)
        return headings + 2 * max(len(present) - 1, 0)

    kept = set(range(len(lines)))
    # Lowest priority first; among equals, the line further down goes first.
    for index in sorted(kept, key=lambda index: (lines[index].priority, -index)):
        if length() <= budget:
            break
        kept.discard(index)
        section_chars[lines[index].section] -= len(lines[index].text) + 1
        section_lines[lines[index].section] -= 1
    return kept


def _layout(facts: WorkspaceFacts) -> list[_Line]:
    lines = [_Line("Layout", 100, _files_summary(facts))]
    code = [language for language in facts.languages if language.is_code]
    other = [language for language in facts.languages if not language.is_code]
    if code:
        listed = ", ".join(f"{lang.language} {lang.files:,}" for lang in code[:_MAX_CODE_LANGUAGES])
        lines.append(_Line("Layout", 96, f"- Languages: {listed}"))
    for rank, directory in enumerate(facts.layout[:_MAX_DIRECTORIES]):
        children = ", ".join(
            f"{_code(child.path)} {child.files:,}" for child in directory.subdirectories
        )
        suffix = f" ({children})" if children else ""
        text = f"- {_code(directory.path)}: {_count(directory.files, 'file')}{suffix}"
        lines.append(_Line("Layout", 80 - rank, text))
    rest = facts.layout[_MAX_DIRECTORIES:]
    if rest:
        files = sum(directory.files for directory in rest)
        text = f"- {len(rest):,} more top-level directories with {_count(files, 'file')}"
        lines.append(_Line("Layout", 80 - _MAX_DIRECTORIES, text))
    if facts.root_file_count:
        text = f"- Top level: {_count(facts.root_file_count, 'file')}"
        lines.append(_Line("Layout", 58, text))
    if facts.notable_files:
        shown = ", ".join(_code(path) for path in facts.notable_files[:_MAX_NOTABLE])
        more = len(facts.notable_files) - _MAX_NOTABLE
        suffix = f" and {more} more" if more > 0 else ""
        lines.append(_Line("Layout", 84, f"- Notable files: {shown}{suffix}"))
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


def _tooling(facts: WorkspaceFacts) -> list[_Line]:
    lines = [_Line("Tooling", 86, f"- {_plain(project)}") for project in facts.projects]
    if facts.tools:
        lines.append(_Line("Tooling", 83, f"- Tools: {', '.join(map(_plain, facts.tools))}"))
    rank_in_purpose: dict[CommandPurpose, int] = {}
    for command in facts.commands:
        rank = rank_in_purpose.get(command.purpose, 0)
        rank_in_purpose[command.purpose] = rank + 1
        if command.purpose == "other":
            priority = 40 - min(rank, 30)
        else:
            priority = (92, 77)[rank] if rank < 2 else 66 - min(rank, 20)
        detail = f"; runs {_code(command.detail)}" if command.detail else ""
        text = (
            f"- {_PURPOSE_LABELS[command.purpose]}: {_code(command.command)} "
            f"({_plain(command.source)}{detail})"
        )
        lines.append(_Line("Tooling", priority, text))
    return lines


def _workflows(facts: WorkspaceFacts) -> list[_Line]:
    lines: list[_Line] = []
    for rank, workflow in enumerate(facts.workflows):
        name = f" ({_plain(workflow.name)})" if workflow.name else ""
        shown = workflow.commands[:_MAX_WORKFLOW_COMMANDS]
        commands = "; ".join(_code(command) for command in shown)
        more = len(workflow.commands) - len(shown)
        tail = f" and {more} more" if more > 0 else ""
        body = f": {commands}{tail}" if commands else ""
        lines.append(
            _Line("Workflows", 62 - min(rank, 20), f"- {_code(workflow.path)}{name}{body}")
        )
    return lines


def _watch_outs(facts: WorkspaceFacts) -> list[_Line]:
    return [
        _Line(
            "Watch-outs",
            88 - min(rank, 40),
            f"- {_plain(watch_out.text)} ({_plain(watch_out.source)})",
        )
        for rank, watch_out in enumerate(facts.watch_outs)
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
