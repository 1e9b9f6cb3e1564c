"""The digest gate: whether a written digest is a digest of this workspace, before it is stored.

A small model asked for a digest answers with many things that are not one: the output schema
it was shown (as JSON, or its description sentence), the prompt's own instructions, a JSON
object, or text that runs on until the reply is cut off. None of them may be stored, since
every later prompt would reuse it. `DigestGate.judge` refuses a digest that

- is JSON (an object or array, bare or in one fenced block) or holds a JSON schema;
- repeats the text the model was given (the prompt, its tools' descriptions): most of its
  six-word runs are found there;
- is longer than the budget (`token_budget`, estimated tokens as the static digest counts them);
- is not grounded: of the paths and commands it names, none, or fewer than half, are in the
  workspace.

Grounding is measured whatever the verdict (`Grounding`): a path is named in a code span
(`src/app.py`, `docs/`), or in prose when it is one of the workspace's paths; it is found when
the workspace has that file or folder (under any mount, with or without its leading `/`) or, for
a bare file name, a file of that name. A command is a code span (or a line of a fenced block)
that starts with a program (`make test`, `uv run pytest -q`, `./scripts/check.sh`); it is found
when the static scan lists it, or when the workspace's own text (its docs, build files and CI
configuration, read up to a budget) shows the program followed by the same first argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from promptkit.errors import WorkspaceError
from promptkit.hostfiles import HOST_READER, FileSelection, WorkspaceReader, select_files
from promptkit.repofacts import WorkspaceFacts, estimate_tokens
from promptkit.workspace import HostMount

DEFAULT_DIGEST_TOKEN_BUDGET = 2000
"""The most a stored digest may be, in estimated tokens: the static digest's budget."""

_SHINGLE_WORDS = 6
_ECHO_SHARE = 0.5
_GROUNDED_SHARE = 0.5
_MISSING_SHOWN = 8
# The workspace's own text read for commands: enough for docs, build files and CI of a large
# repository, bounded for a huge one.
_EVIDENCE_BYTES = 8 << 20
_EVIDENCE_FILE_BYTES = 256 << 10
_EVIDENCE_NAMES = re.compile(
    r"(^|/)(readme|contributing|agents|claude|hacking|development|building|install)[^/]*$"
    r"|(^|/)(makefile|gnumakefile|justfile|taskfile[^/]*|rakefile|gemfile|dockerfile[^/]*"
    r"|tox\.ini|noxfile\.py|setup\.cfg|pyproject\.toml|package\.json|deno\.jsonc?|cargo\.toml"
    r"|go\.mod|build\.gradle(\.kts)?|pom\.xml|composer\.json|mix\.exs|cmakelists\.txt"
    r"|meson\.build|flake\.nix|\.pre-commit-config\.yaml|\.gitlab-ci\.yml)$"
    r"|(^|/)\.github/workflows/[^/]+\.ya?ml$|\.(md|rst|txt|sh|mk)$",
    re.I,
)

