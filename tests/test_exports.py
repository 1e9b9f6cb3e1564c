"""Public names: every public package says what it exports in one shape, read alike by mypy and
at run time.

Each public package's `__init__` declares its names as `Name as Name` imports in an
`if TYPE_CHECKING:` block (what type checkers read) and hands the same names to
`promptkit._lazy.lazy_exports` as a literal `{module: names}` table (what the interpreter reads).
These tests hold the two together, keep every `__init__` to that one shape, and keep the
top-level namespace to the everyday names.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import promptkit

SRC = Path(promptkit.__file__).parent


def _package_name(init: Path) -> str:
    return ".".join(("promptkit", *init.parent.relative_to(SRC).parts))


# Every public package: private ones (`_tooling`) are internals of their parent.
PUBLIC_PACKAGES = tuple(
    _package_name(init)
    for init in sorted(SRC.rglob("__init__.py"))
    if not any(part.startswith("_") for part in init.parent.relative_to(SRC).parts)
)

# The names the workspace digest specification makes public from `promptkit`.
SPECIFIED_NAMES = frozenset(
    {
        "OptimizationResult",
        "OptimizationScope",
        "PlanningToolsSection",
        "Prompt",
        "PromptOverridesStore",
        "PromptResponse",
        "ProviderAdapter",
        "Session",
        "SessionProtocol",
        "WorkspaceDigest",
        "WorkspaceDigestSection",
        "clear_workspace_digest",
        "latest_workspace_digest",
        "set_workspace_digest",
    }
)


def _init_tree(package: str) -> ast.Module:
    init = SRC.joinpath(*package.split(".")[1:], "__init__.py")
    return ast.parse(init.read_text(encoding="utf-8"))


def _export_block(tree: ast.Module) -> ast.If:
    return next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )


def _declared_to_type_checkers(package: str) -> dict[str, tuple[str, ...]]:
    """The imports inside `if TYPE_CHECKING:`, as {module: names}."""
    declared: dict[str, tuple[str, ...]] = {}
    for statement in _export_block(_init_tree(package)).body:
        assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
        assert statement.module is not None
        names = tuple(alias.asname or alias.name for alias in statement.names)
        declared[statement.module] = declared.get(statement.module, ()) + names
    return declared


def _runtime_table(package: str) -> dict[str, tuple[str, ...]]:
    """The literal table the `else:` branch hands to `lazy_exports`."""
    call = next(
        node
        for node in ast.walk(
            ast.Module(body=_export_block(_init_tree(package)).orelse, type_ignores=[])
        )
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "lazy_exports"
    )
    assert len(call.args) == 2, f"{package}: lazy_exports(__name__, {{module: names}})"
    table = ast.literal_eval(call.args[1])
    assert isinstance(table, dict)
    return table


def _shape(statement: ast.stmt) -> str:
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return "docstring"
    if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
        return "from __future__"
    if isinstance(statement, ast.AnnAssign):
        return ast.unparse(statement.target) + ": annotation"
    if isinstance(statement, ast.Assign):
        return ", ".join(ast.unparse(target) for target in statement.targets) + " ="
    if isinstance(statement, ast.If):
        return f"if {ast.unparse(statement.test)}"
    return type(statement).__name__


def test_every_public_package_is_found() -> None:
    assert {
        "promptkit",
        "promptkit.adapters",
        "promptkit.digest",
        "promptkit.hostfiles",
        "promptkit.prompt",
        "promptkit.session",
        "promptkit.testing",
        "promptkit.workspace",
    } <= set(PUBLIC_PACKAGES)


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_an_init_holds_its_docstring_and_its_exports_only(package: str) -> None:
    allowed = {
        "docstring",
        "from __future__",
        "TYPE_CHECKING =",
        "__all__: annotation",
        "if TYPE_CHECKING",
    }
    if package == "promptkit":
        allowed.add("__version__ =")

    shapes = [_shape(statement) for statement in _init_tree(package).body]

    assert [shape for shape in shapes if shape not in allowed] == []


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_the_runtime_table_names_what_type_checkers_are_told(package: str) -> None:
    def as_sets(table: dict[str, tuple[str, ...]]) -> dict[str, set[str]]:
        return {module: set(names) for module, names in table.items()}

    assert as_sets(_runtime_table(package)) == as_sets(_declared_to_type_checkers(package))


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_declared_name_is_re_exported_under_its_own_name(package: str) -> None:
    # `Name as Name` is what makes an import a re-export under mypy --strict.
    renamed = [
        f"{alias.name} as {alias.asname}"
        for statement in _export_block(_init_tree(package)).body
        if isinstance(statement, ast.ImportFrom)
        for alias in statement.names
        if alias.asname != alias.name
    ]

    assert renamed == []


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_declared_name_resolves_to_the_object_its_module_defines(package: str) -> None:
    module = importlib.import_module(package)
    declared = _declared_to_type_checkers(package)

    assert sorted(module.__all__) == sorted(name for names in declared.values() for name in names)
    for origin, names in declared.items():
        for name in names:
            assert getattr(module, name) is getattr(importlib.import_module(origin), name)


def test_top_level_namespace_keeps_the_specified_names() -> None:
    assert set(promptkit.__all__) >= SPECIFIED_NAMES


def test_top_level_namespace_holds_about_forty_everyday_names() -> None:
    assert 30 <= len(promptkit.__all__) <= 45
