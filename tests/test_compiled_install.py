"""An install without `.py` sources still exports every public name.

Some deployments ship only compiled modules (a frozen application, an image that strips
sources). The wheel is built from this checkout with the build backend pyproject.toml names,
installed into a folder, compiled to sourceless `.pyc` files and stripped of every `.py`; a
fresh interpreter then imports every name each public package declares. Nothing in promptkit
may read its own source at run time for this to hold.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO_ROOT

SRC = REPO_ROOT / "src" / "promptkit"

# Reads every declared name of every package handed in, in an interpreter that sees only the
# compiled install; prints where promptkit came from and each package's `__all__`.
IMPORT_EVERY_NAME = """
import importlib, json, sys
declared = json.loads(sys.argv[1])
found = {}
for package, names in declared.items():
    module = importlib.import_module(package)
    for name in names:
        getattr(module, name)
    found[package] = sorted(module.__all__)
import promptkit
print(json.dumps({"file": promptkit.__file__, "all": found}))
"""


def _declared_names() -> dict[str, list[str]]:
    """Every public package and the names its `if TYPE_CHECKING:` block declares."""
    declared: dict[str, list[str]] = {}
    for init in sorted(SRC.rglob("__init__.py")):
        parts = init.parent.relative_to(SRC).parts
        if any(part.startswith("_") for part in parts):
            continue
        tree = ast.parse(init.read_text(encoding="utf-8"))
        block = next(
            node
            for node in tree.body
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        )
        declared[".".join(("promptkit", *parts))] = sorted(
            alias.asname or alias.name
            for statement in block.body
            if isinstance(statement, ast.ImportFrom)
            for alias in statement.names
        )
    return declared


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed


def _build_wheel(tmp_path: Path) -> Path:
    """The wheel of a copy of this checkout, built offline with the installed backend."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO_ROOT / name, checkout / name)
    shutil.copytree(
        SRC,
        checkout / "src" / "promptkit",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    wheels = tmp_path / "wheels"
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-build-isolation",
        "--no-deps",
        "--no-index",
        "--wheel-dir",
        wheels,
        checkout,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("promptkit-*.whl")
    return wheel


def _install_compiled_only(wheel: Path, target: Path) -> None:
    """Install `wheel` into `target`, then leave only sourceless `.pyc` files beside each other."""
    _run(
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        "--no-compile",
        "--target",
        target,
        wheel,
        cwd=target.parent,
    )
    # `-b` writes `module.pyc` where `module.py` was, the layout Python imports without sources.
    _run(sys.executable, "-m", "compileall", "-q", "-b", target / "promptkit", cwd=target.parent)
    for source in (target / "promptkit").rglob("*.py"):
        source.unlink()


def test_every_public_name_imports_from_a_wheel_with_its_sources_removed(tmp_path: Path) -> None:
    target = tmp_path / "site"
    target.mkdir()
    _install_compiled_only(_build_wheel(tmp_path), target)
    declared = _declared_names()

    completed = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERY_NAME, json.dumps(declared)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )

    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert list((target / "promptkit").rglob("*.py")) == []
    assert result["file"] == str(target / "promptkit" / "__init__.pyc")
    assert result["all"] == declared
