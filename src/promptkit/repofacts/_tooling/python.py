"""Python projects: pyproject.toml (tool tables, hatch/pdm scripts, tox), setup.cfg, tox.ini,
noxfile.py, and the tool configuration files whose presence alone says a tool is used.

The runner prefix (`uv run `, `poetry run `...) comes from the lockfile's name, whatever its size.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import classify_name, ini_sections, load_toml, table

__all__ = [
    "parse_noxfile",
    "parse_pyproject",
    "parse_python_config",
    "parse_setup_cfg",
    "parse_tox_ini",
]


# One case per tool a pyproject.toml configures: a table of cases, read top to bottom.
def parse_pyproject(collector: ToolingCollector, source: str, directory: str, text: str) -> None:  # noqa: C901, PLR0912
    document = load_toml(text)
    if document is None:
        return
    tool = table(document, "tool")
    project = table(document, "project")
    poetry = table(tool, "poetry")
    runner = collector.python_runner(directory, tool)
    collector.tools.add("python")
    if runner:
        collector.tools.add(runner.split()[0])
    name = project.get("name") or poetry.get("name")
    facts: list[str] = []
    requires = project.get("requires-python")
    if isinstance(requires, str):
        facts.append(f"requires-python {requires}")
    backend = table(document, "build-system").get("build-backend")
    if isinstance(backend, str):
        facts.append(f"build backend {backend}")
    if runner:
        facts.append(f"commands run through `{runner.strip()}`")
    collector.project("Python project", name, facts, source)
    if "pytest" in tool or "pytest" in _dev_dependencies(document):
        collector.add_default("pytest", "test", f"{runner}pytest", source, directory)
    if "ruff" in tool:
        collector.add_default("ruff", "lint", f"{runner}ruff check .", source, directory)
        collector.add_default("ruff", "format", f"{runner}ruff format .", source, directory)
    if "black" in tool:
        collector.add_default("black", "format", f"{runner}black .", source, directory)
    if "isort" in tool:
        collector.add_default("isort", "format", f"{runner}isort .", source, directory)
    if "mypy" in tool:
        target = "" if "files" in table(tool, "mypy") else " ."
        collector.add_default("mypy", "typecheck", f"{runner}mypy{target}", source, directory)
    if "pyright" in tool:
        collector.add_default("pyright", "typecheck", f"{runner}pyright", source, directory)
    for name in ("coverage", "setuptools", "uv", "maturin", "flit", "pylint", "ty", "codespell"):
        if name in tool:
            collector.tools.add(name)
    if "hatch" in tool:
        _hatch(collector, table(tool, "hatch"), source, directory)
    if poetry:
        collector.add_default("poetry", "build", "poetry build", source, directory)
    if "pdm" in tool:
        collector.tools.add("pdm")
        for script in sorted(table(table(tool, "pdm"), "scripts")):
            if not script.startswith("_"):
                command = f"pdm run {script}"
                collector.add(classify_name(script), command, source, directory=directory)
    if "tox" in tool:
        _pyproject_tox(collector, table(tool, "tox"), source, directory)
    if isinstance(backend, str) and not poetry and "hatch" not in tool:
        build = "uv build" if runner.startswith("uv") else "python -m build"
        collector.add_default("python", "build", build, source, directory)


def parse_setup_cfg(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    sections = ini_sections(text)
    if sections is None:
        return
    runner = collector.python_runner(directory, {})
    if "tool:pytest" in sections:
        collector.add_default("pytest", "test", f"{runner}pytest", source, directory)
    if "flake8" in sections:
        collector.add_default("flake8", "lint", f"{runner}flake8", source, directory)
    if "mypy" in sections:
        collector.add_default("mypy", "typecheck", f"{runner}mypy", source, directory)
    if "isort" in sections:
        collector.add_default("isort", "format", f"{runner}isort .", source, directory)


def parse_tox_ini(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    sections = ini_sections(text)
    if sections is None:
        return
    envs = [name.removeprefix("testenv:") for name in sections if name.startswith("testenv:")]
    envlist = sections.get("tox", {}).get("envlist", "")
    _tox(collector, source, directory, envs, re.split(r"[\s,]+", envlist))
    # Labels name sets of environments (`tox -m test`), as tox 4 runs them.
    for line in sections.get("tox", {}).get("labels", "").splitlines():
        label = line.partition("=")[0].strip()
        if label and "=" in line and re.fullmatch(r"[\w.-]+", label):
            collector.add(classify_name(label), f"tox -m {label}", source, directory=directory)


def parse_noxfile(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    collector.tools.add("nox")
    for node in module.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            session_name = _nox_session_name(decorator, node.name)
            if session_name is not None:
                command = f"nox -s {session_name}"
                collector.add(classify_name(session_name), command, source, directory=directory)


def parse_python_config(
    collector: ToolingCollector, name: str, source: str, directory: str
) -> None:
    """Tools configured by a file's presence alone (pytest.ini, ruff.toml, mypy.ini...)."""
    runner = collector.python_runner(directory, {})
    if name == "pytest.ini":
        collector.add_default("pytest", "test", f"{runner}pytest", source, directory)
    elif name in ("ruff.toml", ".ruff.toml"):
        collector.add_default("ruff", "lint", f"{runner}ruff check .", source, directory)
    elif name in ("mypy.ini", ".mypy.ini"):
        collector.add_default("mypy", "typecheck", f"{runner}mypy", source, directory)
    elif name == ".flake8":
        collector.add_default("flake8", "lint", f"{runner}flake8", source, directory)
    elif name == "pyrightconfig.json":
        collector.add_default("pyright", "typecheck", f"{runner}pyright", source, directory)


