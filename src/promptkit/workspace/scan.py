"""`scan_workspace`: task-agnostic facts about a workspace, gathered fast and without secrets.

The scan lists files once (see `select_files`; listing opens no file), counts languages and
top-level layout from the names alone, and opens only a handful of files, each only as far as
its parser needs: the project's configuration (see
`promptkit.workspace.tooling`), its CI files, the guidance written for contributors and agents
(`promptkit.workspace.guidance`) and what notable folders say about themselves
(`promptkit.workspace.folders`). Every file is read through one seam, `read(path, limit)`,
backed by the caller's `WorkspaceReader`, and its text passes through `redact_secrets` before
anything is parsed out of it, so no credential reaches `WorkspaceFacts`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from promptkit.errors import WorkspaceError
from promptkit.logging import get_logger
from promptkit.secrets import redact_secrets
from promptkit.workspace.files import DEFAULT_MAX_FILE_BYTES, SkipReason, select_files
from promptkit.workspace.folders import FolderNote, describe_folders
from promptkit.workspace.globs import PathFilter
from promptkit.workspace.guidance import WatchOut, as_command, read_guidance
from promptkit.workspace.landmarks import (
    AgentSkill,
    agent_skills,
    contributor_docs,
    entry_points,
    is_notable,
    largest_modules,
)
from promptkit.workspace.manifest import WorkspaceManifest, manifest_for_selection
from promptkit.workspace.reading import HOST_READER, WorkspaceReader, read_workspace_bytes
from promptkit.workspace.tooling import (
    LOCKFILE_NAMES,
    ToolCommand,
    ToolingCollector,
    Workflow,
    classify_command,
    config_files,
    invoked_script,
    parse_config_file,
    parse_workflow,
    rank_commands,
    script_commands,
)

__all__ = [
    "DirectoryCount",
    "LanguageCount",
    "ScanRoot",
    "WorkspaceFacts",
    "is_typed_by_hand",
    "scan_roots",
    "scan_workspace",
]

_log = get_logger("promptkit.workspace")

_CONFIG_READ_LIMIT = 256 * 1024
_MAX_CONFIG_FILES = 80
_MAX_CI_FILES = 20
_SUBDIRECTORIES_PER_DIRECTORY = 4


@dataclass(frozen=True, slots=True)
class LanguageCount:
    """How many selected files are in `language`; `is_code` separates code from docs/data."""

    language: str
    files: int
    is_code: bool


@dataclass(frozen=True, slots=True)
class DirectoryCount:
    """Files under a directory (`path` ends with "/"), with its largest subdirectories."""

    path: str
    files: int
    subdirectories: tuple[DirectoryCount, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkspaceFacts:
    """What `scan_workspace` found; every collection is sorted, so equal trees give equal facts.

    `skipped` counts files left out of the selection by reason (binary, too_large, credential...).
    `commands` are ranked, most canonical first (see `promptkit.workspace.tooling.ranking`).
    `folders` say what the notable folders are for; `guidance_files` are the agent and
    contributor files that were read (each once); `entry_points` are where code starts (a Go
    command's main.go, a package's index.ts or __init__.py, a crate's lib.rs); `root_files`
    are the names of the files at the top level; `contributor_docs` the docs in folders
    written for contributors; `skills` the agent skills; `largest_modules` the largest
    hand-written source files (see `promptkit.workspace.landmarks`).
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
    folders: tuple[FolderNote, ...] = ()
    guidance_files: tuple[str, ...] = ()
    entry_points: tuple[str, ...] = ()
    root_files: tuple[str, ...] = ()
    contributor_docs: tuple[str, ...] = ()
    skills: tuple[AgentSkill, ...] = ()
    largest_modules: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScanRoot:
    """One directory a scan covers: its host `path`, the folder its files appear under in the
    facts (`prefix`, "" for the top, "docs" for a mount at `/docs`), and `PathGlob` globs over
    paths relative to `path` (`include`: keep only matches; `exclude`: leave out matches and
    everything under a matching directory)."""

    path: str | os.PathLike[str]
    prefix: str = ""
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


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
    sizes: dict[str, int] = {}
    prefixes: list[tuple[str, Path]] = []
    skipped: Counter[SkipReason] = Counter()
    manifest: WorkspaceManifest | None = None
    for scan_root in roots:
        selection = select_files(scan_root.path, max_file_bytes=max_file_bytes)
        if manifest is None:
            manifest = manifest_for_selection(selection)
        path_filter = PathFilter.of(scan_root.include, scan_root.exclude)
        prefix = scan_root.prefix.strip("/")
        prefixes.append((prefix, selection.root))
        for file in selection.files:
            if path_filter.allows(file.path):
                shown = f"{prefix}/{file.path}" if prefix else file.path
                located[shown] = (selection.root, file.path)
                sizes[shown] = file.size
        skipped.update(dict(selection.skipped))
    assert manifest is not None
    paths = sorted(located)

    def locate(shown: str) -> tuple[Path, str] | None:
        # Listed files map directly; a file the parsers look up by name (a lockfile the size cap
        # left out) maps through the root whose prefix it is under.
        found = located.get(shown)
        if found is not None:
            return found
        for prefix, root in sorted(prefixes, key=lambda item: -len(item[0])):
            if not prefix:
                return root, shown
            if shown.startswith(prefix + "/"):
                return root, shown[len(prefix) + 1 :]
        return None

    def read(shown: str, limit: int = _CONFIG_READ_LIMIT) -> str | None:
        where = locate(shown)
        if where is None:
            return None
        try:
            raw = reader.read(where[0], where[1], limit=limit)
        except WorkspaceError as error:
            _log.warning("workspace_file_unreadable", path=shown, error=str(error))
            return None
        return redact_secrets(raw.decode("utf-8", errors="replace"))

    configs = config_files(paths)[:_MAX_CONFIG_FILES]
    lockfiles = _lockfiles(locate, {config.rpartition("/")[0] for config in configs})
    collector = ToolingCollector(present=frozenset(paths) | lockfiles, read=read)
    for relative in configs:
        parse_config_file(collector, relative)
    workflows: list[Workflow] = []
    for relative in sorted(filter(_is_ci_file, paths))[:_MAX_CI_FILES]:
        text = read(relative)
        if text is not None:
            workflows.append(parse_workflow(relative, text))
    _add_ci_checks(collector, workflows, frozenset(paths), read)
    guidance = read_guidance(paths, read)
    for documented in guidance.commands:
        collector.add(
            classify_command(documented.command),
            documented.command,
            documented.source,
            standing="documented",
        )
    commands = rank_commands(
        collector.commands, workflows, (documented.command for documented in guidance.commands)
    )
    return WorkspaceFacts(
        manifest=manifest,
        file_count=len(paths),
        skipped=tuple(sorted(skipped.items())),
        root_file_count=sum(1 for p in paths if "/" not in p),
        languages=_languages(paths),
        layout=_layout(paths),
        notable_files=tuple(
            sorted(
                {p for p in paths if is_notable(p)} | {p for p in lockfiles if is_notable(p)},
                key=lambda p: (p.count("/"), p),
            )
        ),
        projects=tuple(sorted(set(collector.projects))),
        tools=tuple(sorted(collector.tools | _tools_from_ci(workflows))),
        commands=commands,
        workflows=tuple(workflows),
        watch_outs=guidance.watch_outs,
        folders=describe_folders(paths, read, _is_code),
        guidance_files=guidance.files,
        entry_points=entry_points(paths),
        root_files=tuple(p for p in paths if "/" not in p),
        contributor_docs=contributor_docs(paths),
        skills=agent_skills(paths, read),
        largest_modules=largest_modules(sizes, read, _is_code),
    )


_SIDE_WORKFLOW = re.compile(r"release|publish|bench|deploy|nightly|docs|binar", re.IGNORECASE)
_SETUP_WORD = re.compile(r"\b(?:install|add|setup|sync|download|upload|cache)\b")
_MAX_CI_COMMAND = 90
_MAX_CI_SCRIPTS = 8
_CI_SCRIPT_READ_LIMIT = 64 * 1024
_INFO_ONLY = re.compile(r"\s(?:--help|-h|--version|-V|version)\s*$")


def _add_ci_checks(
    collector: ToolingCollector,
    workflows: list[Workflow],
    present: frozenset[str],
    read: Callable[[str, int], str | None],
) -> None:
    """The checks CI runs are canonical even when no runner file names them, and so are the
    checks in a repository script that CI runs (`./.ci/run test`, `script/test`): the call
    shows the script's check of its kind as what it runs. Release, benchmark and deploy
    workflows run builds nobody types by hand: they are skipped."""
    calls: dict[str, list[tuple[str, str]]] = {}
    for workflow in workflows:
        if _SIDE_WORKFLOW.search(workflow.path) is not None:
            continue
        for line in workflow.commands:
            script = invoked_script(line, present)
            if script is not None and _is_shell_script(script):
                calls.setdefault(script, []).append((line, workflow.path))
                continue
            command = as_command(line) if is_typed_by_hand(line) else None
            purpose = classify_command(command) if command is not None else "other"
            if command is not None and purpose != "other":
                collector.add(purpose, command, workflow.path, standing="ci")
    for script, script_calls in list(calls.items())[:_MAX_CI_SCRIPTS]:
        # A script's own variables are set as it runs: a line that uses one is not typeable.
        checks = [
            (classify_command(line), line)
            for line in script_commands(read(script, _CI_SCRIPT_READ_LIMIT) or "")
            if "$" not in line and is_typed_by_hand(line) and as_command(line) is not None
        ]
        checks = [(purpose, line) for purpose, line in checks if purpose != "other"]
        for line, source in script_calls:
            purpose = classify_command(line)
            if purpose != "other" and is_typed_by_hand(line):
                # What the call runs is clear only when the script has one check of its kind.
                same_kind = [check for kind, check in checks if kind == purpose]
                runs = same_kind[0] if len(same_kind) == 1 else None
                collector.add(purpose, line, source, runs, standing="ci")
        for purpose, line in checks:
            collector.add(purpose, line, script, standing="ci")


def _is_shell_script(path: str) -> bool:
    name = path.rpartition("/")[2]
    return "." not in name.lstrip(".") or name.endswith((".sh", ".bash"))


def is_typed_by_hand(line: str) -> bool:
    """Whether a CI line is a check a contributor could type (no CI variables, no setup, not
    a smoke test that the tool starts, such as `ruff --help`)."""
    return (
        len(line) <= _MAX_CI_COMMAND
        and "${{" not in line
        and "$(" not in line
        # A flag such as `--no-sync` says how, not that the line sets something up.
        and _SETUP_WORD.search(" ".join(w for w in line.split() if not w.startswith("-"))) is None
        and _INFO_ONLY.search(line) is None
    )


def _lockfiles(
    locate: Callable[[str], tuple[Path, str] | None], directories: set[str]
) -> frozenset[str]:
    """Lockfiles in `directories`, found by name whatever their size (the selection may have
    left a large one out): a lockfile's name is what tells the runner. None is read: a read of
    0 bytes through the confined read path only says the file is there."""
    found: set[str] = set()
    for directory in sorted(directories | {""}):
        for name in LOCKFILE_NAMES:
            relative = f"{directory}/{name}" if directory else name
            where = locate(relative)
            if where is None:
                continue
            try:
                read_workspace_bytes(where[0], where[1], limit=0)
            except WorkspaceError:
                continue
            found.add(relative)
    return frozenset(found)


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


# -- names only: languages, layout, notable files ----------------------------------------------

# Extension (or exact file name) -> (language, is code).
_LANGUAGES: Mapping[str, tuple[str, bool]] = {
    **dict.fromkeys((".py", ".pyi", ".pyx"), ("Python", True)),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), ("JavaScript", True)),
    **dict.fromkeys((".ts", ".mts", ".cts", ".tsx"), ("TypeScript", True)),
    ".go": ("Go", True),
    ".rs": ("Rust", True),
    ".java": ("Java", True),
    **dict.fromkeys((".kt", ".kts"), ("Kotlin", True)),
    ".scala": ("Scala", True),
    ".rb": ("Ruby", True),
    ".php": ("PHP", True),
    **dict.fromkeys((".c", ".h"), ("C", True)),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"), ("C++", True)),
    ".cs": ("C#", True),
    ".swift": ("Swift", True),
    **dict.fromkeys((".m", ".mm"), ("Objective-C", True)),
    **dict.fromkeys((".sh", ".bash", ".zsh"), ("Shell", True)),
    ".ps1": ("PowerShell", True),
    ".lua": ("Lua", True),
    **dict.fromkeys((".pl", ".pm"), ("Perl", True)),
    ".r": ("R", True),
    ".jl": ("Julia", True),
    ".dart": ("Dart", True),
    **dict.fromkeys((".ex", ".exs"), ("Elixir", True)),
    **dict.fromkeys((".erl", ".hrl"), ("Erlang", True)),
    ".hs": ("Haskell", True),
    **dict.fromkeys((".ml", ".mli"), ("OCaml", True)),
    **dict.fromkeys((".clj", ".cljs"), ("Clojure", True)),
    ".zig": ("Zig", True),
    ".sql": ("SQL", True),
    ".vue": ("Vue", True),
    ".svelte": ("Svelte", True),
    **dict.fromkeys((".html", ".htm"), ("HTML", True)),
    **dict.fromkeys((".css", ".scss", ".sass", ".less"), ("CSS", True)),
    ".tf": ("Terraform", True),
    ".proto": ("Protocol Buffers", True),
    ".ipynb": ("Jupyter Notebook", True),
    "Dockerfile": ("Dockerfile", True),
    "Makefile": ("Makefile", True),
    **dict.fromkeys((".md", ".markdown"), ("Markdown", False)),
    ".rst": ("reStructuredText", False),
    ".txt": ("Text", False),
    ".toml": ("TOML", False),
    **dict.fromkeys((".yaml", ".yml"), ("YAML", False)),
    ".json": ("JSON", False),
    ".xml": ("XML", False),
    **dict.fromkeys((".ini", ".cfg"), ("INI", False)),
    ".csv": ("CSV", False),
}


