"""`ToolingCollector`: what the parsers of one scan found, gathered in one place.

Parsers record tools, commands and projects here; projects of one kind that share every fact
(a monorepo's Python packages alike in all but name) are described on one line. A command is either
written in a file (`add`) or inferred from a tool's configuration (`add_default`): an inferred
command is only ever offered for a tool the repository configures, and for a subdirectory's
package only when nothing at the root runs that tool for that purpose (a monorepo of
independent packages: `cd demo && vendor/bin/phpstan analyse`), where it would cover it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from promptkit.repofacts._tooling.model import (
    CommandPurpose,
    CommandStanding,
    FileReader,
    ToolCommand,
    one_line,
)
from promptkit.repofacts._tooling.shell import head_of, is_utility, tool_words, unrunnable

__all__ = ["ProjectFact", "ToolingCollector"]

# A merged project line names this many sources, then says how many more.
_SOURCES_SHOWN = 4


class ProjectFact(NamedTuple):
    """One project a manifest declares: its kind ("Python project"), name, facts and file."""

    kind: str
    name: str | None
    facts: tuple[str, ...]
    source: str


# Programs whose tool goes by another name (`mvn` is Maven, `bundle` is Bundler).
_TOOL_NAMES = {"mvn": "maven", "bundle": "bundler", "bundler": "bundler"}


class _PackageDefault(NamedTuple):
    """A subdirectory's inferred command, held until every file is read."""

    purpose: CommandPurpose
    command: str
    source: str
    directory: str


_PYTHON_LOCKFILES = (
    ("uv.lock", "uv run "),
    ("poetry.lock", "poetry run "),
    ("pdm.lock", "pdm run "),
    ("Pipfile", "pipenv run "),
)
_NODE_LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"),
    ("pnpm-workspace.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lock", "bun"),
    ("bun.lockb", "bun"),
)


