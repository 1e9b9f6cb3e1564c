"""`scan_workspace`: task-agnostic facts about a workspace, gathered fast and without secrets.

The scan lists files once (see `select_files`; listing opens no file), counts languages and
top-level layout from the names alone, and opens only a handful of files, each only as far as
its parser needs: the project's configuration (see
`promptkit.repofacts._tooling`), its CI files, the guidance written for contributors and agents
(`promptkit.repofacts._guidance`), what notable folders say about themselves
(`promptkit.repofacts._folders`) and the first entry points' re-exports
(`promptkit.repofacts._public_api`). Every file is read through one seam, `read(path, limit)`,
backed by the caller's `WorkspaceReader`, and its text passes through `redact_secrets` before
anything is parsed out of it, so no credential reaches `WorkspaceFacts`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from promptkit._gc import collector_paused
from promptkit.errors import WorkspaceError
from promptkit.hostfiles import (
    DEFAULT_MAX_FILE_BYTES,
    HOST_READER,
    SkipReason,
    WorkspaceManifest,
    WorkspaceReader,
    manifest_for_selection,
    read_workspace_bytes,
    select_files,
)
from promptkit.logging import get_logger
from promptkit.repofacts._docs_site import DocsSite, docs_site
from promptkit.repofacts._folders import FolderNote, describe_folders
from promptkit.repofacts._guidance import Evidence, NamedPaths, WatchOut, read_guidance
from promptkit.repofacts._landmarks import (
    AgentSkill,
    agent_docs,
    agent_skills,
    build_logic,
    contributor_docs,
    entry_points,
    generated_folders,
    is_notable,
    largest_modules,
)
from promptkit.repofacts._public_api import reexported_modules
from promptkit.repofacts._suites import SuiteFolder, docs_checks, module_tests, suite_folders
from promptkit.repofacts._tally import DirectoryCount, LanguageCount, NameTally, is_code
from promptkit.repofacts._tooling import (
    LOCKFILE_NAMES,
    FileReader,
    ToolCommand,
    ToolingCollector,
    Workflow,
    add_ci_checks,
    checks_a_change,
    ci_programs,
    ci_systems,
    classify_command,
    config_files,
    is_ci_file,
    is_side_workflow,
    is_typed_by_hand,
    parse_config_file,
    parse_workflow,
    rank_commands,
    ranked_tools,
    script_folders,
)
from promptkit.secrets import redact_secrets

__all__ = [
    "DirectoryCount",
    "LanguageCount",
    "ScanRoot",
    "WorkspaceFacts",
    "scan_roots",
    "scan_workspace",
]

_log = get_logger("promptkit.workspace")

_CONFIG_READ_LIMIT = 256 * 1024
_MAX_CONFIG_FILES = 80
_MAX_CI_FILES = 48
_MAX_LARGEST_MODULES = 10
_MAX_NAMED_MODULES = 60


@dataclass(frozen=True, slots=True)
class WorkspaceFacts:
    """What `scan_workspace` found; every collection is sorted, so equal trees give equal facts.

    `skipped` counts files left out of the selection by reason (binary, too_large, credential...).
    `commands` are ranked, most canonical first (see `promptkit.repofacts._tooling.ranking`).
    `folders` say what the notable folders are for; `guidance_files` are the agent and
    contributor files that were read (each once); `entry_points` are where code starts (a Go
    command's main.go, a package's index.ts or __init__.py, a crate's lib.rs); `root_files`
    are the names of the files at the top level; `contributor_docs` the docs in folders
    written for contributors; `skills` the agent skills and `agent_docs` the other docs kept
    for coding agents (`.agents/`, `.claude/`, `.github/instructions/`); `largest_modules`
    the largest hand-written source files, `more_modules` the next ones by size (named as
    room allows), `build_logic` the files a build keeps its shared logic in (CMake modules,
    MSBuild `.props`, sbt's `project/`) and `generated_folders` the folders of generated
    code (see `promptkit.repofacts._landmarks`); `named_paths` the files and folders the
    guidance and the README point at (see `promptkit.repofacts._guidance`); `docs_site` the
    documentation site, if any (see `promptkit.repofacts._docs_site`); `suites` the largest
    test suites and `docs_checks` the tests that run the docs' examples, `module_tests` the
    tests named for the largest modules (see `promptkit.repofacts._suites`);
    `exported_modules` the source files packages export by subpath (package.json `exports`)
    and `reexported_modules` the modules the first entry points re-export (see
    `promptkit.repofacts._public_api`).
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
    agent_docs: tuple[str, ...] = ()
    largest_modules: tuple[str, ...] = ()
    more_modules: tuple[str, ...] = ()
    generated_folders: tuple[str, ...] = ()
    build_logic: tuple[str, ...] = ()
    named_paths: tuple[NamedPaths, ...] = ()
    docs_site: DocsSite | None = None
    suites: tuple[SuiteFolder, ...] = ()
    docs_checks: tuple[str, ...] = ()
    module_tests: tuple[str, ...] = ()
    exported_modules: tuple[str, ...] = ()
    reexported_modules: tuple[str, ...] = ()


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
    with collector_paused():
        return _scan(roots, max_file_bytes, reader)


# The scan in the order its facts depend on each other: listing, tally, tooling, guidance.
def _scan(  # noqa: C901, PLR0915
    roots: Sequence[ScanRoot], max_file_bytes: int, reader: WorkspaceReader
) -> WorkspaceFacts:
    prefixes: list[tuple[str, Path]] = []
    shown_paths: list[str] = []
    file_sizes: list[int] = []
    skipped: Counter[SkipReason] = Counter()
    manifest: WorkspaceManifest | None = None
    for scan_root in roots:
        selection = select_files(scan_root.path, max_file_bytes=max_file_bytes)
        if manifest is None:
            manifest = manifest_for_selection(selection)
        selection = selection.narrowed(scan_root.include, scan_root.exclude)
        prefix = scan_root.prefix.strip("/")
        prefixes.append((prefix, selection.root))
        if prefix:
            shown_paths.extend(f"{prefix}/{file.path}" for file in selection.files)
        else:
            shown_paths.extend(file.path for file in selection.files)
        file_sizes.extend(file.size for file in selection.files)
        skipped.update(dict(selection.skipped))
    assert manifest is not None
    # One root's files come sorted; several are merged.
    paths = shown_paths if len(roots) == 1 else sorted(shown_paths)
    sizes = dict(zip(shown_paths, file_sizes, strict=True))
    # Deepest prefix first, so a file maps to the root it was listed under.
    by_prefix = sorted(prefixes, key=lambda item: -len(item[0]))

    def locate(shown: str) -> tuple[Path, str] | None:
        # A listed file, or one the parsers look up by name (a lockfile the size cap left out),
        # maps through the root whose prefix it is under.
        for prefix, root in by_prefix:
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

    present = frozenset(paths)
    tally = NameTally(paths)
    workflows = _workflows(paths, present, read)
    scripts = script_folders(paths)
    configs = config_files(paths, scripts)[:_MAX_CONFIG_FILES]
    lockfiles = _lockfiles(locate, {config.rpartition("/")[0] for config in configs})
    collector = ToolingCollector(
        present=present | lockfiles,
        read=read,
        ci_lines=tuple(line for workflow in workflows for line in workflow.commands),
        script_folders=scripts,
    )
    tool_depths: dict[str, int] = {}
    for relative in configs:
        known = set(collector.tools)
        parse_config_file(collector, relative)
        for tool in collector.tools - known:
            tool_depths[tool] = relative.count("/")
    add_ci_checks(collector, workflows, read)
    collector.add_package_defaults()
    programs = ci_programs(workflows)
    evidence = Evidence(
        present=present, programs=frozenset(collector.programs | collector.tools | set(programs))
    )
    guidance = read_guidance(paths, read, evidence)
    for documented in guidance.commands:
        collector.add(
            classify_command(documented.command),
            documented.command,
            documented.source,
            standing="documented",
        )
    commands = rank_commands(
        collector.commands,
        [workflow for workflow in workflows if checks_a_change(workflow)],
        (documented.command for documented in guidance.commands),
        programs,
        collector.build_owner,
    )
    tools = ranked_tools(collector.tools, tool_depths, programs, ci_systems(workflows))
    ranked_modules = largest_modules(sizes, read, is_code, _MAX_NAMED_MODULES)
    modules = ranked_modules[:_MAX_LARGEST_MODULES]
    starts = entry_points(paths)
    return WorkspaceFacts(
        manifest=manifest,
        file_count=len(paths),
        skipped=tuple(sorted(skipped.items())),
        root_file_count=tally.root_file_count,
        languages=tally.languages(),
        layout=tally.layout(),
        notable_files=tuple(
            sorted(
                {p for p in paths if is_notable(p)} | {p for p in lockfiles if is_notable(p)},
                key=lambda p: (p.count("/"), p),
            )
        ),
        projects=collector.project_lines(),
        tools=tools,
        commands=commands,
        workflows=tuple(workflows),
        watch_outs=guidance.watch_outs,
        folders=describe_folders(
            tally.files_per_folder(), tally.files_per_folder(code_only=True), present, read
        ),
        guidance_files=guidance.files,
        entry_points=starts,
        root_files=tuple(p for p in paths if "/" not in p),
        contributor_docs=contributor_docs(paths),
        skills=agent_skills(paths, read),
        agent_docs=agent_docs(paths),
        largest_modules=modules,
        more_modules=ranked_modules[_MAX_LARGEST_MODULES:],
        generated_folders=generated_folders(paths),
        build_logic=build_logic(paths),
        named_paths=guidance.named_paths,
        docs_site=docs_site(paths),
        suites=suite_folders(paths),
        docs_checks=docs_checks(paths),
        module_tests=module_tests(modules, paths),
        exported_modules=tuple(sorted(collector.exported_modules)),
        reexported_modules=reexported_modules(starts, present, read, known=modules),
    )


def _workflows(paths: list[str], present: frozenset[str], read: FileReader) -> list[Workflow]:
    """The CI files' commands, the workflows that check a change first (see
    `Workflow.checks_changes`)."""
    # Those whose name says they release come last: a bound keeps the checks.
    ci_files = sorted(
        (path for path in paths if path.count("/") <= 3 and is_ci_file(path)),
        key=lambda path: (is_side_workflow(path), path),
    )
    workflows: list[Workflow] = []
    for relative in ci_files[:_MAX_CI_FILES]:
        text = read(relative)
        if text is not None:
            parsed = parse_workflow(relative, text)
            runnable = tuple(line for line in parsed.commands if is_typed_by_hand(line, present))
            workflows.append(replace(parsed, runnable=runnable))
    return sorted(workflows, key=lambda workflow: not workflow.checks_changes)


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
