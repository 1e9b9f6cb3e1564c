"""Public names: one declared table per package, read the same way by mypy and at run time.

`promptkit` and several of its packages (`adapters`, `hostfiles`, `repofacts`, `workspace`, ...)
declare their names as imports in an `if TYPE_CHECKING:` block; at run time `promptkit._lazy`
reads that block from the source. These tests hold the two readings together and keep the
top-level namespace to the everyday names.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import promptkit
from promptkit._lazy import declared_exports

SRC = Path(promptkit.__file__).parent
# Every package whose `__init__` loads its names through `promptkit._lazy`.
LAZY_PACKAGES = tuple(
    ".".join(("promptkit", *init.parent.relative_to(SRC).parts))
    for init in sorted(SRC.rglob("__init__.py"))
    if "lazy_exports(__name__)" in init.read_text(encoding="utf-8")
)

# The names the workspace digest specification (the seed) makes public from `promptkit`.
SEED_NAMES = frozenset(
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


def _source(package: str) -> str:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).read_text(encoding="utf-8")


def _type_checking_imports(source: str) -> dict[str, tuple[str, str]]:
    """What a type checker sees: the imports inside `if TYPE_CHECKING:`, read with `ast`."""
    block = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: (statement.module or "", alias.name)
        for statement in block.body
        if isinstance(statement, ast.ImportFrom)
        for alias in statement.names
    }


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_runtime_exports_match_the_names_declared_to_type_checkers(package: str) -> None:
    source = _source(package)

    assert declared_exports(source) == _type_checking_imports(source)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_declared_name_is_re_exported_under_its_own_name(package: str) -> None:
    # `Name as Name` is what makes an import a re-export under mypy --strict.
    declared = _type_checking_imports(_source(package))

    assert [name for name, (_, attribute) in declared.items() if name != attribute] == []


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_declared_name_resolves_to_the_object_its_module_defines(package: str) -> None:
    module = importlib.import_module(package)

    for name, (origin, attribute) in declared_exports(_source(package)).items():
        assert getattr(module, name) is getattr(importlib.import_module(origin), attribute)


def test_the_packages_with_lazy_names_are_found() -> None:
    assert {
        "promptkit",
        "promptkit.adapters",
        "promptkit.hostfiles",
        "promptkit.repofacts",
        "promptkit.workspace",
    } <= set(LAZY_PACKAGES)


def test_top_level_namespace_keeps_the_seed_names() -> None:
    assert set(promptkit.__all__) >= SEED_NAMES


def test_top_level_namespace_holds_about_forty_everyday_names() -> None:
    assert 30 <= len(promptkit.__all__) <= 45


def test_a_package_without_a_type_checking_block_declares_nothing() -> None:
    assert declared_exports('"""No exports."""\n\nVALUE = 1\n') == {}
