"""Reading a project's own configuration for the commands a contributor runs.

Each parser takes one configuration file's text (already passed through `redact_secrets`) and
records tools, commands and a one-line project description into a `ToolingCollector`. Parsers
are forgiving: a file that does not parse contributes nothing rather than failing the scan.
YAML files (CI workflows, pre-commit) are read line by line for the few keys needed (`run:`,
`script:`, `- id:`), which keeps the package free of a YAML dependency and its load time.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CommandPurpose",
    "ToolCommand",
    "ToolingCollector",
    "Workflow",
    "classify_name",
    "parse_workflow",
]

CommandPurpose = Literal["test", "lint", "format", "typecheck", "build", "other"]

# Purpose of a target, script or session, from the words of its name (`test:unit`, `type-check`).
_PURPOSE_BY_WORD: Mapping[str, CommandPurpose] = {
    **dict.fromkeys(
        ("test", "tests", "pytest", "unit", "unittest", "integration", "e2e", "coverage", "cov"),
        "test",
    ),
    **dict.fromkeys(
        ("lint", "linter", "linting", "ruff", "flake8", "pylint", "eslint", "clippy", "vet"),
        "lint",
    ),
    **dict.fromkeys(("format", "fmt", "black", "prettier", "isort", "formatting"), "format"),
    **dict.fromkeys(
        ("typecheck", "types", "type", "typing", "mypy", "pyright", "tsc"), "typecheck"
    ),
    **dict.fromkeys(("build", "compile", "dist", "package", "wheel", "bundle"), "build"),
}
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def classify_name(name: str) -> CommandPurpose:
    """What a target or script called `name` is for; "other" when its name does not say."""
    for word in _NAME_WORD.findall(name):
        purpose = _PURPOSE_BY_WORD.get(word.lower())
        if purpose is not None:
            return purpose
    return "other"


@dataclass(frozen=True, slots=True)
class ToolCommand:
    """A command a contributor runs, what it is for, and the file that says so.

    `detail` is what the command runs when the file spells it out (a Makefile recipe's first
    line, a package.json script body).
    """

    purpose: CommandPurpose
    command: str
    source: str
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Workflow:
    """A CI configuration file: its name (when it has one) and the shell commands it runs."""

    path: str
    name: str | None
    commands: tuple[str, ...]


@dataclass
class ToolingCollector:
    """Gathers what the parsers find for one scan; `scan_workspace` freezes the result."""

    present: frozenset[str]
    tools: set[str] = field(default_factory=set)
    commands: list[ToolCommand] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)

    def add(
        self,
        purpose: CommandPurpose,
        command: str,
        source: str,
        detail: str | None = None,
        *,
        directory: str = "",
    ) -> None:
        """Record `command`, run from `directory` (relative to the root, "" for the root)."""
        prefixed = f"cd {directory} && {command}" if directory else command
        self.commands.append(ToolCommand(purpose, prefixed, source, _one_line(detail)))

    def has(self, directory: str, name: str) -> bool:
        """Whether the selection holds `name` in `directory`."""
        return f"{directory}/{name}" in self.present if directory else name in self.present

    # -- Python -------------------------------------------------------------------------------

    def parse_pyproject(self, source: str, directory: str, text: str) -> None:
        document = _load_toml(text)
        if document is None:
            return
        tool = _table(document, "tool")
        project = _table(document, "project")
        poetry = _table(tool, "poetry")
        runner = self._python_runner(directory, tool)
        self.tools.add("python")
        name = project.get("name") or poetry.get("name")
        description = f"Python project `{name}`" if isinstance(name, str) else "Python project"
        facts: list[str] = []
        requires = project.get("requires-python")
        if isinstance(requires, str):
            facts.append(f"requires-python {requires}")
        backend = _table(document, "build-system").get("build-backend")
        if isinstance(backend, str):
            facts.append(f"build backend {backend}")
        if runner:
            facts.append(f"commands run through `{runner.strip()}`")
        self._project(f"{description} ({'; '.join([*facts, source])})")
        if "pytest" in tool:
            self._tool("pytest", "test", f"{runner}pytest", source, directory)
        if "ruff" in tool:
            self._tool("ruff", "lint", f"{runner}ruff check .", source, directory)
            if "format" in _table(tool, "ruff"):
                self.add("format", f"{runner}ruff format .", source, directory=directory)
        if "black" in tool:
            self._tool("black", "format", f"{runner}black .", source, directory)
        if "isort" in tool:
            self._tool("isort", "format", f"{runner}isort .", source, directory)
        if "mypy" in tool:
            target = "" if "files" in _table(tool, "mypy") else " ."
            self._tool("mypy", "typecheck", f"{runner}mypy{target}", source, directory)
        if "pyright" in tool:
            self._tool("pyright", "typecheck", f"{runner}pyright", source, directory)
        for name in ("coverage", "setuptools", "uv", "maturin", "flit", "pylint"):
            if name in tool:
                self.tools.add(name)
        if "hatch" in tool:
            self.tools.add("hatch")
            self._hatch_scripts(_table(tool, "hatch"), source, directory)
        if poetry:
            self.tools.add("poetry")
            self.add("build", "poetry build", source, directory=directory)
        if "pdm" in tool:
            self.tools.add("pdm")
            for script in sorted(_table(_table(tool, "pdm"), "scripts")):
                if not script.startswith("_"):
                    self.add(
                        classify_name(script), f"pdm run {script}", source, directory=directory
                    )
        if "tox" in tool:
            self._pyproject_tox(_table(tool, "tox"), source, directory)
        if backend is not None and not poetry:
            build = "uv build" if runner.startswith("uv") else "python -m build"
            self.add("build", build, source, directory=directory)

    def parse_setup_cfg(self, source: str, directory: str, text: str) -> None:
        sections = _ini_sections(text)
        if sections is None:
            return
        if "tool:pytest" in sections:
            self._tool("pytest", "test", "pytest", source, directory)
        if "flake8" in sections:
            self._tool("flake8", "lint", "flake8", source, directory)
        if "mypy" in sections:
            self._tool("mypy", "typecheck", "mypy", source, directory)
        if "isort" in sections:
            self._tool("isort", "format", "isort .", source, directory)

    def parse_tox_ini(self, source: str, directory: str, text: str) -> None:
        sections = _ini_sections(text)
        if sections is None:
            return
        envs = [name.removeprefix("testenv:") for name in sections if name.startswith("testenv:")]
        envlist = sections.get("tox", {}).get("envlist", "")
        self._tox(source, directory, envs, re.split(r"[\s,]+", envlist))

    def parse_noxfile(self, source: str, directory: str, text: str) -> None:
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            return
        self.tools.add("nox")
        for node in module.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                session_name = _nox_session_name(decorator, node.name)
                if session_name is not None:
                    self.add(
                        classify_name(session_name),
                        f"nox -s {session_name}",
                        source,
                        directory=directory,
                    )

    def parse_python_config(self, name: str, source: str, directory: str) -> None:
        """Tools configured by a file's presence alone (pytest.ini, ruff.toml, mypy.ini...)."""
        if name == "pytest.ini":
            self._tool("pytest", "test", "pytest", source, directory)
        elif name in ("ruff.toml", ".ruff.toml"):
            self._tool("ruff", "lint", "ruff check .", source, directory)
        elif name in ("mypy.ini", ".mypy.ini"):
            self._tool("mypy", "typecheck", "mypy", source, directory)
        elif name == ".flake8":
            self._tool("flake8", "lint", "flake8", source, directory)
        elif name == "pyrightconfig.json":
            self._tool("pyright", "typecheck", "pyright", source, directory)

    # -- task runners -------------------------------------------------------------------------

    def parse_makefile(self, source: str, directory: str, text: str) -> None:
        self.tools.add("make")
        for target, recipe in _make_targets(text):
            self.add(classify_name(target), f"make {target}", source, recipe, directory=directory)

    def parse_justfile(self, source: str, directory: str, text: str) -> None:
        self.tools.add("just")
        for recipe, body in _just_recipes(text):
            self.add(classify_name(recipe), f"just {recipe}", source, body, directory=directory)

    def parse_package_json(self, source: str, directory: str, text: str) -> None:
        try:
            document = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return
        if not isinstance(document, dict):
            return
        runner = self._node_runner(directory, document)
        self.tools.update(("node", runner))
        name = document.get("name")
        label = f"Node package `{name}`" if isinstance(name, str) else "Node package"
        self._project(f"{label} ({runner}; {source})")
        scripts = document.get("scripts")
        if isinstance(scripts, dict):
            for script, body in sorted(scripts.items()):
                if not isinstance(body, str) or _is_npm_placeholder(body):
                    continue
                command = _node_script_command(runner, script)
                self.add(classify_name(script), command, source, body, directory=directory)
        for dependencies in (document.get("devDependencies"), document.get("dependencies")):
            if isinstance(dependencies, dict):
                self.tools.update(
                    _NODE_TOOLS[package] for package in dependencies if package in _NODE_TOOLS
                )

    # -- other ecosystems ---------------------------------------------------------------------

    def parse_cargo_toml(self, source: str, directory: str, text: str) -> None:
        document = _load_toml(text)
        if document is None:
            return
        self.tools.add("cargo")
        package = _table(document, "package").get("name")
        is_workspace = "workspace" in document
        label = f"Rust crate `{package}`" if isinstance(package, str) else "Rust workspace"
        self._project(f"{label} ({source})")
        scope = " --workspace" if is_workspace else ""
        self.add("test", f"cargo test{scope}", source, directory=directory)
        self.add("lint", f"cargo clippy{scope}", source, directory=directory)
        self.add("format", "cargo fmt", source, directory=directory)
        self.add("build", f"cargo build{scope}", source, directory=directory)

    def parse_go_mod(self, source: str, directory: str, text: str) -> None:
        self.tools.add("go")
        module = re.search(r"^module\s+(\S+)", text, re.MULTILINE)
        version = re.search(r"^go\s+(\S+)", text, re.MULTILINE)
        label = f"Go module `{module.group(1)}`" if module else "Go module"
        suffix = f"go {version.group(1)}; " if version else ""
        self._project(f"{label} ({suffix}{source})")
        self.add("test", "go test ./...", source, directory=directory)
        self.add("lint", "go vet ./...", source, directory=directory)
        self.add("format", "gofmt -l .", source, directory=directory)
        self.add("build", "go build ./...", source, directory=directory)
        if self.has(directory, ".golangci.yml") or self.has(directory, ".golangci.yaml"):
            self._tool("golangci-lint", "lint", "golangci-lint run", source, directory)

    def parse_pre_commit(self, source: str, directory: str, text: str) -> None:
        self.tools.add("pre-commit")
        hooks = sorted(set(re.findall(r"^\s*-\s+id:\s*['\"]?([\w.\-]+)", text, re.MULTILINE)))
        detail = "hooks: " + ", ".join(hooks) if hooks else None
        self.add("lint", "pre-commit run --all-files", source, detail, directory=directory)
        if "ruff-format" in hooks:
            self.add("format", "ruff format .", source, directory=directory)

    def parse_build_file(self, name: str, source: str, directory: str) -> None:
        """Build systems recognised by their file alone (Maven, Gradle, CMake, TypeScript)."""
        if name == "pom.xml":
            self.tools.add("maven")
            self.add("test", "mvn test", source, directory=directory)
            self.add("build", "mvn package", source, directory=directory)
        elif name in ("build.gradle", "build.gradle.kts"):
            self.tools.add("gradle")
            gradle = "./gradlew" if self.has(directory, "gradlew") else "gradle"
            self.add("test", f"{gradle} test", source, directory=directory)
            self.add("build", f"{gradle} build", source, directory=directory)
        elif name == "CMakeLists.txt":
            self.tools.add("cmake")
            self.add(
                "build", "cmake -S . -B build && cmake --build build", source, directory=directory
            )
            self.add("test", "ctest --test-dir build", source, directory=directory)
        elif name == "tsconfig.json":
            self.tools.add("typescript")

    # -- helpers ------------------------------------------------------------------------------

    def _project(self, description: str) -> None:
        # Names come from the files: bounded so one odd manifest cannot crowd out the digest.
        self.projects.append(_one_line(description, 160) or description)

    def _tool(
        self, tool: str, purpose: CommandPurpose, command: str, source: str, directory: str
    ) -> None:
        self.tools.add(tool)
        self.add(purpose, command, source, directory=directory)

    def _python_runner(self, directory: str, tool: Mapping[str, Any]) -> str:
        if self.has(directory, "uv.lock"):
            return "uv run "
        if self.has(directory, "poetry.lock") or "poetry" in tool:
            return "poetry run "
        if self.has(directory, "pdm.lock"):
            return "pdm run "
        if self.has(directory, "Pipfile"):
            return "pipenv run "
        return ""

    def _node_runner(self, directory: str, document: Mapping[str, Any]) -> str:
        declared = document.get("packageManager")
        if isinstance(declared, str) and declared.split("@")[0] in ("npm", "pnpm", "yarn", "bun"):
            return declared.split("@")[0]
        for lockfile, runner in (
            ("pnpm-lock.yaml", "pnpm"),
            ("yarn.lock", "yarn"),
            ("bun.lock", "bun"),
        ):
            if self.has(directory, lockfile):
                return runner
        return "npm"

    def _hatch_scripts(self, hatch: Mapping[str, Any], source: str, directory: str) -> None:
        envs = _table(hatch, "envs")
        for env_name in sorted(envs):
            scripts = _table(_table(envs, env_name), "scripts")
            for script in sorted(scripts):
                target = script if env_name == "default" else f"{env_name}:{script}"
                detail = scripts[script] if isinstance(scripts[script], str) else None
                self.add(
                    classify_name(script),
                    f"hatch run {target}",
                    source,
                    detail,
                    directory=directory,
                )
        self.add("build", "hatch build", source, directory=directory)

    def _pyproject_tox(self, tox: Mapping[str, Any], source: str, directory: str) -> None:
        legacy = tox.get("legacy_tox_ini")
        if isinstance(legacy, str):
            self.parse_tox_ini(source, directory, legacy)
            return
        env_list = tox.get("env_list")
        self._tox(
            source,
            directory,
            list(_table(tox, "env")),
            [str(env) for env in env_list] if isinstance(env_list, list) else [],
        )

    def _tox(self, source: str, directory: str, envs: list[str], envlist: list[str]) -> None:
        self.tools.add("tox")
        listed = ", ".join(env for env in envlist if env)
        self.add("test", "tox", source, f"envs: {listed}" if listed else None, directory=directory)
        for env in sorted(set(envs)):
            if env and not re.fullmatch(r"py\d*", env):
                self.add(classify_name(env), f"tox -e {env}", source, directory=directory)


