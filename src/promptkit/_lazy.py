"""Lazy re-exports for package `__init__` modules (PEP 562), from one table.

A package declares its public names once, as `from module import (Name as Name, ...)` lines in
an `if TYPE_CHECKING:` block: type checkers read those imports, so a misspelt name is an error
in user code. At run time the `else:` branch calls `lazy_exports(__name__)`, which reads the
same block from the package's source and imports a name's module the first time the name is
read; importing the package itself then costs almost nothing.

The block is read with plain string operations rather than `ast`: it is written in one shape
(ruff formats it), and parsing a whole module tree would cost more than the imports it saves.
`tests/test_exports.py` checks that this reading matches what `ast` sees.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs more to import than everything else `import promptkit` runs
    from collections.abc import Callable, Mapping
    from typing import Any

_BLOCK_OPENER = "if TYPE_CHECKING:"


def declared_exports(source: str) -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute), from the `if TYPE_CHECKING:` block of `source`."""
    lines = source.splitlines()
    try:
        start = lines.index(_BLOCK_OPENER) + 1
    except ValueError:
        return {}
    block: list[str] = []
    for line in lines[start:]:
        if line and not line[0].isspace():
            break
        block.append(line.partition("#")[0])
    exports: dict[str, tuple[str, str]] = {}
    for statement in " ".join(block).split(" from ")[1:]:
        module, _, names = statement.partition(" import ")
        for item in names.replace("(", " ").replace(")", " ").split(","):
            words = item.split()
            if words:
                exports[words[-1]] = (module.strip(), words[0])
    return exports


def lazy_exports(
    package: str,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """`__getattr__`, `__dir__` and `__all__` for `package`, from its declared exports."""
    module = sys.modules[package]
    if module.__file__ is None:
        raise ImportError(f"{package} has no source file to read its declared exports from")
    # Not pathlib: importing it would cost more than the rest of `import promptkit`.
    with open(module.__file__, encoding="utf-8") as source:  # noqa: PTH123
        exports = declared_exports(source.read())
    return _module_getattr(package, exports), _module_dir(package, exports), sorted(exports)


def _module_getattr(package: str, exports: Mapping[str, tuple[str, str]]) -> Callable[[str], Any]:
    namespace = sys.modules[package].__dict__

    def module_getattr(name: str) -> Any:
        origin = exports.get(name)
        if origin is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = origin
        value = getattr(importlib.import_module(module), attribute)
        namespace[name] = value
        return value

    return module_getattr


def _module_dir(package: str, exports: Mapping[str, tuple[str, str]]) -> Callable[[], list[str]]:
    namespace = sys.modules[package].__dict__

    def module_dir() -> list[str]:
        return sorted({*namespace, *exports})

    return module_dir