def _dev_dependencies(document: Mapping[str, Any]) -> str:
    """The dependency groups and optional dependencies, as one searchable string."""
    groups = document.get("dependency-groups")
    optional = table(document, "project").get("optional-dependencies")
    return repr((groups, optional))


def _hatch(
    collector: ToolingCollector, hatch: Mapping[str, Any], source: str, directory: str
) -> None:
    collector.tools.add("hatch")
    envs = table(hatch, "envs")
    for env_name in sorted(envs):
        scripts = table(table(envs, env_name), "scripts")
        for script in sorted(scripts):
            target = script if env_name == "default" else f"{env_name}:{script}"
            body = scripts[script]
            detail = body if isinstance(body, str) else None
            if isinstance(body, list) and body and isinstance(body[0], str):
                detail = body[0]
            collector.add(
                classify_name(script), f"hatch run {target}", source, detail, directory=directory
            )
    collector.add_default("hatch", "build", "hatch build", source, directory)


def _pyproject_tox(
    collector: ToolingCollector, tox: Mapping[str, Any], source: str, directory: str
) -> None:
    legacy = tox.get("legacy_tox_ini")
    if isinstance(legacy, str):
        parse_tox_ini(collector, source, directory, legacy)
        return
    env_list = tox.get("env_list")
    _tox(
        collector,
        source,
        directory,
        list(table(tox, "env")),
        [str(env) for env in env_list] if isinstance(env_list, list) else [],
    )


def _tox(
    collector: ToolingCollector, source: str, directory: str, envs: list[str], envlist: list[str]
) -> None:
    collector.tools.add("tox")
    listed = ", ".join(env for env in envlist if env)
    detail = f"envs: {listed}" if listed else None
    collector.add("test", "tox", source, detail, directory=directory)
    # A factor expansion (`py{310,311}-cov`) names many environments, none of them runnable
    # as it is spelled.
    for env in sorted({*envs, *envlist}):
        if env and "{" not in env and not re.fullmatch(r"py\d*", env):
            collector.add(classify_name(env), f"tox -e {env}", source, directory=directory)


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
