"""Lazy re-exports for package `__init__` modules (PEP 562), from a literal table.

Every public package says what it exports in one shape, twice side by side:

- an `if TYPE_CHECKING:` block of `from module import (Name as Name, ...)` lines, which type
  checkers read, so a misspelt name is an error in user code;
- in its `else:` branch, the same names as a literal `{module: (name, ...)}` table handed to
  `lazy_exports`, which the interpreter reads: a name's module is imported the first time the
  name is read, so importing the package itself costs almost nothing.

Nothing is read from source files at run time, so an install that holds only compiled modules
keeps every export; `tests/test_exports.py` checks that each table says what its block says.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs more to import than everything else `import promptkit` runs
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """`__getattr__`, `__dir__` and `__all__` for `package`, from its `{module: names}` table."""
    origins = {name: module for module, names in table.items() for name in names}
    return (
        _module_getattr(package, origins),
        _module_dir(package, origins),
        sorted(origins),
    )


def _module_getattr(package: str, origins: Mapping[str, str]) -> Callable[[str], Any]:
    namespace = sys.modules[package].__dict__

    def module_getattr(name: str) -> Any:
        module = origins.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return module_getattr


def _module_dir(package: str, origins: Mapping[str, str]) -> Callable[[], list[str]]:
    namespace = sys.modules[package].__dict__

    def module_dir() -> list[str]:
        return sorted({*namespace, *origins})

    return module_dir
