"""Which workspace files are tooling configuration, and the parser each one goes to.

Only the root and its direct subdirectories are looked at (a workspace's packages are followed
from its root manifest instead): deeper manifests belong to fixtures, examples and vendored
code more often than to the project's workflow. Two kinds of direct subdirectory say nothing
about the project's own build either: vendored code (`vendor/`, `third_party/`...) and the
platform folders a cross-platform app's toolkit generates beside its manifest (a Flutter app's
`android/`, `ios/`, `linux/`... next to its pubspec.yaml; a React Native app's `android/` and
`ios/`), whose Gradle and CMake files build the host shell, not the app. Lockfiles are never
parsed; their names alone tell the runner, so `lockfile_names` lists the ones to look for
whatever their size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from promptkit.repofacts._tooling.apple import parse_swift_package, parse_swift_tools, parse_xcode
from promptkit.repofacts._tooling.buildfiles import DOCKER_FILES, parse_build_file
from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.dart import parse_melos, parse_pubspec
from promptkit.repofacts._tooling.deno import parse_deno
from promptkit.repofacts._tooling.dotnet import parse_dotnet, parse_global_json
from promptkit.repofacts._tooling.elixir import parse_mix
from promptkit.repofacts._tooling.go import GOLANGCI_FILES, parse_go_mod, parse_golangci
from promptkit.repofacts._tooling.hooks import parse_lefthook, parse_pre_commit
from promptkit.repofacts._tooling.jvm import parse_gradle, parse_maven, parse_mill, parse_sbt
from promptkit.repofacts._tooling.model import classify_file_name
from promptkit.repofacts._tooling.native import parse_bazel, parse_cmake, parse_meson, parse_zig
from promptkit.repofacts._tooling.nix import parse_flake
from promptkit.repofacts._tooling.node import parse_package_json, parse_pnpm_workspace
from promptkit.repofacts._tooling.php import parse_composer
from promptkit.repofacts._tooling.python import (
    parse_noxfile,
    parse_pyproject,
    parse_python_config,
    parse_setup_cfg,
    parse_tox_ini,
)
from promptkit.repofacts._tooling.ruby import parse_gemfile, parse_gemspec, parse_rakefile
from promptkit.repofacts._tooling.runners import (
    SCRIPT_DIRECTORIES,
    looks_runnable,
    parse_justfile,
    parse_makefile,
    parse_root_script,
    parse_script_entry_point,
    parse_taskfile,
    script_folders,
)
from promptkit.repofacts._tooling.rust import parse_cargo_config, parse_cargo_toml

__all__ = [
    "LOCKFILE_NAMES",
    "VENDORED_FOLDERS",
    "config_files",
    "parse_config_file",
    "script_folders",
]

# Text parsers take (collector, source, directory, text).
_TextParser = Callable[[ToolingCollector, str, str, str], None]
# Presence parsers take (collector, name, source, directory): the file's existence is the fact.
_PresenceParser = Callable[[ToolingCollector, str, str, str], None]

_TEXT_PARSERS: Mapping[str, _TextParser] = {
    "pyproject.toml": parse_pyproject,
    "setup.cfg": parse_setup_cfg,
    "tox.ini": parse_tox_ini,
    "noxfile.py": parse_noxfile,
    **dict.fromkeys(("Makefile", "makefile", "GNUmakefile"), parse_makefile),
    **dict.fromkeys(("justfile", "Justfile", ".justfile"), parse_justfile),
    **dict.fromkeys(
        ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml"), parse_taskfile
    ),
    "package.json": parse_package_json,
    "pnpm-workspace.yaml": parse_pnpm_workspace,
    "Cargo.toml": parse_cargo_toml,
    "config.toml": parse_cargo_config,
    "go.mod": parse_go_mod,
    **dict.fromkeys(GOLANGCI_FILES, parse_golangci),
    **dict.fromkeys((".pre-commit-config.yaml", ".pre-commit-config.yml"), parse_pre_commit),
    **dict.fromkeys(("lefthook.yml", "lefthook.yaml", ".lefthook.yml"), parse_lefthook),
    **dict.fromkeys(
        ("settings.gradle.kts", "settings.gradle", "build.gradle.kts", "build.gradle"),
        parse_gradle,
    ),
    "pom.xml": parse_maven,
    "build.sbt": parse_sbt,
    **dict.fromkeys(("build.mill", "build.sc"), parse_mill),
    "CMakeLists.txt": parse_cmake,
    "meson.build": parse_meson,
    **dict.fromkeys(("MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel"), parse_bazel),
    "build.zig": parse_zig,
    "Package.swift": parse_swift_package,
    "pubspec.yaml": parse_pubspec,
    "melos.yaml": parse_melos,
    "global.json": parse_global_json,
    **dict.fromkeys(("Gemfile", "gems.rb"), parse_gemfile),
    **dict.fromkeys(("Rakefile", "rakefile", "Rakefile.rb"), parse_rakefile),
    "composer.json": parse_composer,
    "mix.exs": parse_mix,
    "flake.nix": parse_flake,
    **dict.fromkeys(("deno.json", "deno.jsonc"), parse_deno),
}
# Files recognised by how their name ends (`app.gemspec`, `Shop.sln`).
_TEXT_SUFFIXES: tuple[tuple[str, _TextParser], ...] = ((".gemspec", parse_gemspec),)
_PRESENCE_PARSERS: Mapping[str, _PresenceParser] = {
    **dict.fromkeys(
        (
            "pytest.ini",
            "ruff.toml",
            ".ruff.toml",
            "mypy.ini",
            ".mypy.ini",
            ".flake8",
            "pyrightconfig.json",
        ),
        parse_python_config,
    ),
    **dict.fromkeys(("tsconfig.json", *DOCKER_FILES), parse_build_file),
    **dict.fromkeys((".swiftlint.yml", ".swiftlint.yaml", ".swiftformat"), parse_swift_tools),
    # An Xcode bundle is a folder; the file inside it says it is there.
    **dict.fromkeys(("project.pbxproj", "contents.xcworkspacedata"), parse_xcode),
}
_PRESENCE_SUFFIXES: tuple[tuple[str, _PresenceParser], ...] = (
    (".sln", parse_dotnet),
    (".slnx", parse_dotnet),
    (".csproj", parse_dotnet),
    (".fsproj", parse_dotnet),
)
_XCODE_MARKERS = ("project.pbxproj", "contents.xcworkspacedata")
# Manifests whose dependencies may imply a tool (see `ToolingCollector.note_dependencies`); a
# Gradle build reads its version catalog for them itself.
_DEPENDENCY_MANIFESTS = frozenset(
    {
        "pyproject.toml",
        "go.mod",
        "pom.xml",
        "package.json",
        "Cargo.toml",
        "Gemfile",
        "composer.json",
    }
)
# Folders of other people's code, kept in the tree.
VENDORED_FOLDERS = frozenset(
    {"vendor", "vendored", "third_party", "third-party", "thirdparty", "3rdparty", "external",
     "extern", "deps", "node_modules"}
)  # fmt: skip
# Host projects a cross-platform toolkit generates beside the app's manifest.
_PLATFORM_FOLDERS = ("android", "ios", "macos", "linux", "windows", "web")

LOCKFILE_NAMES = (
    "uv.lock",
    "poetry.lock",
    "pdm.lock",
    "Pipfile",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lock",
    "bun.lockb",
    "package-lock.json",
)


def config_files(paths: list[str], scripts: frozenset[str] = frozenset()) -> list[str]:
    """The configuration files among `paths`, shallowest first; `scripts` are the folders of
    entry-point scripts (see `script_folders`), whose every script counts."""
    folders = scripts or frozenset(SCRIPT_DIRECTORIES)
    # Every configuration file is at most one folder deep (the script folders are top-level;
    # an Xcode bundle's marker file is one deeper than the bundle).
    candidates = [
        path
        for path in paths
        if (path.count("/") <= 1 or path.endswith(_XCODE_MARKERS))
        and _is_config_file(path, folders)
    ]
    skipped = _platform_folders(paths)
    return sorted(
        (path for path in candidates if path.partition("/")[0] not in skipped),
        key=lambda path: (path.count("/"), path),
    )


def parse_config_file(collector: ToolingCollector, relative: str) -> None:
    """Parse `relative` into `collector`, reading it through the collector's reader."""
    directory, _, name = relative.rpartition("/")
    if directory in collector.script_folders:
        parse_script_entry_point(collector, name, relative, directory)
        return
    if name in _XCODE_MARKERS:
        parse_xcode(collector, name, relative, directory.rpartition("/")[0])
        return
    presence = _PRESENCE_PARSERS.get(name) or _by_suffix(name, _PRESENCE_SUFFIXES)
    if presence is not None:
        presence(collector, name, relative, directory)
        return
    parser = _TEXT_PARSERS.get(name) or _by_suffix(name, _TEXT_SUFFIXES)
    if parser is None:
        parse_root_script(collector, name, relative)
        return
    text = collector.read(relative)
    if text is not None:
        parser(collector, relative, directory, text)
        if name in _DEPENDENCY_MANIFESTS:
            collector.note_dependencies(text)