def parse_workflow(path: str, text: str) -> Workflow:
    """The name and shell commands of a CI file (GitHub Actions, GitLab, CircleCI, Jenkins...)."""
    name_match = re.search(r"^name:\s*(.+)$", text, re.MULTILINE)
    name = _one_line(_unquote(name_match.group(1).strip()), 80) if name_match else None
    if path.endswith("Jenkinsfile"):
        commands = [m.group(2) for m in _JENKINS_SH.finditer(text)]
    else:
        commands = list(_yaml_commands(text))
    seen: set[str] = set()
    unique: list[str] = []
    for command in commands:
        cleaned = _one_line(command)
        if cleaned and cleaned not in seen and not cleaned.startswith(("echo ", "#")):
            seen.add(cleaned)
            unique.append(cleaned)
    return Workflow(path=path, name=name or None, commands=tuple(unique))


# -- module-level parsing helpers --------------------------------------------------------------

_NODE_TOOLS: Mapping[str, str] = {
    "jest": "jest",
    "vitest": "vitest",
    "mocha": "mocha",
    "eslint": "eslint",
    "prettier": "prettier",
    "typescript": "typescript",
    "@biomejs/biome": "biome",
    "vite": "vite",
    "webpack": "webpack",
    "turbo": "turbo",
    "nx": "nx",
    "playwright": "playwright",
    "@playwright/test": "playwright",
}

