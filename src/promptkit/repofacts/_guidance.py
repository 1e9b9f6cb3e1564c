"""Guidance written for contributors and agents: the commands it names and its rules.

Agent-instruction files (AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md,
.github/instructions/*.instructions.md, .cursor/rules/, .cursorrules) are operator-curated
input. Each is read once: a symlink and an identical copy carry the same text, so files are
de-duplicated by content. The commands they name are canonical; their short imperative
sentences (must, never, always...) become watch-outs. Contributor docs (CONTRIBUTING,
DEVELOPMENT, HACKING) are read the same way, after the agent files.

A line of a shell code block is a command when a person could type it as it stands (see
`_tooling.shell.unrunnable`); inline code and untyped blocks hold code and output too, so there
a line is a command only when the repository's own evidence runs its program (`Evidence`): its
CI, its runners' recipes and build files, or a script it holds.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

from promptkit.repofacts._tooling.model import FileReader
from promptkit.repofacts._tooling.shell import head_of, unrunnable

__all__ = [
    "AGENT_FILE_NAMES",
    "DocumentedCommand",
    "Evidence",
    "Guidance",
    "NamedPaths",
    "WatchOut",
    "as_command",
    "extract_documented_commands",
    "extract_named_paths",
    "extract_watch_outs",
    "guidance_files",
    "is_agent_file",
    "read_guidance",
]

AGENT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
_AGENT_ENDINGS = (*AGENT_FILE_NAMES, "copilot-instructions.md", ".instructions.md", ".cursorrules")
_MAX_AGENT_FILES = 8
_MAX_CONTRIBUTOR_DOCS = 4
_MAX_WATCH_OUTS_PER_FILE = 24
_MAX_COMMANDS_PER_FILE = 60
_GUIDANCE_READ_LIMIT = 256 * 1024


@dataclass(frozen=True, slots=True)
class WatchOut:
    """A short imperative sentence from contributor or agent guidance, and its file."""

    source: str
    text: str


@dataclass(frozen=True, slots=True)
class DocumentedCommand:
    """A command line that guidance names (in a code block or inline code), and its file."""

    source: str
    command: str
    is_agent_file: bool


@dataclass(frozen=True, slots=True)
class NamedPaths:
    """The files and folders of the repository that a doc points at (in inline code or by a
    link), in the order it names them."""

    source: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Guidance:
    """What the guidance files say: the files read, their commands, their watch-outs, and
    the repository's paths they and the README point at."""

    files: tuple[str, ...]
    commands: tuple[DocumentedCommand, ...]
    watch_outs: tuple[WatchOut, ...]
    named_paths: tuple[NamedPaths, ...] = ()


_CONTRIBUTOR_DOC = re.compile(
    r"(?:|\.github/|docs/)(?:CONTRIBUTING|DEVELOPMENT|DEVELOPING|HACKING)(?:\.md|\.rst|\.txt)?",
    re.IGNORECASE,
)


def is_agent_file(relative: str) -> bool:
    """Whether `relative` is an agent-instruction file."""
    name = relative.rpartition("/")[2]
    return (
        name in AGENT_FILE_NAMES
        or relative in (".github/copilot-instructions.md", ".cursorrules")
        or (relative.startswith(".github/instructions/") and name.endswith(".instructions.md"))
        or (relative.startswith(".cursor/rules/") and name.endswith((".md", ".mdc")))
    )


