"""CI files: which files are CI, the shell commands each one runs, and the checks among them.

Every common CI system is read: GitHub Actions (workflows and the repository's own composite
actions), Forgejo and Gitea Actions, GitLab, CircleCI, Jenkins, Azure Pipelines, Travis,
Bitbucket, Buildkite, Woodpecker, Drone, Cirrus, AppVeyor, Semaphore and Codemagic. YAML is read
line by line for the few keys that hold commands (`run:`, `script:`, `command:`,
`test_script:`...), which keeps the package free of a YAML dependency and its load time. In
GitHub Actions only `run:` steps are shell: a `script:` there is the JavaScript of
`actions/github-script`, and a step with `shell: python` (or node...) runs a program, so neither
is listed. A line is kept without the wrappers that only set its environment up (`nix develop
-c`, `xvfb-run`, `sudo`; see `shell.peel`): that is the command a contributor types.

A CI line often runs a script of the repository (`./.ci/run test`, `bash scripts/check.sh`)
where the real checks are written: `invoked_script` names it and `script_commands` reads its
command lines, when it is a shell script (its shebang says which interpreter runs it).
`add_ci_checks` records what CI runs as canonical commands.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import (
    FileReader,
    Workflow,
    classify_command,
    one_line,
    unquote,
)
from promptkit.repofacts._tooling.shell import peel, tool_words, unrunnable

__all__ = [
    "add_ci_checks",
    "checks_a_change",
    "ci_programs",
    "ci_systems",
    "invoked_script",
    "is_ci_file",
    "is_side_workflow",
    "is_typed_by_hand",
    "parse_workflow",
    "script_commands",
]

_YAML_COMMAND_KEY = re.compile(
    r"^(?P<indent>[ \t]*)(?:-[ \t]+)?"
    r"(?P<key>run|script|before_script|after_script|command|commands|bash|pwsh|powershell|"
    r"[a-z]+_script)"
    r"[ \t]*:[ \t]*(?P<value>.*)$"
)
_GITHUB_COMMAND_KEYS = frozenset({"run"})
_SHELL_FUNCTION = re.compile(r"^\s*(?:function\s+)?([\w-]+)\s*\(\)\s*\{?\s*$", re.MULTILINE)
_JENKINS_SH = re.compile(r"\bsh\s*\(?\s*(['\"])(.+?)\1")
_SHELLS = frozenset({"bash", "sh", "pwsh", "powershell", "cmd"})
_SHELL_KEYWORDS = frozenset({"then", "fi", "do", "done", "else", "esac", "{", "}"})
# Lines of a script in another language that a block can still hold.
_NOT_SHELL = re.compile(r"^(?:const|let|var|await|return|import|from|def|if\s*\(|}\)|\)|//)\b")


def parse_workflow(path: str, text: str) -> Workflow:
    """The name and shell commands of a CI file (GitHub Actions, GitLab, CircleCI, Jenkins...)."""
    name_match = re.search(r"^name:\s*(.+)$", text, re.MULTILINE)
    name = one_line(unquote(_without_comment(name_match.group(1))), 80) if name_match else None
    is_github = path.startswith((".github/", ".gitea/", ".forgejo/"))
    if path.endswith("Jenkinsfile"):
        commands = [m.group(2) for m in _JENKINS_SH.finditer(text)]
    else:
        commands = list(_yaml_commands(text, _GITHUB_COMMAND_KEYS if is_github else None))
    # A shell function the file defines (`build() {`) is no program a contributor has.
    functions = set(_SHELL_FUNCTION.findall(text))
    seen: set[str] = set()
    unique: list[str] = []
    for command in commands:
        cleaned = one_line(peel(command))
        if (
            cleaned
            and cleaned.split()[0] not in functions
            and cleaned not in seen
            and not cleaned.startswith(("echo ", "#"))
            and _NOT_SHELL.match(cleaned) is None
        ):
            seen.add(cleaned)
            unique.append(cleaned)
    events = _github_events(text) if is_github else None
    checks = events is None or bool(events & _CHECK_EVENTS)
    return Workflow(path=path, name=name or None, commands=tuple(unique), checks_changes=checks)


# The events on which a GitHub Actions workflow checks a change (`workflow_call`: a workflow
# another one runs, as a check workflow's reusable part).
_CHECK_EVENTS = frozenset({"push", "pull_request", "merge_group", "workflow_call"})
_ON_KEY = re.compile(r"""^(?:on|"on"|'on'|true):[ \t]*(.*)$""", re.MULTILINE)


def _github_events(text: str) -> frozenset[str] | None:
    """The events a GitHub Actions workflow's `on:` names (`on: push`, `on: [push, pull_request]`
    or a mapping of events), or None when it has no `on:` (a composite action)."""
    found = _ON_KEY.search(text)
    if found is None:
        return None
    value = _strip_yaml_comment(found.group(1)).strip()
    if value:
        return frozenset(unquote(word.strip()) for word in value.strip("[]").split(",") if word)
    block, _ = _indented_block(text[found.end() :].splitlines()[1:], 0, 0)
    indents = [len(line) - len(line.lstrip()) for line in block if line.strip()]
    if not indents:
        return frozenset()
    first = min(indents)
    events = set()
    for line in block:
        if line.strip() and len(line) - len(line.lstrip()) == first:
            item = line.strip().removeprefix("- ")
            events.add(unquote(item.split(":", 1)[0].strip()))
    return frozenset(events)


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
        key_line = index - 1
        value = _strip_yaml_comment(match.group("value")).strip()
        found: list[str] = []
        if value and value[0] in "|>":
            block, index = _indented_block(lines, index, key_column)
            shell = _step_value(lines, key_line, key_column, "shell") or "bash"
            if unquote(shell) not in _SHELLS:
                continue
            if value[0] == ">":
                found.append(" ".join(line.strip() for line in block))
            else:
                found.extend(_shell_lines(block))
        elif not value:
            block, after = _indented_block(lines, index, key_column)
            # A list (GitLab `script:`); a mapping (CircleCI `run:` + `command:`) is read
            # through its own `command:` key instead.
            if block and block[0].lstrip().startswith("- "):
                index = after
                found.extend(
                    unquote(line.lstrip()[2:].strip())
                    for line in block
                    if line.lstrip().startswith("- ")
                )
        elif value.startswith("["):
            found.extend(unquote(item.strip()) for item in value.strip("[]").split(","))
        else:
            found.append(unquote(value))
        # A GitHub step that runs in a folder (`working-directory: packages/server`) runs
        # there what a contributor runs after `cd packages/server`.
        folder = _step_value(lines, key_line, key_column, "working-directory") if keys else None
        folder = unquote(folder).removeprefix("./").rstrip("/") if folder else None
        if folder and folder != "." and not folder.startswith(("..", "/", "$")):
            found = [f"cd {folder} && {command}" for command in found]
        yield from found


def _step_value(lines: list[str], key_line: int, key_column: int, name: str) -> str | None:
    """The value of the key `name` declared beside the key on `key_line` in the same step
    (GitHub Actions: `shell:`, `working-directory:`), or None.

    The step's keys sit at `key_column`; its first line is the one whose `- ` sits two columns
    left of them, and the next step begins at the next such line.
    """
    dash_column = key_column - 2
    starts_step = lines[key_line][dash_column : dash_column + 2] == "- "
    below = range(key_line + 1, len(lines))
    above = () if starts_step else range(key_line - 1, -1, -1)
    pattern = re.compile(rf"(?:- )?{re.escape(name)}:\s*(\S+)")
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
                found = pattern.match(line.strip())
                if found is not None:
                    return _strip_yaml_comment(found.group(1))
            if is_step_start:
                break
    return None


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
    """The command lines of a shell block, continued lines joined. The lines of a quoted
    string or a here-document that spans several lines (a GraphQL query, a JSON body) are
    that string's text, not commands."""
    joined = "\n".join(block).replace("\\\n", " ")
    closing: str | None = None  # the quote or here-document word that ends the open text
    for line in joined.splitlines():
        command = line.strip()
        if closing is not None:
            is_quote = closing in ("'", '"')
            if (is_quote and _open_quote(command, closing) is None) or command == closing:
                closing = None
            continue
        quote = _open_quote(command)
        heredoc = _HEREDOC.search(command)
        closing = heredoc.group(1) if heredoc is not None else quote
        if command and not command.startswith("#") and command.split()[0] not in _SHELL_KEYWORDS:
            yield command