_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_PROSE_WORD = re.compile(r"[\w.-]+")
_FENCE = re.compile(r"^ *(`{3,}|~{3,})[^\n]*\n(.*?)^ *\1 *$", re.M | re.S)
# `src/app.py`, `docs/guide/`, `src/` in prose (a slash makes a word a candidate).
_PROSE_PATH = re.compile(r"(?<![\w:/.-])(?:\./)?[\w.-]+(?:(?:/[\w.-]+)+/?|/)")
# A bare file name: a name with an extension files have (`pyproject.toml`), not a dotted module
# name (`app.errors`), which is counted only when the workspace has a file of that name.
_FILE_NAME = re.compile(
    r"^[\w.-]*[\w-]\.(?:py|pyi|toml|cfg|ini|json|jsonc|ya?ml|md|rst|txt|lock|mod|sum|js|mjs|cjs"
    r"|ts|tsx|jsx|rs|go|rb|gemspec|java|kt|kts|gradle|xml|c|h|cc|cpp|hpp|cs|csproj|sln|php|sh"
    r"|bash|mk|html|css|scss|sql|proto|swift|ex|exs|nix|zig|dart|lua|env|example|conf|dockerfile)$",
    re.I,
)
_PROGRAM = re.compile(r"^(?:\./)?[a-z][\w.+-]*(?:/[\w.+-]+)*$")
_LINE_SUFFIX = re.compile(r":\d+(?::\d+)?$")
# Not paths though they hold a slash: a module path under a domain (`github.com/org/repo`), a
# scoped package (`@std/assert`), a function and its arity (`Process.sleep/1`).
_NOT_A_PATH = re.compile(r"^@|^[\w-]+\.(?:com|org|net|io|dev|co|in|me|sh)/|/\d+$")
_PACKAGE_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "deno"})
_WORD = re.compile(r"[a-z0-9]+")
# Programs a contributor runs, for telling a command in a code span from an identifier.
_PROGRAMS = frozenset(
    {
        "make", "just", "task", "npm", "npx", "pnpm", "yarn", "bun", "bunx", "node", "deno",
        "python", "python3", "pip", "pip3", "uv", "uvx", "poetry", "pdm", "hatch", "tox", "nox",
        "pytest", "ruff", "mypy", "pyright", "black", "isort", "flake8", "pylint", "coverage",
        "pre-commit", "cargo", "rustc", "rustup", "go", "gofmt", "golangci-lint", "mvn",
        "gradle", "java", "dotnet", "bundle", "rake", "rspec", "ruby", "gem", "php", "composer",
        "phpunit", "mix", "swift", "xcodebuild", "cmake", "ctest", "ninja", "meson", "bazel",
        "bazelisk", "docker", "podman", "git", "sh", "bash", "zig", "dart", "flutter", "tsc",
        "eslint", "prettier", "jest", "vitest", "playwright", "nix", "terraform", "helm",
        "kubectl", "sbt", "lein", "stack", "cabal", "dune", "opam", "elixir", "erl", "rebar3",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Grounding:
    """How much of what a digest names the workspace has: the paths (files and folders) and
    commands it names, how many of each were found, and some of those that were not."""

    paths_named: int = 0
    paths_found: int = 0
    commands_named: int = 0
    commands_found: int = 0
    not_found: tuple[str, ...] = ()

    @property
    def named(self) -> int:
        return self.paths_named + self.commands_named

    @property
    def found(self) -> int:
        return self.paths_found + self.commands_found

    def summary(self) -> str:
        """`3 of 4 paths and 2 of 2 commands found in the workspace`."""
        return (
            f"{self.paths_found} of {self.paths_named} paths and {self.commands_found} of"
            f" {self.commands_named} commands found in the workspace"
        )

    def to_json(self) -> dict[str, Any]:
        """The figures as the manifest, the log and `--json` carry them."""
        return {
            "paths_named": self.paths_named,
            "paths_found": self.paths_found,
            "commands_named": self.commands_named,
            "commands_found": self.commands_found,
            "not_found": list(self.not_found),
        }


@dataclass(frozen=True)
class Verdict:
    """The gate's judgement of one digest: its grounding, and why it is refused (None when it
    may be stored)."""

    grounding: Grounding
    problem: str | None = None


@dataclass(frozen=True)
class WorkspaceEvidence:
    """What a digest is checked against: the workspace's paths (files, folders, file names), the
    commands the static scan found, and the workspace's own text."""

    files: frozenset[str]
    folders: frozenset[str]
    file_names: frozenset[str]
    commands: tuple[str, ...]
    text: str
    tails: frozenset[str] = frozenset()
    """Every path's trailing parts (`lib/app.rb` of `gems/core/lib/app.rb`): a digest may name
    a path relative to the project it describes inside a larger tree."""

    @classmethod
    def of(
        cls,
        mounts: Sequence[HostMount],
        facts: WorkspaceFacts,
        *,
        reader: WorkspaceReader = HOST_READER,
    ) -> WorkspaceEvidence:
        """The evidence of the workspace `mounts` make up, whose static scan is `facts`."""
        files: set[str] = set()
        folders: set[str] = set()
        texts: list[str] = []
        budget = _EVIDENCE_BYTES
        for mount in mounts:
            selection = select_files(mount.root(), max_file_bytes=mount.max_file_bytes)
            prefix = mount.mount_path.strip("/")
            listed = [
                file.path
                for file in selection.narrowed(mount.include_glob, mount.exclude_glob).files
            ]
            # Files left out of what a model may read (too large, binary, credentials) are
            # still the workspace's: a digest may name them.
            left_out = [
                (entry.path, entry.is_folder)
                for entry in selection.left_out
                if entry.path is not None
            ]
            for path, is_folder in (*((path, False) for path in listed), *left_out):
                shown = f"{prefix}/{path}" if prefix else path
                (folders if is_folder else files).add(shown)
            budget = _read_evidence(selection, listed, reader, texts, budget)
        folders |= {str(parent) for path in files for parent in PurePosixPath(path).parents}
        folders.discard(".")
        commands = [
            spelling
            for command in facts.commands
            for spelling in (command.command, command.detail, *command.aliases)
            if spelling
        ]
        tails = {
            "/".join(parts[start:])
            for path in files | folders
            for parts in (path.split("/"),)
            for start in range(1, len(parts))
        }
        return cls(
            files=frozenset(files),
            folders=frozenset(folders),
            file_names=frozenset(PurePosixPath(path).name for path in files),
            commands=tuple(commands),
            text="\n".join(texts),
            tails=frozenset(tails),
        )


def _read_evidence(
    selection: FileSelection,
    listed: Sequence[str],
    reader: WorkspaceReader,
    texts: list[str],
    budget: int,
) -> int:
    """Read the mount's docs, build files and CI configuration into `texts`, the smallest first,
    within `budget` bytes; returns what is left of it."""
    sizes = {file.path: file.size for file in selection.files}
    chosen = sorted(
        (path for path in listed if _EVIDENCE_NAMES.search(path)),
        key=lambda path: sizes.get(path, 0),
    )
    for path in chosen:
        if budget <= 0:
            break
        try:
            raw = reader.read(selection.root, path, limit=min(_EVIDENCE_FILE_BYTES, budget))
        except WorkspaceError:
            continue
        budget -= len(raw)
        texts.append(raw.decode("utf-8", errors="replace"))
    return budget


@dataclass(frozen=True)
class DigestGate:
    """Refuses what is not a digest of this workspace (see the module doc).

    `token_budget` is the most a digest may be, in estimated tokens.
    """

    token_budget: int = DEFAULT_DIGEST_TOKEN_BUDGET

    def judge(self, digest: str, evidence: WorkspaceEvidence, *, prompt_text: str = "") -> Verdict:
        """The verdict on `digest`; `prompt_text` is what the model was given, when a model
        wrote it."""
        grounding = measure_grounding(digest, evidence)
        problem = (
            _json_problem(digest)
            or _echo_problem(digest, prompt_text)
            or self._length_problem(digest)
            or _grounding_problem(grounding)
        )
        return Verdict(grounding, problem)

    def _length_problem(self, digest: str) -> str | None:
        tokens = estimate_tokens(digest)
        if tokens <= self.token_budget:
            return None
        return f"it is about {tokens} tokens long, over the digest budget of {self.token_budget}"


def measure_grounding(digest: str, evidence: WorkspaceEvidence) -> Grounding:
    """How many of the paths and commands `digest` names the workspace has."""
    paths: dict[str, bool] = {}
    commands: dict[str, bool] = {}
    for span in _code_spans(digest):
        command = _command_words(span)
        if command is not None:
            commands.setdefault(" ".join(command), _has_command(command, evidence))
            continue
        path = _path_of(span)
        if path is None:
            continue
        if "/" in span or _FILE_NAME.match(path):  # `src/app.py`, `tests/`, `pyproject.toml`
            paths.setdefault(path, _has_path(path, evidence))
        elif path in evidence.file_names:  # a bare name that is a file (`Makefile`)
            paths.setdefault(path, True)
    prose = _without_code(digest)
    named_in_prose = [
        *_PROSE_PATH.findall(prose),
        *(word for word in _PROSE_WORD.findall(prose) if _FILE_NAME.match(word)),
    ]
    for token in named_in_prose:
        path = _path_of(token)
        # In prose a slash or a dot is often English (`and/or`, `Node.js`): only the
        # workspace's own paths count.
        if path is not None and _has_path(path, evidence):
            paths.setdefault(path, True)
    missing = [name for name, found in (*paths.items(), *commands.items()) if not found]
    return Grounding(
        paths_named=len(paths),
        paths_found=sum(paths.values()),
        commands_named=len(commands),
        commands_found=sum(commands.values()),
        not_found=tuple(missing[:_MISSING_SHOWN]),
    )


def _code_spans(digest: str) -> Iterable[str]:
    for fence in _FENCE.finditer(digest):
        for line in fence.group(2).splitlines():
            stripped = line.strip().removeprefix("$ ").strip()
            if stripped and not stripped.startswith("#"):
                yield stripped
    for span in _CODE_SPAN.finditer(_FENCE.sub("", digest)):
        yield span.group(1).strip()


def _without_code(digest: str) -> str:
    return _CODE_SPAN.sub(" ", _FENCE.sub(" ", digest))


def _command_words(span: str) -> list[str] | None:
    """The words of `span` when it is a command: a program, then at least one argument."""
    words = span.removeprefix("$ ").split()
    if len(words) < 2 or not _PROGRAM.match(words[0]):
        return None
    program = words[0]
    if program.startswith("./") or program in _PROGRAMS:
        return words
    return None


def _has_command(words: Sequence[str], evidence: WorkspaceEvidence) -> bool:
    program = words[0]
    if program.startswith("./"):
        return _has_path(program, evidence)
    head = " ".join(words[:2])
    if any(_same_start(command, words) for command in evidence.commands):
        return True
    if words[1].startswith("-"):  # `pytest -q`: the program's own options
        return re.search(rf"(?<![\w-]){re.escape(program)}(?![\w-])", evidence.text) is not None
    return (
        re.search(
            rf"(?<![\w-]){re.escape(program)}\s+{re.escape(words[1])}(?![\w-])", evidence.text
        )
        is not None
        or head in evidence.text
    )


def _same_start(command: str, words: Sequence[str]) -> bool:
    listed = _runner_form(command.split())
    given = _runner_form(list(words))
    count = min(len(listed), len(given), 2)
    return count > 0 and listed[:count] == given[:count]


def _runner_form(words: list[str]) -> list[str]:
    """The command a line runs, in one spelling: without a leading `cd DIR &&`, and `npm run
    lint` as `npm lint` (package runners run a script with or without `run`)."""
    while len(words) > 3 and words[0] == "cd" and words[2] == "&&":
        words = words[3:]
    if len(words) > 2 and words[0] in _PACKAGE_RUNNERS and words[1] == "run":
        return [words[0], *words[2:]]
    return words


def _path_of(span: str) -> str | None:
    """`span` as a workspace path (no leading `./` or `/`, no trailing `/` or `:line`), or None
    when it cannot be one (spaces, a URL, a glob, a placeholder, `..`)."""
    candidate = _LINE_SUFFIX.sub("", span.strip().rstrip(".,;:)"))
    if (
        not candidate
        or any(char in candidate for char in " *?<>{}[]$=\"'…#")
        or "://" in candidate
        or _NOT_A_PATH.search(candidate)
    ):
        return None
    candidate = candidate.removeprefix("./").strip("/")
    if not candidate or ".." in candidate.split("/") or candidate.startswith("~"):
        return None
    return candidate


def _has_path(path: str, evidence: WorkspaceEvidence) -> bool:
    clean = path.removeprefix("./").strip("/")
    return clean in evidence.files or clean in evidence.folders or clean in evidence.tails


def _json_problem(digest: str) -> str | None:
    if ('"properties"' in digest and '"type"' in digest) or '"$schema"' in digest:
        return "it is a JSON schema, not a description of the workspace"
    stripped = digest.strip()
    fenced = _FENCE.fullmatch(stripped + "\n") if stripped.startswith(("```", "~~~")) else None
    body = fenced.group(2).strip() if fenced is not None else stripped
    if not body.startswith(("{", "[")):
        return None
    try:
        json.loads(body)
    except ValueError:
        return None
    return "it is JSON, not a markdown description of the workspace"


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + _SHINGLE_WORDS]) for i in range(len(words) - _SHINGLE_WORDS + 1)}


def _echo_problem(digest: str, prompt_text: str) -> str | None:
    if not prompt_text:
        return None
    words = _WORD.findall(digest.lower())
    if len(words) < _SHINGLE_WORDS:
        echoed = bool(words) and " ".join(words) in " ".join(_WORD.findall(prompt_text.lower()))
    else:
        own = _shingles(digest)
        echoed = len(own & _shingles(prompt_text)) >= _ECHO_SHARE * len(own)
    if not echoed:
        return None
    return "it repeats the instructions the model was given instead of describing the workspace"


def _grounding_problem(grounding: Grounding) -> str | None:
    if grounding.found == 0:
        return "it names no file, folder or command of the workspace" + (
            f" (not found: {', '.join(grounding.not_found)})" if grounding.not_found else ""
        )
    if grounding.found < _GROUNDED_SHARE * grounding.named:
        return (
            f"most of what it names is not in the workspace ({grounding.summary()}; not found:"
            f" {', '.join(grounding.not_found)})"
        )
    return None