def guidance_files(paths: list[str]) -> list[str]:
    """Agent files (shallowest first), then contributor docs, each list bounded."""
    # The cheap tests first: agent files end with a known name or sit under .cursor/rules/,
    # and contributor docs are at most one folder deep.
    agent = sorted(
        (
            path
            for path in paths
            if (path.endswith(_AGENT_ENDINGS) or path.startswith(".cursor/rules/"))
            and is_agent_file(path)
        ),
        key=lambda path: (path.count("/"), path),
    )
    contributing = sorted(
        path for path in paths if path.count("/") <= 1 and _CONTRIBUTOR_DOC.fullmatch(path)
    )
    return agent[:_MAX_AGENT_FILES] + contributing[:_MAX_CONTRIBUTOR_DOCS]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the repository shows it runs: its files (`present`, for scripts run by their
    path) and the programs its CI, runners and build files run or configure (`programs`)."""

    present: frozenset[str] = frozenset()
    programs: frozenset[str] = frozenset()


def read_guidance(paths: list[str], read: FileReader, evidence: Evidence = Evidence()) -> Guidance:
    """Read each guidance file once (identical texts once) and extract commands and rules."""
    seen_texts: set[bytes] = set()
    files: list[str] = []
    commands: list[DocumentedCommand] = []
    watch_outs: list[WatchOut] = []
    named: list[NamedPaths] = []
    for relative in guidance_files(paths):
        text = read(relative, _GUIDANCE_READ_LIMIT)
        if text is None:
            continue
        digest = hashlib.sha256(text.strip().encode("utf-8")).digest()
        if digest in seen_texts:
            continue
        seen_texts.add(digest)
        files.append(relative)
        agent = is_agent_file(relative)
        commands.extend(
            DocumentedCommand(relative, command, agent)
            for command in extract_documented_commands(text, evidence)
        )
        watch_outs.extend(extract_watch_outs(relative, text))
        named.append(NamedPaths(relative, extract_named_paths(text, relative, evidence.present)))
    readme = next((name for name in _READMES if name in evidence.present), None)
    text = read(readme, _GUIDANCE_READ_LIMIT) if readme is not None else None
    if readme is not None and text is not None:
        # A README's links are mostly its badges, translations and site; its code is chosen.
        pointed_at = extract_named_paths(text, readme, evidence.present, links=False)
        named.append(NamedPaths(readme, pointed_at))
    return Guidance(
        tuple(files),
        tuple(commands),
        tuple(watch_outs),
        tuple(entry for entry in named if entry.paths),
    )


# -- commands ----------------------------------------------------------------------------------

_SHELL_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w-]*)")
# Blocks typed as shell hold what a person types; untyped and text blocks hold output too.
_SHELL_LANGUAGES = frozenset(
    {"bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "fish", "ps1"}
)
_UNTYPED_LANGUAGES = frozenset({"", "text", "txt", "plain", "plaintext"})
_INLINE_CODE = re.compile(r"`([^`\n]{2,160})`")


def extract_documented_commands(text: str, evidence: Evidence = Evidence()) -> list[str]:
    """Command lines in `text`'s code blocks and inline code, in order, each once."""
    found: list[str] = []
    fence: str | None = None
    language = ""
    continued = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        opening = _SHELL_FENCE.match(stripped)
        if opening is not None and (fence is None or stripped.startswith(fence)):
            if fence is None:
                fence, language = opening.group(1), opening.group(2).lower()
            else:
                fence = None
            continued = ""
            continue
        if fence is not None and stripped.endswith("\\"):
            continued += stripped[:-1] + " "  # a command continued on the next line
            continue
        if fence is not None:
            stripped, continued = continued + stripped, ""
            if language in _SHELL_LANGUAGES or language in _UNTYPED_LANGUAGES:
                # A prompt marks what is typed; a block also holds output (`running 1 test`).
                typed = language in _SHELL_LANGUAGES and _PROMPT.match(stripped) is not None
                found.extend(_command_in(stripped, evidence, typed=typed, block=True))
            continue
        for match in _INLINE_CODE.finditer(raw):
            found.extend(_command_in(match.group(1), evidence, typed=False, block=False))
    unique = list(dict.fromkeys(found))
    return unique[:_MAX_COMMANDS_PER_FILE]


def _command_in(line: str, evidence: Evidence, *, typed: bool, block: bool) -> Iterator[str]:
    command = as_command(line, evidence, typed=typed, block=block)
    if command is not None:
        yield command


_PROMPT = re.compile(r"^(?:\$|%)\s+")


def as_command(
    line: str, evidence: Evidence = Evidence(), *, typed: bool = False, block: bool = False
) -> str | None:
    """`line` as a command someone runs (prompt and comment dropped), or None.

    A line that is no command a person could type (see `unrunnable`) is None. A line marked
    as typed (`typed`: after a shell prompt in a shell block) is a command; any other must
    run a program the repository's evidence runs, or a script the repository holds by its
    path. In prose (not a code `block`), a program's name alone names the program (`uv`),
    not a command.
    """
    line = _PROMPT.sub("", line.strip())
    line = re.sub(r"\s+#\s.*$", "", line).strip()
    if unrunnable(line, evidence.present) is not None:
        return None
    head = head_of(line)
    if typed:
        return line
    if head in evidence.programs and (block or len(line.split()) > 1):
        return line
    # A file named in prose is a file (`tests/test_docs.py`); run by its path it is `./x`, or
    # an executable with no suffix (`bin/test`) or a shell script's.
    is_script = head.startswith("./") or head.endswith((".sh", ".bash")) or "." not in head
    return line if "/" in head and is_script else None