_MAKE_TARGET = re.compile(
    r"^([A-Za-z0-9_][A-Za-z0-9_\-]*+(?:[ \t]++[A-Za-z0-9_][A-Za-z0-9_\-]*+)*+)[ \t]*+::?(?!=)(.*)$"
)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][A-Za-z0-9_\-]*)(?:[ \t]+[^:\n]*)?:(?!=)(.*)$")
_JUST_KEYWORDS = frozenset({"set", "alias", "export", "import", "mod", "if", "else"})
_YAML_COMMAND_KEY = re.compile(
    r"^(?P<indent>[ \t]*)(?:-[ \t]+)?(?P<key>run|script|before_script|after_script|command|bash)"
    r"[ \t]*:[ \t]*(?P<value>.*)$"
)
_JENKINS_SH = re.compile(r"\bsh\s*\(?\s*(['\"])(.+?)\1")
_SHELLS = frozenset({"bash", "sh", "pwsh", "powershell", "cmd"})
_SHELL_KEYWORDS = frozenset({"then", "fi", "do", "done", "else", "esac", "{", "}"})


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
            if target not in seen:
                seen.add(target)
                yield target, recipe


def _first_recipe_line(lines: list[str], index: int) -> str | None:
    for line in lines[index + 1 :]:
        if not line.startswith("\t"):
            return None
        command = line.strip().lstrip("@-+").strip()
        if command and not command.startswith("#"):
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