def _language(relative: str) -> tuple[str, bool] | None:
    name = relative.rpartition("/")[2]
    language = _LANGUAGES.get(name)
    if language is None:
        dot = name.rfind(".")
        if dot > 0:
            language = _LANGUAGES.get(name[dot:].lower())
    return language


def _is_code(relative: str) -> bool:
    language = _language(relative)
    return language is not None and language[1]


def _languages(paths: list[str]) -> tuple[LanguageCount, ...]:
    counts: Counter[tuple[str, bool]] = Counter()
    for relative in paths:
        language = _language(relative)
        if language is not None:
            counts[language] += 1
    return tuple(
        LanguageCount(language=language, files=count, is_code=is_code)
        for (language, is_code), count in sorted(
            counts.items(), key=lambda item: (-item[1], item[0][0])
        )
    )


def _layout(paths: list[str]) -> tuple[DirectoryCount, ...]:
    top: Counter[str] = Counter()
    second: dict[str, Counter[str]] = {}
    for relative in paths:
        parts = relative.split("/", 2)
        if len(parts) == 1:
            continue
        top[parts[0]] += 1
        if len(parts) == 3:
            second.setdefault(parts[0], Counter())[parts[1]] += 1
    return tuple(
        DirectoryCount(
            path=f"{name}/",
            files=count,
            subdirectories=tuple(
                DirectoryCount(path=f"{name}/{child}/", files=child_count)
                for child, child_count in sorted(
                    second.get(name, Counter()).items(), key=lambda item: (-item[1], item[0])
                )[:_SUBDIRECTORIES_PER_DIRECTORY]
            ),
        )
        for name, count in sorted(top.items(), key=lambda item: (-item[1], item[0]))
    )
