"""CI files: the shell commands each one runs (GitHub Actions, GitLab, CircleCI, Jenkins...).

YAML is read line by line for the few keys that hold commands (`run:`, `script:`, `command:`),
which keeps the package free of a YAML dependency and its load time. In GitHub Actions only
`run:` steps are shell: a `script:` there is the JavaScript of `actions/github-script`, and a
step with `shell: python` (or node...) runs a program, so neither is listed.

A CI line often runs a script of the repository (`./.ci/run test`, `bash scripts/check.sh`)
where the real checks are written: `invoked_script` names it and `script_commands` reads its
command lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from promptkit.repofacts._tooling.model import Workflow, one_line, unquote

__all__ = ["invoked_script", "parse_workflow", "script_commands"]

_YAML_COMMAND_KEY = re.compile(
    r"^(?P<indent>[ \t]*)(?:-[ \t]+)?(?P<key>run|script|before_script|after_script|command|bash)"
    r"[ \t]*:[ \t]*(?P<value>.*)$"
)
_GITHUB_COMMAND_KEYS = frozenset({"run"})
_JENKINS_SH = re.compile(r"\bsh\s*\(?\s*(['\"])(.+?)\1")
_SHELLS = frozenset({"bash", "sh", "pwsh", "powershell", "cmd"})
_SHELL_KEYWORDS = frozenset({"then", "fi", "do", "done", "else", "esac", "{", "}"})
# Lines of a script in another language that a block can still hold.
_NOT_SHELL = re.compile(r"^(?:const|let|var|await|return|import|from|def|if\s*\(|}\)|\)|//)\b")


def parse_workflow(path: str, text: str) -> Workflow:
    """The name and shell commands of a CI file (GitHub Actions, GitLab, CircleCI, Jenkins...)."""
    name_match = re.search(r"^name:\s*(.+)$", text, re.MULTILINE)
    name = one_line(unquote(_without_comment(name_match.group(1))), 80) if name_match else None
    if path.endswith("Jenkinsfile"):
        commands = [m.group(2) for m in _JENKINS_SH.finditer(text)]
    else:
        keys = _GITHUB_COMMAND_KEYS if path.startswith(".github/") else None
        commands = list(_yaml_commands(text, keys))
    seen: set[str] = set()
    unique: list[str] = []
    for command in commands:
        cleaned = one_line(command)
        if (
            cleaned
            and cleaned not in seen
            and not cleaned.startswith(("echo ", "#"))
            and _NOT_SHELL.match(cleaned) is None
        ):
            seen.add(cleaned)
            unique.append(cleaned)
    return Workflow(path=path, name=name or None, commands=tuple(unique))


def _yaml_commands(text: str, keys: frozenset[str] | None) -> Iterator[str]:
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _YAML_COMMAND_KEY.match(lines[index])
        index += 1
        if match is None or (keys is not None and match.group("key") not in keys):
            continue
        # A block scalar's lines are indented past the key's own column (`- run: |` included).
        key_column = match.start("key")
        value = _strip_yaml_comment(match.group("value")).strip()
        if value and value[0] in "|>":
            key_line = index - 1
            block, index = _indented_block(lines, index, key_column)
            if _step_shell(lines, key_line, key_column) not in _SHELLS:
                continue
            if value[0] == ">":
                yield " ".join(line.strip() for line in block)
            else:
                yield from _shell_lines(block)
        elif not value:
            block, after = _indented_block(lines, index, key_column)
            # A list (GitLab `script:`); a mapping (CircleCI `run:` + `command:`) is read
            # through its own `command:` key instead.
            if block and block[0].lstrip().startswith("- "):
                index = after
                yield from (
                    unquote(line.lstrip()[2:].strip())
                    for line in block
                    if line.lstrip().startswith("- ")
                )
        elif value.startswith("["):
            yield from (unquote(item.strip()) for item in value.strip("[]").split(","))
        else:
            yield unquote(value)


def _step_shell(lines: list[str], key_line: int, key_column: int) -> str:
    """The `shell:` declared beside the key on `key_line` (GitHub Actions), "bash" by default.

    A step with `shell: python` (or node, ruby...) runs a script, not commands worth listing.
    The step's keys sit at `key_column`; its first line is the one whose `- ` sits two columns
    left of them, and the next step begins at the next such line.
    """
    dash_column = key_column - 2
    starts_step = lines[key_line][dash_column : dash_column + 2] == "- "
    below = range(key_line + 1, len(lines))
    above = () if starts_step else range(key_line - 1, -1, -1)
    for direction, positions in (("down", below), ("up", above)):
        for position in positions:
            line = lines[position]
            if not line.strip():
                continue
            column = len(line) - len(line.lstrip())
            is_step_start = column == dash_column and line.lstrip().startswith("- ")
            if column < key_column and not is_step_start:
                break
            if is_step_start and direction == "down":
                break
            if column == key_column or is_step_start:
                found = re.match(r"(?:- )?shell:\s*(\S+)", line.strip())
                if found is not None:
                    return unquote(found.group(1))
            if is_step_start:
                break
    return "bash"


def _indented_block(lines: list[str], index: int, key_indent: int) -> tuple[list[str], int]:
    block: list[str] = []
    while index < len(lines):
        line = lines[index]
        if line.strip() and len(line) - len(line.lstrip()) <= key_indent:
            break
        block.append(line)
        index += 1
    while block and not block[-1].strip():
        block.pop()
    return block, index


def _shell_lines(block: list[str]) -> Iterator[str]:
    joined = "\n".join(block).replace("\\\n", " ")
    for line in joined.splitlines():
        command = line.strip()
        if command and not command.startswith("#") and command.split()[0] not in _SHELL_KEYWORDS:
            yield command


def _strip_yaml_comment(value: str) -> str:
    return re.sub(r"\s+#.*$", "", value) if not value.startswith(("'", '"')) else value


_INTERPRETERS = frozenset({"bash", "sh", "zsh", "python", "python3", "node"})
# A `case` label (`test)`, `lint|fmt)`) before a command, and the `;;` that ends its branch.
_CASE_LABEL = re.compile(r"^[\w*|\"'-]+\)\s*")


def invoked_script(line: str, present: frozenset[str]) -> str | None:
    """The repository file that the CI `line` runs, if it runs one (directly or through a
    shell or interpreter): `./.ci/run test` and `bash .ci/run test` run `.ci/run`."""
    words = line.split()
    if len(words) > 1 and words[0] in _INTERPRETERS:
        words = words[1:]
    if not words:
        return None
    path = words[0].removeprefix("./")
    return path if path in present else None


def script_commands(text: str) -> list[str]:
    """The command lines of a shell script: comments, shell keywords and `case` labels left
    out, continued lines joined, each line once."""
    lines: list[str] = []
    for command in _shell_lines(text.splitlines()):
        command = _CASE_LABEL.sub("", command).removesuffix(";;").strip()
        if command and command not in lines:
            lines.append(command)
    return lines


def _without_comment(value: str) -> str:
    """A YAML scalar without its trailing `# comment` (a quoted value keeps its `#`)."""
    value = value.strip()
    if value[:1] in ("'", '"'):
        closing = value.find(value[0], 1)
        return value[: closing + 1] if closing > 0 else value
    return re.split(r"\s#", value, maxsplit=1)[0].rstrip()