_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def _open_quote(line: str, inside: str | None = None) -> str | None:
    """The quote `line` leaves open, starting inside a string `inside` quotes (or outside)."""
    quote = inside
    for char in line:
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
    if inside is not None:
        return None if quote != inside else inside
    return quote


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
    out, continued lines joined, each line once. A script whose shebang names another
    interpreter (`#!/usr/bin/env python`) has no shell lines."""
    first = text.partition("\n")[0]
    if first.startswith("#!") and re.search(r"\b(?:ba|z|da|k)?sh\b", first) is None:
        return []
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


# -- which files are CI, and what they run -----------------------------------------------------

_CI_FILES = frozenset(
    {
        ".gitlab-ci.yml", ".circleci/config.yml", "Jenkinsfile", "azure-pipelines.yml",
        "azure-pipelines.yaml", ".travis.yml", "bitbucket-pipelines.yml",
        ".buildkite/pipeline.yml", ".woodpecker.yml", ".drone.yml", ".cirrus.yml",
        "appveyor.yml", ".appveyor.yml", ".semaphore/semaphore.yml", "codemagic.yaml",
    }
)  # fmt: skip
# Folders whose YAML files are all CI definitions.
_CI_FOLDERS = (
    ".github/workflows", ".gitea/workflows", ".forgejo/workflows", ".woodpecker", ".buildkite",
    ".gitlab/ci", ".azure-pipelines", ".circleci",
)  # fmt: skip
_CI_SYSTEMS = (
    (".github/", "github-actions"),
    (".gitea/", "gitea-actions"),
    (".forgejo/", "forgejo-actions"),
    (".gitlab", "gitlab-ci"),
    (".circleci/", "circleci"),
    ("Jenkinsfile", "jenkins"),
    ("azure-pipelines", "azure-pipelines"),
    (".azure-pipelines/", "azure-pipelines"),
    (".travis.yml", "travis-ci"),
    ("bitbucket-pipelines.yml", "bitbucket-pipelines"),
    (".buildkite/", "buildkite"),
    (".woodpecker", "woodpecker"),
    (".drone.yml", "drone"),
    (".cirrus.yml", "cirrus-ci"),
    ("appveyor.yml", "appveyor"),
    (".appveyor.yml", "appveyor"),
    (".semaphore/", "semaphore"),
    ("codemagic.yaml", "codemagic"),
)
_SIDE_WORKFLOW = re.compile(r"release|publish|bench|deploy|nightly|docs|binar", re.IGNORECASE)
_MAX_CI_COMMAND = 90
_MAX_CI_SCRIPTS = 8
_CI_SCRIPT_READ_LIMIT = 64 * 1024


def is_ci_file(relative: str) -> bool:
    """Whether `relative` defines CI: a known file, a YAML file in a CI folder, or a composite
    action of the repository's own (`.github/actions/<name>/action.yml`)."""
    if relative in _CI_FILES:
        return True
    if relative[:1] != ".":
        return False  # the cheap test first: every CI folder is hidden
    directory, _, name = relative.rpartition("/")
    if not name.endswith((".yml", ".yaml")):
        return False
    if directory in _CI_FOLDERS:
        return True
    return directory.startswith(".github/actions/") and name in ("action.yml", "action.yaml")


