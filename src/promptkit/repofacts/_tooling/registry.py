"""Which workspace files are tooling configuration, and the parser each one goes to.

Only the root and its direct subdirectories are looked at (a workspace's packages are followed
from its root manifest instead): deeper manifests belong to fixtures, examples and vendored
code more often than to the project's workflow. Lockfiles are never parsed; their names alone
tell the runner, so `lockfile_names` lists the ones to look for whatever their size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from promptkit.repofacts._tooling.buildfiles import DOCKER_FILES, parse_build_file
from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.go import GOLANGCI_FILES, parse_go_mod, parse_golangci
from promptkit.repofacts._tooling.hooks import parse_lefthook, parse_pre_commit
from promptkit.repofacts._tooling.node import parse_package_json, parse_pnpm_workspace
from promptkit.repofacts._tooling.python import (
    parse_noxfile,
    parse_pyproject,
    parse_python_config,
    parse_setup_cfg,
    parse_tox_ini,
)
from promptkit.repofacts._tooling.runners import (
    SCRIPT_DIRECTORIES,
    parse_justfile,
    parse_makefile,
    parse_script_entry_point,
    parse_taskfile,
)
from promptkit.repofacts._tooling.rust import parse_cargo_config, parse_cargo_toml

__all__ = ["LOCKFILE_NAMES", "config_files", "parse_config_file"]

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
}
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
    **dict.fromkeys(
        (
            "pom.xml",
            "build.gradle",
            "build.gradle.kts",
            "CMakeLists.txt",
            "tsconfig.json",
            *DOCKER_FILES,
        ),
        parse_build_file,
    ),
}

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


def config_files(paths: list[str]) -> list[str]:
    """The configuration files among `paths`, shallowest first."""
    # Every configuration file is at most one folder deep (the script folders are top-level).
    return sorted(
        (path for path in paths if path.count("/") <= 1 and _is_config_file(path)),
        key=lambda path: (path.count("/"), path),
    )


def parse_config_file(collector: ToolingCollector, relative: str) -> None:
    """Parse `relative` into `collector`, reading it through the collector's reader."""
    directory, _, name = relative.rpartition("/")
    if directory in SCRIPT_DIRECTORIES:
        parse_script_entry_point(collector, name, relative, directory)
        return
    presence = _PRESENCE_PARSERS.get(name)
    if presence is not None:
        presence(collector, name, relative, directory)
        return
    text = collector.read(relative)
    if text is not None:
        _TEXT_PARSERS[name](collector, relative, directory, text)


def _is_config_file(relative: str) -> bool:
    directory, _, name = relative.rpartition("/")
    if directory in SCRIPT_DIRECTORIES:
        return _looks_runnable(name)
    if name == "config.toml":
        return directory == ".cargo"
    return relative.count("/") <= 1 and (name in _TEXT_PARSERS or name in _PRESENCE_PARSERS)


def _looks_runnable(name: str) -> bool:
    return "." not in name or name.endswith((".sh", ".bash", ".py", ".mjs", ".js", ".ts"))