def _by_suffix(name: str, parsers: tuple[tuple[str, _TextParser], ...]) -> _TextParser | None:
    # Both kinds of parser take four arguments of the same types; the caller knows which.
    return next((parser for suffix, parser in parsers if name.endswith(suffix)), None)


def _is_config_file(relative: str, script_folders: frozenset[str]) -> bool:
    directory, _, name = relative.rpartition("/")
    if directory in script_folders:
        return looks_runnable(name)
    if name == "config.toml":
        return directory == ".cargo"
    if name in _XCODE_MARKERS:
        return directory.endswith((".xcodeproj", ".xcworkspace")) and directory.count("/") <= 1
    if relative.count("/") > 1 or directory.partition("/")[0] in VENDORED_FOLDERS:
        return False
    if not directory and _is_root_script(name):
        return True
    return (
        name in _TEXT_PARSERS
        or name in _PRESENCE_PARSERS
        or _by_suffix(name, _TEXT_SUFFIXES) is not None
        or _by_suffix(name, _PRESENCE_SUFFIXES) is not None
    )


def _platform_folders(paths: list[str]) -> frozenset[str]:
    """The top-level folders that hold a cross-platform app's generated host projects: the
    platform folders beside a root pubspec.yaml, and `android/` and `ios/` beside a root
    package.json when both are there (React Native, Capacitor)."""
    top = {path.partition("/")[0] for path in paths if "/" in path}
    if "pubspec.yaml" in paths:
        return frozenset(folder for folder in _PLATFORM_FOLDERS if folder in top)
    if "package.json" in paths and {"android", "ios"} <= top:
        return frozenset({"android", "ios"})
    return frozenset()


def _is_root_script(name: str) -> bool:
    """A script at the top whose name says it checks or builds (`build.sh`, `test.sh`)."""
    stem, dot, suffix = name.partition(".")
    return bool(dot) and suffix in ("sh", "bash") and classify_file_name(stem) != "other"
