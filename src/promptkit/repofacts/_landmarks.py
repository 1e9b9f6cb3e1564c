"""Files worth naming in a digest, found from the listing with a few short reads.

Maintainers' own agent files name the same kinds of files again and again: contributor and
architecture docs (a `CONTRIBUTING.md`, a `contributing/` or `docs/architecture/` folder),
key configuration, the agent skills kept next to the code (`.agents/skills/<name>/SKILL.md`),
where code starts (a Go command's main.go, a package's index.ts or __init__.py, a crate's
lib.rs, the `default.nix` a Nix folder is imported by) and the modules the code revolves
around, which are in practice its largest hand-written source files. This module picks
them out; `scan_workspace` records them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import islice

from promptkit.repofacts._suites import TEST_FILE_NAME, TEST_FOLDER_NAMES
from promptkit.repofacts._tooling import VENDORED_FOLDERS
from promptkit.repofacts._tooling.model import FileReader, one_line

__all__ = [
    "AgentSkill",
    "agent_docs",
    "agent_skills",
    "build_logic",
    "contributor_docs",
    "entry_points",
    "generated_folders",
    "is_notable",
    "largest_modules",
]

# Contributor and architecture docs and key configuration, listed by path.
_NOTABLE_AT_ROOT = re.compile(
    r"(?:README|CONTRIBUTING|ARCHITECTURE|DEVELOPMENT|DEVELOPING|HACKING|SECURITY|"
    r"CHANGELOG|CHANGES)(?:\.[A-Za-z]+)?|AGENTS\.md|CLAUDE\.md|GEMINI\.md|CODEOWNERS|"
    r"pyproject\.toml|setup\.py|setup\.cfg|package\.json|pnpm-workspace\.yaml|turbo\.json|"
    r"nx\.json|Cargo\.toml|go\.mod|go\.work|Makefile|justfile|Taskfile\.ya?ml|tox\.ini|"
    r"noxfile\.py|\.pre-commit-config\.yaml|lefthook\.ya?ml|\.golangci\.ya?ml|"
    r"\.?rustfmt\.toml|clippy\.toml|rust-toolchain(?:\.toml)?|tsconfig\.json|biome\.jsonc?|"
    r"Dockerfile|docker-compose\.ya?ml|compose\.ya?ml|mkdocs\.ya?ml|"
    r"(?:eslint|vitest|vite|jest|playwright|prettier)\.config\.[cm]?[jt]s|\.prettierrc(?:\.\w+)?|"
    r"\.oxlintrc\.json|\.oxfmtrc\.jsonc?|uv\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.work|"
    # Every other ecosystem's build files and the settings its tools read at the top.
    r"(?:settings|build)\.gradle(?:\.kts)?|gradle\.properties|pom\.xml|build\.sbt|"
    r"build\.(?:mill|sc)|CMakeLists\.txt|CMakePresets\.json|meson\.build|meson\.options|"
    r"meson_options\.txt|MODULE\.bazel|WORKSPACE(?:\.bazel)?|BUILD(?:\.bazel)?|\.bazelrc|"
    r"\.bazelversion|build\.zig(?:\.zon)?|Package\.swift|\.swiftlint\.ya?ml|\.swiftformat|"
    r"pubspec\.yaml|melos\.yaml|analysis_options\.yaml|[\w.-]+\.slnx?|global\.json|"
    r"Directory\.(?:Build|Packages)\.(?:props|targets)|NuGet\.config|\.editorconfig|"
    r"Gemfile|Rakefile|[\w.-]+\.gemspec|\.rubocop\.yml|composer\.json|phpunit\.xml(?:\.dist)?|"
    r"phpstan(?:\.dist)?\.neon(?:\.dist)?|\.php-cs-fixer(?:\.dist)?\.php|mix\.exs|"
    r"\.formatter\.exs|flake\.nix|default\.nix|shell\.nix|deno\.jsonc?|bunfig\.toml|"
    r"(?:build|test|restore)\.(?:sh|cmd|ps1)",
    re.IGNORECASE,
)
# Any other configuration file at the top (`dist-workspace.toml`, `tsc-multi.json`): a tool's
# settings for the whole repository. Lockfiles and editor settings say little.
_ROOT_CONFIG = re.compile(
    r"(?!package-lock\.json|bun\.lock|composer\.lock|\.vscode|\.idea)"
    r"[\w.-]+\.(?:toml|json|jsonc|ya?ml)"
)
_NOTABLE_ELSEWHERE = re.compile(
    r"(?:\.github|docs)/(?:CONTRIBUTING(?:\.md|\.rst)?|CODEOWNERS|copilot-instructions\.md|"
    r"ARCHITECTURE\.md|architecture\.md|DEVELOPMENT\.md|development\.md)|"
    r"\.cargo/config\.toml|(?:tests?|src)/(?:[^/]+/){0,2}conftest\.py|"
    r"\.github/(?:PULL_REQUEST_TEMPLATE/[^/]+\.md|pull_request_template\.md)|"
    r"docs/(?:migrations?|migrating|upgrading|upgrade)(?:[^/]*\.md|/[^/]+\.md)|"
    r"\.config/nextest\.toml|\.cursor/rules/[^/]+|(?-i:.*/(?:AGENTS|CLAUDE|GEMINI)\.md)|"
    # The git hooks a repository keeps for its contributors, and the changesets' settings.
    r"\.?githooks/[^/]+|\.husky/[^/]+|\.changeset/config\.json",
    re.IGNORECASE,
)
# A folder of docs for the people who work on the code rather than for its users, at the top
# or under docs/ (`contributing/testing.md`, `docs/architecture/layers.md`, `docs/adr/0001.md`).
_CONTRIBUTOR_DOC = re.compile(
    r"(?:(?:docs?|\.github)/)?"
    r"(?:contributing|architecture|development|developing|developer|design|adrs?|decisions|"
    r"internals|dev-docs|hacking)/(?:[^/]+/)?[^/]+\.(?:md|mdx|rst|txt)",
    re.IGNORECASE,
)
_NESTED_CONTRIBUTING = re.compile(r"[^/.][^/]*/(?:[^/]+/)?CONTRIBUTING\.md", re.IGNORECASE)
# A doc named in capitals beside the docs or the repository's settings (`docs/RELEASING.md`,
# `.github/DEVELOPMENT_GUIDE.md`) is, by convention, for the people who work on the project;
# the community files GitHub shows on its own pages are not about the work, and the guides
# named among the key files are named there.
_CAPITALS_DOC = re.compile(
    r"(?:docs?|\.github)/(?!(?:CODE_OF_CONDUCT|SECURITY|SUPPORT|FUNDING|GOVERNANCE|"
    r"PULL_REQUEST_TEMPLATE|CONTRIBUTING|ARCHITECTURE|DEVELOPMENT)\.)[A-Z][A-Z0-9_-]+\.(?:md|rst|txt)"
)
_ENTRY_POINT = re.compile(
    r"(?:cmd/[^/]+/)?main\.go|(?:(?:packages|apps|libs)/[^/]+/)?src/index\.[cm]?tsx?|"
    r"(?:(?:crates|packages)/[^/]+/)?src/(?:lib|main)\.rs|(?:src/)?[A-Za-z_]\w*/__init__\.py|"
    r"(?:src/)?[A-Za-z_]\w*/__main__\.py|[\w.-]+/default\.nix"
)
# Every entry point ends so: a cheap test that spares the pattern most paths of a big tree.
_ENTRY_POINT_ENDINGS = (
    "main.go", "ts", "tsx", "lib.rs", "main.rs", "__init__.py", "__main__.py", "default.nix"
)  # fmt: skip
_AGENT_FILE_ENDINGS = ("/AGENTS.md", "/CLAUDE.md", "/GEMINI.md")
_MAX_ENTRY_POINTS = 24
_NOT_CODE_HOMES = frozenset({"tests", "test", "docs", "examples", "scripts", "benchmarks"})


def is_notable(relative: str) -> bool:
    """Whether `relative` is a contributor doc or key configuration file worth naming."""
    if "/" not in relative:
        is_root_doc = relative.endswith(".md") and not relative.startswith(("LICENSE", "."))
        return (
            is_root_doc
            or _NOTABLE_AT_ROOT.fullmatch(relative) is not None
            or _ROOT_CONFIG.fullmatch(relative) is not None
        )
    # The cheap test first, for the many deep paths of a big tree: notable files are at most
    # three folders deep (`tests/models/google/conftest.py`), except agent files, which are
    # notable anywhere.
    if relative.count("/") > 3 and not relative.endswith(_AGENT_FILE_ENDINGS):
        return False
    return _NOTABLE_ELSEWHERE.fullmatch(relative) is not None


def contributor_docs(paths: list[str]) -> tuple[str, ...]:
    """Docs in the folders written for contributors, each folder's README first, a folder's
    own contributing guide (`examples/CONTRIBUTING.md`), and the docs named in capitals in
    `docs/` and `.github/` (`docs/RELEASING.md`)."""
    # Both are at most three folders deep (`docs/architecture/layers/x.md`): the cheap test
    # first, for the many deep paths of a big tree.
    found = [
        path
        for path in paths
        if path.count("/") <= 3
        and (
            _CONTRIBUTOR_DOC.fullmatch(path) is not None
            or _NESTED_CONTRIBUTING.fullmatch(path) is not None
            or _CAPITALS_DOC.fullmatch(path) is not None
        )
    ]
    return tuple(
        sorted(
            found,
            key=lambda path: (
                path.count("/"),
                path.rpartition("/")[0],
                not path.rpartition("/")[2].lower().startswith("readme"),
                path,
            ),
        )
    )


def entry_points(paths: list[str]) -> tuple[str, ...]:
    """Where the code starts, shallowest first (bounded: a monorepo has hundreds)."""
    found = [
        path
        for path in paths
        if path.endswith(_ENTRY_POINT_ENDINGS)
        and _ENTRY_POINT.fullmatch(path) is not None
        and path.split("/", 1)[0] not in _NOT_CODE_HOMES
    ]
    return tuple(sorted(found, key=lambda path: (path.count("/"), path))[:_MAX_ENTRY_POINTS])


# -- agent docs --------------------------------------------------------------------------------

# Folders where maintainers keep guidance for coding agents beside their instruction files.
_AGENT_DOC_FOLDERS = (
    ".agents/", ".claude/", ".cursor/", ".gemini/", ".codex/", ".windsurf/",
    ".github/instructions/", ".github/agents/", ".github/prompts/",
)  # fmt: skip
_MAX_AGENT_DOCS = 40


def agent_docs(paths: list[str]) -> tuple[str, ...]:
    """The docs kept for coding agents (`.agents/languages/java.md`, `.claude/architecture/x.md`,
    `.github/instructions/tests.instructions.md`), each folder's README first: what an agent
    is told to read. Skills are named with their descriptions instead (see `agent_skills`)."""
    found = [
        path
        for path in paths
        if path.startswith(_AGENT_DOC_FOLDERS)
        and path.endswith((".md", ".mdc", ".txt"))
        and not path.endswith("/SKILL.md")
        and "/skills/" not in path
    ]
    found.sort(
        key=lambda path: (
            path.count("/"),
            path.rpartition("/")[0],
            not path.rpartition("/")[2].lower().startswith("readme"),
            path,
        )
    )
    return tuple(found[:_MAX_AGENT_DOCS])


# -- agent skills ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgentSkill:
    """A skill kept for coding agents (`<dir>/skills/<name>/SKILL.md`) and what it is for."""

    path: str
    description: str | None


_SKILL = re.compile(r"(?:[^/]+/)?skills/[^/]+/SKILL\.md")
_MAX_SKILLS = 24
_SKILL_READ_LIMIT = 4 * 1024
_MAX_SKILL_DESCRIPTION = 70


def agent_skills(paths: list[str], read: FileReader) -> tuple[AgentSkill, ...]:
    """Agent skills by path, with the `description` of their front matter (bounded)."""
    found = [
        path for path in paths if path.endswith("/SKILL.md") and _SKILL.fullmatch(path) is not None
    ][:_MAX_SKILLS]
    return tuple(
        AgentSkill(path, _skill_description(read(path, _SKILL_READ_LIMIT))) for path in found
    )


def _skill_description(text: str | None) -> str | None:
    if text is None or not text.startswith("---"):
        return None
    front, _, _ = text[3:].partition("\n---")
    match = re.search(r"^description:\s*(.+)$", front, re.MULTILINE)
    if match is None:
        return None
    value = match.group(1).strip().strip("'\"")
    return one_line(value, _MAX_SKILL_DESCRIPTION) if value and value not in "|>" else None


# -- the largest modules -----------------------------------------------------------------------

_MAX_MODULES = 10
_MAX_GENERATED_CHECKS = 30
_HEAD_BYTES = 1024
# Where code is exercised, shown or vendored rather than written: not where it revolves.
_NOT_CORE = frozenset(
    {
        "test", "tests", "testing", "__tests__", "spec", "specs", "e2e", "fixtures", "testdata",
        "docs", "doc", "examples", "example", "benchmarks", "benchmark", "bench", "benches",
        "scripts",
        "vendor", "vendored", "third_party", "node_modules", "generated", "gen", "snapshots",
        "integration_tests", "integration-tests", "playground", "website", "site", "dist",
    }
)  # fmt: skip
# Tests, type declarations (`.d.ts`, `.pyi`) that mirror a module written elsewhere, files
# whose name says a tool wrote them (`.pb.go`, `_pb2.py`, `.generated.ts`, `Model.Generated.cs`)
# and minified bundles (`d3.v7.min.js`), which are someone else's code, shipped.
_NOT_HAND_WRITTEN_NAME = re.compile(
    rf"{TEST_FILE_NAME}|.*\.d\.[cm]?ts|.*\.pyi|"
    r".*\.pb\.\w+|.*_pb2\.py|.*[._-](?i:generated)\.\w+|.*\.gen\.\w+|.*[.-]min\.(?:js|css)"
)
_GENERATED_MARK = re.compile(r"@generated|\bgenerated by\b|\bDO NOT EDIT\b", re.IGNORECASE)


def largest_modules(
    sizes: Mapping[str, int],
    read: FileReader,
    is_code: Callable[[str], bool],
    limit: int = _MAX_MODULES,
) -> tuple[str, ...]:
    """The `limit` largest hand-written source files, outside tests, docs, examples and
    hidden folders.

    A file that says it is generated (`Code generated ... DO NOT EDIT`, `@generated`) in its
    first bytes is skipped; only the few largest candidates are opened to check.
    """
    # Largest first, ties by path (a stable sort of the sorted paths); the tests on each path
    # run only until enough candidates are found, not over every file of a big tree.
    by_size = sorted(sorted(sizes), key=sizes.__getitem__, reverse=True)
    candidates = islice(
        (path for path in by_size if is_code(path) and _is_core(path)),
        limit + _MAX_GENERATED_CHECKS,
    )
    chosen: list[str] = []
    for path in candidates:
        head = read(path, _HEAD_BYTES)
        if head is not None and _GENERATED_MARK.search(head) is None:
            chosen.append(path)
            if len(chosen) == limit:
                break
    return tuple(chosen)


def _is_core(path: str) -> bool:
    *folders, name = path.split("/")
    if not folders or _NOT_HAND_WRITTEN_NAME.fullmatch(name) is not None:
        return False
    # `docs_src/` and `integration-tests/` are docs and tests too: their name's words say so.
    return not any(
        folder.startswith(".")
        or folder.lower() in _NOT_CORE
        or any(word in _NOT_CORE for word in re.split(r"[_\-.]", folder.lower()))
        for folder in folders
    )


# -- generated code ----------------------------------------------------------------------------

_GENERATED_FOLDERS = frozenset({"generated", "__generated__", "_generated", "autogenerated"})
_MAX_GENERATED_FOLDERS = 6


def generated_folders(paths: list[str]) -> tuple[str, ...]:
    """Folders of generated code (`src/generated/`), the largest first: edits there are lost
    when the code is generated again, so a digest names them. One below a test suite or its
    fixtures (`test/fixtures/generated/`) holds test input, not generated code."""
    found: Counter[str] = Counter()
    for path in paths:
        # The cheap test first, for the many paths of a big tree.
        if "generated" not in path:
            continue
        folders = path.split("/")[:-1]
        for depth, folder in enumerate(folders):
            if folder in TEST_FOLDER_NAMES:
                break
            if folder in _GENERATED_FOLDERS:
                found["/".join(folders[: depth + 1])] += 1
                break
    largest = sorted(found, key=lambda path: (-found[path], path))
    return tuple(largest[:_MAX_GENERATED_FOLDERS])


# -- shared build logic ------------------------------------------------------------------------

# The files a build system keeps its shared logic in, beside its entry file: CMake modules and
# settings (`cmake/warnings.cmake`), MSBuild's imported `.props`/`.targets` (`eng/Testing.props`),
# the build code of sbt and Mill under `project/`, Gradle's convention plugins (`buildSrc/`,
# `build-logic/`) and Bazel's macros (`bazel/defs.bzl`).
_BUILD_LOGIC = re.compile(
    r"(?:[^/]+/){0,2}[^/]+\.(?:cmake|props|targets)|"
    r"project/(?:[^/]+/){0,2}[^/]+\.(?:scala|sbt|mill)|"
    r"(?:buildSrc|build-logic)/(?:[^/]+/){0,5}[^/]+\.gradle(?:\.kts)?|"
    r"(?:[^/]+/)?[^/]+\.bzl"
)
_BUILD_LOGIC_ENDINGS = (
    ".cmake",
    ".props",
    ".targets",
    ".scala",
    ".sbt",
    ".mill",
    ".gradle",
    ".kts",
    ".bzl",
)
# Folders whose build files build something else: tests' fixtures, examples (and, at the top,
# other people's code).
_NOT_BUILD_LOGIC = frozenset(
    {"test", "tests", "testdata", "fixtures", "examples", "example", "samples", "benchmarks"}
)
_MAX_BUILD_LOGIC = 16


def build_logic(paths: list[str]) -> tuple[str, ...]:
    """The files that hold a build's shared logic (see `_BUILD_LOGIC`), shallowest first, the
    root's key files (`Directory.Build.props`) left to the notable files."""
    found = [
        path
        for path in paths
        if path.endswith(_BUILD_LOGIC_ENDINGS)
        and "/" in path
        and _BUILD_LOGIC.fullmatch(path) is not None
        and not _NOT_BUILD_LOGIC & set(path.split("/")[:-1])
        and path.partition("/")[0] not in VENDORED_FOLDERS
    ]
    return tuple(sorted(found, key=lambda path: (path.count("/"), path))[:_MAX_BUILD_LOGIC])
