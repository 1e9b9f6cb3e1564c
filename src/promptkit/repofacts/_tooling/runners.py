"""Task runners: Makefile targets, justfile recipes, Taskfile tasks, the entry points in
`scripts/`, `script/` or `bin/` or another folder of scripts (each with what it runs, when the
file spells that out), and
the scripts at the top whose name says they build or check (`build.sh`, `test.sh`).

A script's name says what it is for only by how it starts (`test_imports.py`, `lint.sh`): a
word further in names what it works on (`update_types.sh`), see `classify_file_name`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import classify_file_name, classify_name, unquote

__all__ = [
    "SCRIPT_DIRECTORIES",
    "looks_runnable",
    "parse_justfile",
    "parse_makefile",
    "parse_root_script",
    "parse_script_entry_point",
    "parse_taskfile",
    "script_folders",
]

SCRIPT_DIRECTORIES = ("scripts", "script", "bin")
# Names other projects give their folder of scripts (Dart's `tool/`, Go's `hack/`, `util/`,
# `Scripts/`): one counts only when most of its files are scripts (see `script_folders`).
_MAYBE_SCRIPT_DIRECTORIES = frozenset({"tool", "tools", "util", "utils", "hack", "dev", "ci"})
_SCRIPT_SUFFIXES = ("", ".sh", ".bash", ".py", ".rb", ".ps1", ".mjs", ".js", ".ts")
_MIN_SCRIPTS = 2

_MAKE_TARGET = re.compile(
    r"^([A-Za-z0-9_][A-Za-z0-9_\-]*+(?:[ \t]++[A-Za-z0-9_][A-Za-z0-9_\-]*+)*+)[ \t]*+::?(?!=)(.*)$"
)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][A-Za-z0-9_\-]*)(?:[ \t]+[^:\n]*)?:(?!=)(.*)$")
_JUST_KEYWORDS = frozenset({"set", "alias", "export", "import", "mod", "if", "else"})
_TASK_NAME = re.compile(r"^(?P<indent>[ \t]+)(?P<name>['\"]?[\w:.\-]+['\"]?)\s*:\s*(?P<rest>.*)$")


def parse_makefile(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    collector.tools.add("make")
    for target, recipe in _make_targets(text):
        command = f"make {target}"
        collector.add(classify_name(target), command, source, recipe, directory=directory)


def parse_justfile(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    collector.tools.add("just")
    for recipe, body in _just_recipes(text):
        collector.add(classify_name(recipe), f"just {recipe}", source, body, directory=directory)


def parse_taskfile(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """Taskfile.yml (go-task): each task under `tasks:`, with its first command."""
    collector.tools.add("task")
    for name, command in _taskfile_tasks(text):
        if not name.startswith("_"):
            collector.add(classify_name(name), f"task {name}", source, command, directory=directory)


def parse_script_entry_point(
    collector: ToolingCollector, name: str, source: str, directory: str
) -> None:
    """An executable in `scripts/`, `script/` or `bin/`: its name says what it is for."""
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    if f".{suffix}" not in _SCRIPT_SUFFIXES and suffix:
        return
    if stem.startswith(("_", ".")) or not stem:
        return
    if not suffix and stem.isupper():
        return  # `BUILD`, `README`, `OWNERS`: a build file or a document, not a program
    if suffix == "py":
        command = f"python {source}"
    elif suffix == "rb":
        command = f"ruby {source}"
    elif suffix in ("mjs", "js", "ts"):
        command = f"node {source}" if suffix != "ts" else f"npx tsx {source}"
    else:
        command = f"./{source}"
    # One source for the folder, so its scripts are catalogued together.
    collector.add(classify_file_name(stem), command, f"{directory}/")


def script_folders(paths: list[str]) -> frozenset[str]:
    """The top-level folders of entry-point scripts: `scripts/`, `script/` and `bin/`, and a
    folder named as other projects name theirs (`tool/`, `tools/`, `util/`, `hack/`, any
    case) when most of the files directly in it are scripts (no suffix, or a script's)."""
    counts: dict[str, list[int]] = {}
    for path in paths:
        folder, _, name = path.partition("/")
        if "/" in name or not name:
            continue
        if (
            folder in SCRIPT_DIRECTORIES
            or folder.lower() in _MAYBE_SCRIPT_DIRECTORIES
            or (folder.lower() in SCRIPT_DIRECTORIES)
        ):
            tally = counts.setdefault(folder, [0, 0])
            tally[0] += looks_runnable(name)
            tally[1] += 1
    return frozenset(SCRIPT_DIRECTORIES) | {
        folder
        for folder, (scripts, files) in counts.items()
        if scripts >= _MIN_SCRIPTS and 2 * scripts > files
    }


def looks_runnable(name: str) -> bool:
    """Whether a file in a folder of scripts is one to run: no suffix, or a script's."""
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        return not name.startswith(".") and not name.isupper()
    return bool(stem) and f".{suffix}" in _SCRIPT_SUFFIXES


def parse_root_script(collector: ToolingCollector, name: str, source: str) -> None:
    """A shell script at the top named for a check or a build (`./build.sh`, `./test.sh`)."""
    collector.add(classify_file_name(name), f"./{source}", source)


def _make_targets(text: str) -> Iterator[tuple[str, str | None]]:
    """(target, first recipe line) for each named Makefile target (no files, no patterns)."""
    lines = text.replace("\\\n", " ").splitlines()
    seen: set[str] = set()
    for index, line in enumerate(lines):
        match = _MAKE_TARGET.match(line)
        if match is None or "=" in match.group(1):
            continue
        rest = match.group(2)
        # `target: VAR=value` sets a target-specific variable; the recipe follows on tab lines.
        recipe = rest.split(";", 1)[1].strip() if ";" in rest else _first_recipe_line(lines, index)
        for target in match.group(1).split():
            if target not in seen and target not in (".PHONY", "PHONY"):
                seen.add(target)
                yield target, recipe


def _first_recipe_line(lines: list[str], index: int) -> str | None:
    for line in lines[index + 1 :]:
        if not line.startswith("\t"):
            return None
        command = line.strip().lstrip("@-+").strip()
        # A recipe that announces itself first (`@echo "Running tests..."`) runs the next line.
        if command and not command.startswith(("#", "echo ", "printf ")):
            return command
    return None


def _just_recipes(text: str) -> Iterator[tuple[str, str | None]]:
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _JUST_RECIPE.match(line)
        if match is None or match.group(1) in _JUST_KEYWORDS or ":=" in line:
            continue
        body = None
        for following in lines[index + 1 :]:
            if not following[:1].isspace():
                break
            command = following.strip().lstrip("@-").strip()
            if command and not command.startswith("#"):
                body = command
                break
        yield match.group(1), body


# A line-by-line reader of Taskfile YAML's tasks: each kind of line is a case.
def _taskfile_tasks(text: str) -> Iterator[tuple[str, str | None]]:  # noqa: C901, PLR0912
    lines = text.splitlines()
    in_tasks = False
    task_indent: str | None = None
    name: str | None = None
    command: str | None = None
    current_key = ""
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            if name is not None:
                yield name, command
                name = None
            in_tasks = line.startswith("tasks:")
            task_indent = None
            continue
        if not in_tasks:
            continue
        match = _TASK_NAME.match(line)
        indent = line[: len(line) - len(line.lstrip())]
        if match is not None and (task_indent is None or indent == task_indent):
            if name is not None:
                yield name, command
            task_indent = indent
            name, command, current_key = unquote(match.group("name")), None, ""
            continue
        if name is None or command is not None:
            continue
        stripped = line.strip()
        key = re.match(r"([\w-]+):\s*(.*)$", stripped)
        if key is not None:
            current_key = key.group(1)
            if current_key == "cmd" and key.group(2):
                command = _task_command(key.group(2))
        elif stripped.startswith("- ") and current_key == "cmds":
            item = stripped[2:].strip()
            if item.startswith("cmd:"):
                command = _task_command(item[4:])
            elif not re.match(r"(?:task|for|defer):", item):
                command = _task_command(item)
    if name is not None:
        yield name, command


def _task_command(value: str) -> str | None:
    command = unquote(value.strip())
    return command if command and command not in ("|", ">", "|-", ">-") else None