@dataclass
class ToolingCollector:
    """Gathers what the parsers find for one scan; `scan_workspace` freezes the result.

    `present` holds the workspace's file paths (lockfiles too, whatever their size), and `read`
    reads any of them for parsers that follow one file to another; `ci_lines` are the
    commands its CI files run, for what no configuration file says (the runner in front), and
    `script_folders` the top-level folders of entry-point scripts.
    `exported_modules` are the source files that packages' manifests export by subpath
    (`"./stdio": "./src/stdio.ts"`).
    `programs` are the programs the configuration shows the project runs (every recorded
    command's, and each build system's own: `./gradlew`, `mix`, `zig`): the evidence a doc's
    inline code is checked against. `package_defaults` holds the subdirectories' inferred
    commands until `add_package_defaults` decides which the root does not cover;
    `build_owner` is the program that builds everything, when the root says one does (Bazel).
    """

    present: frozenset[str]
    read: FileReader
    ci_lines: tuple[str, ...] = ()
    script_folders: frozenset[str] = frozenset({"scripts", "script", "bin"})
    tools: set[str] = field(default_factory=set)
    programs: set[str] = field(default_factory=set)
    commands: list[ToolCommand] = field(default_factory=list)
    projects: list[ProjectFact] = field(default_factory=list)
    exported_modules: set[str] = field(default_factory=set)
    package_defaults: list[_PackageDefault] = field(default_factory=list)
    build_owner: str | None = None

    def add(
        self,
        purpose: CommandPurpose,
        command: str,
        source: str,
        detail: str | None = None,
        *,
        directory: str = "",
        standing: CommandStanding = "listed",
    ) -> None:
        """Record `command`, run from `directory` (relative to the root, "" for the root)."""
        prefixed = f"cd {directory} && {command}" if directory else command
        self.commands.append(
            ToolCommand(purpose, prefixed, source, one_line(detail), standing=standing)
        )
        self.note_programs(command)
        if detail:
            self.note_programs(detail)
            self._note_recipe_tool(detail)

    def note_programs(self, command: str) -> None:
        """Record the programs `command` runs: its first word and the tool a runner starts."""
        words = tool_words(command)
        head = head_of(command)
        self.programs.update(word for word in (head, *words[:1]) if word)

    def _note_recipe_tool(self, recipe: str) -> None:
        """A tool a target's recipe runs is one the project uses (`task fmt:html` runs
        prettier), whether or not a configuration file of its own says so."""
        if unrunnable(recipe, self.present) not in (None, "setup", "info"):
            return
        words = tool_words(recipe)
        tool = words[0] if words else ""
        if tool and "/" not in tool and not tool.startswith(".") and not is_utility(tool):
            self.tools.add(_TOOL_NAMES.get(tool, tool))

    def note_dependencies(self, text: str) -> None:
        """Tools a manifest's dependencies imply: Testcontainers runs the tests' services in
        Docker containers, whichever language's binding the manifest names."""
        if "testcontainers" in text.lower():
            self.tools.add("docker")

    def add_default(
        self, tool: str, purpose: CommandPurpose, command: str, source: str, directory: str
    ) -> None:
        """Note `tool` and the command it usually runs as: at the root now, in a subdirectory
        once every file is read and only if the root has no command of its kind (see
        `add_package_defaults`)."""
        self.tools.add(tool)
        if not directory:
            self.add(purpose, command, source, standing="default")
        else:
            self.package_defaults.append(_PackageDefault(purpose, command, source, directory))

    def add_package_defaults(self) -> None:
        """Record the subdirectories' inferred commands whose tool, for that purpose, no
        command at the root runs (the root's commands cover the packages' otherwise)."""
        at_root = {
            (command.purpose, _tool_of(spelling))
            for command in self.commands
            if not command.command.startswith("cd ")
            for spelling in (command.command, command.detail or "")
        }
        for default in self.package_defaults:
            if (default.purpose, _tool_of(default.command)) not in at_root:
                self.add(
                    default.purpose,
                    default.command,
                    default.source,
                    directory=default.directory,
                    standing="default",
                )
        self.package_defaults.clear()

    def has(self, directory: str, name: str) -> bool:
        """Whether the workspace holds `name` in `directory`."""
        return f"{directory}/{name}" in self.present if directory else name in self.present

    def has_near(self, directory: str, name: str) -> bool:
        """Whether `name` is in `directory` or at the root (a workspace's shared lockfile)."""
        return self.has(directory, name) or self.has("", name)

    def project(self, kind: str, name: object, facts: Sequence[str], source: str) -> None:
        """Record a project found in the workspace; `name` is used when it is a string."""
        # Names and facts come from the files: bounded so one odd manifest cannot crowd out
        # the digest.
        shown = (one_line(name, 60) or None) if isinstance(name, str) else None
        bounded = tuple(one_line(fact, 80) or fact for fact in facts)
        self.projects.append(ProjectFact(kind, shown, bounded, source))

    def project_lines(self) -> tuple[str, ...]:
        """One line per kind and set of facts, naming every project that has them, sorted."""
        groups: dict[tuple[str, tuple[str, ...]], list[ProjectFact]] = {}
        for project in sorted(set(self.projects), key=lambda p: (p.source, p.name or "")):
            groups.setdefault((project.kind, project.facts), []).append(project)
        return tuple(sorted(_project_line(members) for members in groups.values()))

    def python_runner(self, directory: str, tool: Mapping[str, Any]) -> str:
        """The prefix Python tools run under (`uv run `...): the lockfile's name tells, else
        the runner CI starts them with (a project that keeps no lockfile in the tree)."""
        for lockfile, runner in _PYTHON_LOCKFILES:
            if self.has_near(directory, lockfile):
                return runner
        if "poetry" in tool:
            return "poetry run "
        for _, runner in _PYTHON_LOCKFILES:
            if any(line.startswith(runner) for line in self.ci_lines):
                return runner
        return ""

    def node_runner(self, directory: str, document: Mapping[str, Any]) -> str:
        """The package manager of a package.json: declared, else told by the lockfile's name."""
        declared = document.get("packageManager")
        if isinstance(declared, str) and declared.split("@")[0] in ("npm", "pnpm", "yarn", "bun"):
            return declared.split("@")[0]
        for lockfile, runner in _NODE_LOCKFILES:
            if self.has_near(directory, lockfile):
                return runner
        return "npm"


def _tool_of(command: str) -> str:
    """The tool a command runs past its runner (`vendor/bin/phpstan analyse` runs phpstan)."""
    words = tool_words(command)
    return words[0].rpartition("/")[2] if words else ""


def _project_line(members: list[ProjectFact]) -> str:
    kind, facts = members[0].kind, members[0].facts
    names = ", ".join(f"`{member.name}`" for member in members if member.name)
    sources = [member.source for member in members]
    more = len(sources) - _SOURCES_SHOWN
    listed = ", ".join(sources[:_SOURCES_SHOWN]) + (f" and {more} more" if more > 0 else "")
    label = kind if len(members) == 1 else f"{kind}s"
    return f"{label}{' ' + names if names else ''} ({'; '.join([*facts, listed])})"
