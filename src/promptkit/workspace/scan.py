"""`scan_workspace`: task-agnostic facts about a workspace, gathered fast and without secrets.

The scan lists files once (see `select_files`; no content is read to list), counts languages
and top-level layout from the names alone, and opens only a handful of files, each read only up
to the size its parser needs, through the caller's `WorkspaceReader`: the project's
configuration (pyproject.toml, Makefile, package.json... at the root and one directory down),
its CI files, and the guidance written for contributors and agents (CONTRIBUTING, AGENTS.md,
CLAUDE.md), from which short imperative sentences become watch-outs. Every file's text passes
through `redact_secrets` before anything is parsed out of it, so no credential reaches
`WorkspaceFacts`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from promptkit.errors import WorkspaceError
from promptkit.logging import get_logger
from promptkit.secrets import redact_secrets
from promptkit.workspace.files import DEFAULT_MAX_FILE_BYTES, SkipReason, select_files
from promptkit.workspace.globs import PathFilter
from promptkit.workspace.layout import (
    DirectoryCount,
    LanguageCount,
    count_languages,
    count_layout,
    is_notable,
)
from promptkit.workspace.manifest import WorkspaceManifest, manifest_for_selection
from promptkit.workspace.reading import HOST_READER, WorkspaceReader
from promptkit.workspace.tooling import ToolCommand, ToolingCollector, Workflow, parse_workflow

__all__ = [
    "DirectoryCount",
    "LanguageCount",
    "ScanRoot",
    "WatchOut",
    "WorkspaceFacts",
    "extract_watch_outs",
    "scan_roots",
    "scan_workspace",
]

_log = get_logger("promptkit.workspace")

_CONFIG_READ_LIMIT = 256 * 1024
_MAX_CONFIG_FILES = 40
_MAX_CI_FILES = 20
_MAX_GUIDANCE_FILES = 8
_MAX_WATCH_OUTS_PER_FILE = 24


@dataclass(frozen=True, slots=True)
class WatchOut:
    """A short imperative sentence from contributor or agent guidance, and its file."""

    source: str
    text: str


@dataclass(frozen=True, slots=True)
class WorkspaceFacts:
    """What `scan_workspace` found; every collection is sorted, so equal trees give equal facts.

    `skipped` counts files left out of the selection by reason (binary, too_large, credential...).
    `commands` are ordered by purpose, then with the project's own task runners first.
    """

    manifest: WorkspaceManifest
    file_count: int
    skipped: tuple[tuple[SkipReason, int], ...]
    root_file_count: int
    languages: tuple[LanguageCount, ...]
    layout: tuple[DirectoryCount, ...]
    notable_files: tuple[str, ...]
    projects: tuple[str, ...]
    tools: tuple[str, ...]
    commands: tuple[ToolCommand, ...]
    workflows: tuple[Workflow, ...]
    watch_outs: tuple[WatchOut, ...]


@dataclass(frozen=True, slots=True)
class ScanRoot:
    """One directory a scan covers: its host `path`, the folder its files appear under in the
    facts (`prefix`, "" for the top, "docs" for a mount at `/docs`), and `PathGlob` globs over
    paths relative to `path` (`include`: keep only matches; `exclude`: leave out matches and
    everything under a matching directory)."""

    path: str | os.PathLike[str]
    prefix: str = ""
    include: tuple[str, ...] = field(default=())
    exclude: tuple[str, ...] = field(default=())


def scan_workspace(
    path: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    reader: WorkspaceReader = HOST_READER,
) -> WorkspaceFacts:
    """Scan the workspace at `path`; raises WorkspaceError when it is not a directory."""
    root = ScanRoot(path, include=tuple(include), exclude=tuple(exclude))
    return scan_roots([root], max_file_bytes=max_file_bytes, reader=reader)


def scan_roots(
    roots: Sequence[ScanRoot],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    reader: WorkspaceReader = HOST_READER,
) -> WorkspaceFacts:
    """Scan several directories as one workspace (the mounts of a workspace section).

    The manifest describes the first root, over all its files: the globs narrow what the facts
    describe, not the fingerprint a later freshness check recomputes for that directory.
    WorkspaceError when a root is not a directory.
    """
    if not roots:
        raise WorkspaceError("scan_roots needs at least one directory to scan")
    located: dict[str, tuple[Path, str]] = {}
    skipped: Counter[SkipReason] = Counter()
    manifest: WorkspaceManifest | None = None
    for scan_root in roots:
        selection = select_files(scan_root.path, max_file_bytes=max_file_bytes)
        if manifest is None:
            manifest = manifest_for_selection(selection)
        path_filter = PathFilter.of(scan_root.include, scan_root.exclude)
        prefix = scan_root.prefix.strip("/")
        for file in selection.files:
            if path_filter.allows(file.path):
                shown = f"{prefix}/{file.path}" if prefix else file.path
                located[shown] = (selection.root, file.path)
        skipped.update(dict(selection.skipped))
    assert manifest is not None
    paths = sorted(located)
    present = frozenset(paths)

    def read(shown: str) -> str | None:
        root, relative = located[shown]
        try:
            raw = reader.read(root, relative, limit=_CONFIG_READ_LIMIT)
        except WorkspaceError as error:
            _log.warning("workspace_file_unreadable", path=shown, error=str(error))
            return None
        return redact_secrets(raw.decode("utf-8", errors="replace"))

    collector = ToolingCollector(present=present)
    config_paths = sorted(filter(_is_config_file, paths), key=lambda p: (p.count("/"), p))
    for relative in config_paths[:_MAX_CONFIG_FILES]:
        _parse_config(collector, relative, read)
    workflows: list[Workflow] = []
    for relative in sorted(filter(_is_ci_file, paths))[:_MAX_CI_FILES]:
        text = read(relative)
        if text is not None:
            workflows.append(parse_workflow(relative, text))
    watch_outs: list[WatchOut] = []
    for relative in _guidance_files(paths):
        text = read(relative)
        if text is not None:
            watch_outs.extend(extract_watch_outs(relative, text))
    root_files = sum(1 for p in paths if "/" not in p)
    return WorkspaceFacts(
        manifest=manifest,
        file_count=len(paths),
        skipped=tuple(sorted(skipped.items())),
        root_file_count=root_files,
        languages=count_languages(paths),
        layout=count_layout(paths),
        notable_files=tuple(sorted(p for p in paths if is_notable(p))),
        projects=tuple(sorted(set(collector.projects))),
        tools=tuple(sorted(collector.tools | _tools_from_ci(workflows))),
        commands=_ordered_commands(collector.commands),
        workflows=tuple(workflows),
        watch_outs=tuple(watch_outs),
    )


# -- configuration -----------------------------------------------------------------------------

# Text parsers take (source, directory, text).
_ConfigParser = Callable[[ToolingCollector, str, str, str], None]

_TEXT_PARSERS: Mapping[str, _ConfigParser] = {
    "pyproject.toml": ToolingCollector.parse_pyproject,
    "setup.cfg": ToolingCollector.parse_setup_cfg,
    "tox.ini": ToolingCollector.parse_tox_ini,
    "noxfile.py": ToolingCollector.parse_noxfile,
    "Makefile": ToolingCollector.parse_makefile,
    "makefile": ToolingCollector.parse_makefile,
    "GNUmakefile": ToolingCollector.parse_makefile,
    "justfile": ToolingCollector.parse_justfile,
    "Justfile": ToolingCollector.parse_justfile,
    ".justfile": ToolingCollector.parse_justfile,
    "package.json": ToolingCollector.parse_package_json,
    "Cargo.toml": ToolingCollector.parse_cargo_toml,
    "go.mod": ToolingCollector.parse_go_mod,
    ".pre-commit-config.yaml": ToolingCollector.parse_pre_commit,
}
# Parsers of files whose presence is the fact: they take (name, source, directory).
_PRESENCE_PARSERS: Mapping[str, _ConfigParser] = {
    **dict.fromkeys(
        ("pytest.ini", "ruff.toml", ".ruff.toml", "mypy.ini", ".mypy.ini", ".flake8"),
        ToolingCollector.parse_python_config,
    ),
    "pyrightconfig.json": ToolingCollector.parse_python_config,
    **dict.fromkeys(
        ("pom.xml", "build.gradle", "build.gradle.kts", "CMakeLists.txt", "tsconfig.json"),
        ToolingCollector.parse_build_file,
    ),
}


def _is_config_file(relative: str) -> bool:
    """Whether `relative` is configuration the scan reads (or notes by its presence).

    Only the root and its direct subdirectories are looked at: deeper manifests belong to
    fixtures, examples and vendored code more often than to the project's workflow.
    """
    name = relative.rpartition("/")[2]
    return relative.count("/") <= 1 and (name in _TEXT_PARSERS or name in _PRESENCE_PARSERS)


def _parse_config(
    collector: ToolingCollector, relative: str, read: Callable[[str], str | None]
) -> None:
    directory, _, name = relative.rpartition("/")
    presence = _PRESENCE_PARSERS.get(name)
    if presence is not None:
        presence(collector, name, relative, directory)
        return
    text = read(relative)
    if text is not None:
        _TEXT_PARSERS[name](collector, relative, directory, text)


_PURPOSE_ORDER = {"test": 0, "lint": 1, "format": 2, "typecheck": 3, "build": 4, "other": 5}
# A project's own task runner says how it wants a check run; a tool's config only says it is used.
_RUNNER_SOURCES = ("Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", ".justfile")


def _ordered_commands(commands: list[ToolCommand]) -> tuple[ToolCommand, ...]:
    # Within one file the parser's order stands (the sort is stable): it lists a tool's own
    # command before the scripts that wrap it.
    def rank(command: ToolCommand) -> tuple[int, int, int, str]:
        source_name = command.source.rpartition("/")[2]
        is_runner = source_name in _RUNNER_SOURCES or source_name == "package.json"
        depth = command.source.count("/")
        return (_PURPOSE_ORDER[command.purpose], depth, 0 if is_runner else 1, command.source)

    seen: set[str] = set()
    ordered: list[ToolCommand] = []
    for command in sorted(commands, key=rank):
        if command.command not in seen:
            seen.add(command.command)
            ordered.append(command)
    return tuple(ordered)


# -- CI ----------------------------------------------------------------------------------------

_CI_FILES = frozenset(
    {
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        "Jenkinsfile",
        "azure-pipelines.yml",
        ".travis.yml",
        "bitbucket-pipelines.yml",
        ".buildkite/pipeline.yml",
    }
)
_CI_TOOLS = (
    (".github/workflows/", "github-actions"),
    (".gitlab-ci.yml", "gitlab-ci"),
    (".circleci/", "circleci"),
    ("Jenkinsfile", "jenkins"),
    ("azure-pipelines.yml", "azure-pipelines"),
    (".travis.yml", "travis-ci"),
    ("bitbucket-pipelines.yml", "bitbucket-pipelines"),
    (".buildkite/", "buildkite"),
)


def _is_ci_file(relative: str) -> bool:
    if relative in _CI_FILES:
        return True
    directory, _, name = relative.rpartition("/")
    return directory == ".github/workflows" and name.endswith((".yml", ".yaml"))


def _tools_from_ci(workflows: list[Workflow]) -> set[str]:
    return {
        tool
        for workflow in workflows
        for prefix, tool in _CI_TOOLS
        if workflow.path.startswith(prefix)
    }


# -- guidance and watch-outs -------------------------------------------------------------------

_GUIDANCE_NAMES = ("AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md")
_CONTRIBUTING = re.compile(r"(?:|\.github/|docs/)CONTRIBUTING(?:\.md|\.rst|\.txt)?", re.IGNORECASE)


def _guidance_files(paths: list[str]) -> list[str]:
    """Agent guidance first (AGENTS.md, CLAUDE.md, shallowest first), then CONTRIBUTING."""
    agent = [
        p
        for p in paths
        if p.rpartition("/")[2] in ("AGENTS.md", "CLAUDE.md") or p in _GUIDANCE_NAMES
    ]
    agent.sort(key=lambda p: (p.count("/"), p))
    contributing = sorted(p for p in paths if _CONTRIBUTING.fullmatch(p))
    return (agent[: _MAX_GUIDANCE_FILES - 1] + contributing)[:_MAX_GUIDANCE_FILES]


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