# -- paths -------------------------------------------------------------------------------------

_READMES = ("README.md", "README.rst", "Readme.md", "readme.md")
_LINK_TARGET = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s#]+)(?:#[^)]*)?\)")
_MAX_NAMED_PATHS = 24


def extract_named_paths(
    text: str, source: str, present: frozenset[str], *, links: bool = True
) -> tuple[str, ...]:
    """The repository's files and folders that markdown `text` names in inline code or (with
    `links`) links to, in order, each once: a span shaped like a path (it has a `/` or a `.`)
    that is a file of `present` or a folder holding one. `source` is the doc's own path (its
    links are relative to its folder)."""
    folder = source.rpartition("/")[0]
    candidates: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        candidates.extend(match.group(1) for match in _INLINE_CODE.finditer(line))
        for match in _LINK_TARGET.finditer(line) if links else ():
            target = match.group(1)
            joined = f"{folder}/{target}" if folder and not target.startswith("/") else target
            candidates.append(posixpath.normpath(joined.lstrip("/")))
    found: list[str] = []
    for candidate in candidates:
        path = _normalised(candidate.strip())
        if path is None or path == source or path in found:
            continue
        inside = path + "/"
        if path in present or any(known.startswith(inside) for known in present):
            found.append(path)
            if len(found) == _MAX_NAMED_PATHS:
                break
    return tuple(found)


def _normalised(candidate: str) -> str | None:
    """`candidate` as a path relative to the root, or None when it is shaped like no path."""
    path = candidate.removeprefix("./").rstrip("/")
    if not path or path.startswith("..") or " " in path or ("/" not in path and "." not in path):
        return None
    if path.startswith(("-", "$", "<", "~", "/")) or "://" in path or "*" in path:
        return None
    return path


# -- watch-outs --------------------------------------------------------------------------------

_WATCH_WORD = re.compile(
    r"\b(?:must|never|always|don't|do not|avoid|before|required|requires|make sure|ensure|"
    r"should not|shouldn't|important)\b",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*_\"'(\[])")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_MIN_WATCH_OUT = 12
_MAX_WATCH_OUT = 200


def extract_watch_outs(source: str, text: str) -> list[WatchOut]:
    """Short imperative sentences (must, never, always, avoid, before...) from markdown `text`."""
    found: list[WatchOut] = []
    seen: set[str] = set()
    for unit in _markdown_units(text):
        for sentence in _SENTENCE_BREAK.split(unit):
            cleaned = _clean_markdown(sentence)
            if (
                _MIN_WATCH_OUT <= len(cleaned) <= _MAX_WATCH_OUT
                and not cleaned.endswith(":")
                and "[REDACTED:" not in cleaned
                and _WATCH_WORD.search(cleaned)
                and cleaned.casefold() not in seen
            ):
                seen.add(cleaned.casefold())
                found.append(WatchOut(source=source, text=cleaned))
                if len(found) == _MAX_WATCH_OUTS_PER_FILE:
                    return found
    return found


def _markdown_units(text: str) -> Iterator[str]:
    """Paragraphs and list items of `text`, each joined onto one line; code and tables skipped."""
    current: list[str] = []
    in_fence = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            if current:
                yield " ".join(current)
                current = []
            continue
        if in_fence:
            continue
        if not stripped or stripped.startswith(("#", "|", "<", "---", "===")):
            if current:
                yield " ".join(current)
                current = []
            continue
        stripped = stripped.lstrip("> ").strip()
        bullet = _BULLET.match(stripped)
        if bullet is not None:
            if current:
                yield " ".join(current)
            current = [stripped[bullet.end() :]]
        else:
            current.append(stripped)
    if current:
        yield " ".join(current)


def _clean_markdown(sentence: str) -> str:
    text = _LINK.sub(r"\1", sentence)
    text = _EMPHASIS.sub("", text)
    return " ".join(text.split())
