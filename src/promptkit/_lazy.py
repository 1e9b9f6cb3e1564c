"""Lazy re-exports for package `__init__` modules (PEP 562).

A package lists which submodule defines each public name; a name's submodule is imported the
first time the name is read. Importing the package itself then costs almost nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, resolving names through `exports`."""
    namespace = sys.modules[package].__dict__

    def module_getattr(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def module_dir() -> list[str]:
        return sorted({*namespace, *exports})

    return module_getattr, module_dir