def is_side_workflow(path: str) -> bool:
    """Whether a CI file's name says it releases, publishes, deploys or benchmarks rather than
    checks: it runs builds nobody types by hand."""
    return _SIDE_WORKFLOW.search(path) is not None


def checks_a_change(workflow: Workflow) -> bool:
    """Whether a CI file checks a change, rather than releasing, deploying or running on a
    schedule: by its name and by the events it runs on (see `Workflow.checks_changes`)."""
    return workflow.checks_changes and not is_side_workflow(workflow.path)


def ci_systems(workflows: list[Workflow]) -> set[str]:
    """The CI systems the workflows belong to (`github-actions`, `gitlab-ci`...)."""
    return {
        system
        for workflow in workflows
        for prefix, system in _CI_SYSTEMS
        if workflow.path.startswith(prefix)
    }


def ci_programs(workflows: list[Workflow]) -> Counter[str]:
    """How many lines of the checking workflows run each program (`zig`, `./gradlew`,
    `bundle`, and the tool a runner starts, `rake`): the evidence for what the project's
    own toolchain is."""
    counts: Counter[str] = Counter()
    for workflow in workflows:
        if not checks_a_change(workflow):
            continue
        for line in workflow.commands:
            words = tool_words(line)
            head = line.split()[0] if line.split() else ""
            counts.update({word for word in (head, *words[:1]) if word})
    return counts