def _yaml_commands(text: str) -> Iterator[str]:
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _YAML_COMMAND_KEY.match(lines[index])
        index += 1
        if match is None:
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
                    _unquote(line.lstrip()[2:].strip())
                    for line in block
                    if line.lstrip().startswith("- ")
                )
        elif value.startswith("["):
            yield from (_unquote(item.strip()) for item in value.strip("[]").split(","))
        else:
            yield _unquote(value)


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
                    return _unquote(found.group(1))
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


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _nox_session_name(decorator: ast.expr, function_name: str) -> str | None:
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    is_session = (isinstance(target, ast.Attribute) and target.attr == "session") or (
        isinstance(target, ast.Name) and target.id == "session"
    )
    if not is_session:
        return None
    if call is not None:
        for keyword in call.keywords:
            if (
                keyword.arg == "name"
                and isinstance(keyword.value, ast.Constant)
                and isinstance(keyword.value.value, str)
            ):
                return keyword.value.value
    return function_name


def _node_script_command(runner: str, script: str) -> str:
    if runner == "npm":
        return "npm test" if script == "test" else f"npm run {script}"
    if runner == "yarn":
        return f"yarn {script}"
    return f"{runner} run {script}"


def _is_npm_placeholder(body: str) -> bool:
    return "no test specified" in body


def _load_toml(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None


def _ini_sections(text: str) -> dict[str, dict[str, str]] | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return {name: dict(parser.items(name)) for name in parser.sections()}


def _table(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def _one_line(text: str | None, limit: int = 120) -> str | None:
    """`text` on one line, at most `limit` characters, cut at a word boundary with an ellipsis."""
    if text is None:
        return None
    collapsed = " ".join(text.split())
    if len(collapsed) <= limit:
        return collapsed or None
    cut = collapsed[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"
