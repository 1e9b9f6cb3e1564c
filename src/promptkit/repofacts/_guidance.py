"""Guidance written for contributors and agents: the commands it names and its rules.

Agent-instruction files (AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md,
.cursor/rules/) are operator-curated input. Each is read once: a symlink and an identical copy
carry the same text, so files are de-duplicated by content. The commands in their code blocks
(and in inline code that starts with a known tool) are canonical; their short imperative
sentences (must, never, always...) become watch-outs. Contributor docs (CONTRIBUTING,
DEVELOPMENT, HACKING) are read the same way, after the agent files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from promptkit.repofacts._tooling.model import FileReader

__all__ = [
    "AGENT_FILE_NAMES",
    "DocumentedCommand",
    "Guidance",
    "WatchOut",
    "as_command",
    "extract_documented_commands",
    "extract_watch_outs",
    "guidance_files",
    "is_agent_file",
    "read_guidance",
]

AGENT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
_AGENT_ENDINGS = (*AGENT_FILE_NAMES, "copilot-instructions.md")
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
class Guidance:
    """What the guidance files say: the files read, their commands, and their watch-outs."""

    files: tuple[str, ...]
    commands: tuple[DocumentedCommand, ...]
    watch_outs: tuple[WatchOut, ...]


_CONTRIBUTOR_DOC = re.compile(
    r"(?:|\.github/|docs/)(?:CONTRIBUTING|DEVELOPMENT|DEVELOPING|HACKING)(?:\.md|\.rst|\.txt)?",
    re.IGNORECASE,
)


def is_agent_file(relative: str) -> bool:
    """Whether `relative` is an agent-instruction file."""
    name = relative.rpartition("/")[2]
    return (
        name in AGENT_FILE_NAMES
        or relative == ".github/copilot-instructions.md"
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


def read_guidance(paths: list[str], read: FileReader) -> Guidance:
    """Read each guidance file once (identical texts once) and extract commands and rules."""
    seen_texts: set[bytes] = set()
    files: list[str] = []
    commands: list[DocumentedCommand] = []
    watch_outs: list[WatchOut] = []
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
            for command in extract_documented_commands(text)
        )
        watch_outs.extend(extract_watch_outs(relative, text))
    return Guidance(tuple(files), tuple(commands), tuple(watch_outs))


# -- commands ----------------------------------------------------------------------------------

# The first word of a line that is a command someone runs (rather than code or output).
_COMMAND_HEADS = frozenset(
    {
        "make", "just", "task", "uv", "uvx", "pnpm", "npm", "npx", "yarn", "bun", "bunx",
        "cargo", "go", "pytest", "python", "python3", "ruff", "mypy", "pyright", "tox", "nox",
        "hatch", "poetry", "pdm", "pre-commit", "prek", "lefthook", "golangci-lint", "gofumpt",
        "gofmt", "goimports", "turbo", "nx", "tsc", "vitest", "jest", "eslint", "prettier",
        "biome", "deno", "mvn", "gradle", "./gradlew", "cmake", "ctest", "bazel", "rustup",
        "docker", "mise", "tsx", "node", "ty", "oxlint",
    }
)  # fmt: skip
_SHELL_FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\w*)")
_SHELL_LANGUAGES = frozenset({"", "bash", "sh", "shell", "console", "zsh", "shell-session", "text"})
_INLINE_CODE = re.compile(r"`([^`\n]{3,160})`")
_PROMPT = re.compile(r"^(?:\$|>|%|#\s)\s*")


def extract_documented_commands(text: str) -> list[str]:
    """Command lines in `text`'s shell code blocks and inline code, in order, each once."""
    found: list[str] = []
    fence: str | None = None
    is_shell = False
    for raw in text.splitlines():
        stripped = raw.strip()
        opening = _SHELL_FENCE.match(stripped)
        if opening is not None and (fence is None or stripped.startswith(fence)):
            if fence is None:
                fence, is_shell = opening.group(1), opening.group(2).lower() in _SHELL_LANGUAGES
            else:
                fence = None
            continue
        if fence is not None:
            if is_shell:
                found.extend(_command_in(stripped))
            continue
        for match in _INLINE_CODE.finditer(raw):
            found.extend(_command_in(match.group(1)))
    unique = list(dict.fromkeys(found))
    return unique[:_MAX_COMMANDS_PER_FILE]


def _command_in(line: str) -> Iterator[str]:
    command = as_command(line)
    if command is not None:
        yield command


def as_command(line: str) -> str | None:
    """`line` as a command someone runs (prompt and comment dropped), or None when its first
    word is no known tool or script: prose, code and program output are not commands."""
    line = _PROMPT.sub("", line.strip())
    line = re.sub(r"\s+#\s.*$", "", line).strip()
    words = line.split()
    if not words:
        return None
    head = words[0]
    # A script's path, not a folder's (`scripts/` alone names the folder).
    is_script = head.startswith(("./", "scripts/", "script/")) and not head.endswith("/")
    if len(words) < 2 and not is_script:
        return None
    return line if head in _COMMAND_HEADS or is_script else None


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