def is_typed_by_hand(line: str, present: frozenset[str]) -> bool:
    """Whether a CI line is a command a contributor could type as it stands (see
    `shell.unrunnable`: no CI variables, no setup, no plumbing), short enough to read, and not
    a smoke test that the tool starts (`ruff --help`)."""
    return len(line) <= _MAX_CI_COMMAND and unrunnable(line, present) is None


# One pass over the workflows' steps: each kind of step is a case.
def add_ci_checks(collector: ToolingCollector, workflows: list[Workflow], read: FileReader) -> None:  # noqa: C901
    """The checks CI runs are canonical even when no runner file names them, and so are the
    checks in a repository script that CI runs (`./.ci/run test`, `script/test`): the call
    shows the script's check of its kind as what it runs. Release, benchmark and deploy
    workflows run builds nobody types by hand: they are skipped."""
    present = collector.present
    calls: dict[str, list[tuple[str, str]]] = {}
    for workflow in workflows:
        if not checks_a_change(workflow):
            continue
        for line in workflow.commands:
            script = invoked_script(line, present)
            if script is not None and _is_shell_script(script):
                calls.setdefault(script, []).append((line, workflow.path))
                continue
            if not is_typed_by_hand(line, present):
                continue
            purpose = classify_command(line)
            if purpose != "other":
                collector.add(purpose, line, workflow.path, standing="ci")
    for script, script_calls in list(calls.items())[:_MAX_CI_SCRIPTS]:
        # A script's own variables are set as it runs: a line that uses one is not typeable.
        checks = [
            (classify_command(line), line)
            for line in script_commands(read(script, _CI_SCRIPT_READ_LIMIT) or "")
            if is_typed_by_hand(line, present)
        ]
        checks = [(purpose, line) for purpose, line in checks if purpose != "other"]
        for line, source in script_calls:
            purpose = classify_command(line)
            if purpose != "other" and is_typed_by_hand(line, present):
                # What the call runs is clear only when the script has one check of its kind.
                same_kind = [check for kind, check in checks if kind == purpose]
                runs = same_kind[0] if len(same_kind) == 1 else None
                collector.add(purpose, line, source, runs, standing="ci")
        for purpose, line in checks:
            collector.add(purpose, line, script, standing="ci")


def _is_shell_script(path: str) -> bool:
    name = path.rpartition("/")[2]
    return "." not in name.lstrip(".") or name.endswith((".sh", ".bash"))
