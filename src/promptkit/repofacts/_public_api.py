"""The modules a package makes public: those its entry points re-export.

A package's `index.ts` (`export { Client } from './client/client'`) or `__init__.py`
(`from .client.stdio import stdio_client`) lists, in its author's order, the modules that make
up what users import; maintainers name them when they explain the code (the transports, the
middleware). Only the first entry points are read, each only so far, until enough modules are
found; a name that resolves to no listed file is skipped.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection

from promptkit.repofacts._tooling.model import FileReader

__all__ = ["reexported_modules"]

_MAX_MODULES = 8
_MAX_ENTRY_POINTS_READ = 6
_ENTRY_READ_LIMIT = 64 * 1024
# The module of `export { a } from './x'`, `export * from "./x.js"`, `} from '../x';`.
_TS_FROM = re.compile(r"\bfrom\s*['\"](\.{1,2}/[^'\"]+)['\"]")
# `from .client.stdio import x`, `from ..shared import y`.
_PY_REEXPORT = re.compile(r"^from[ \t]+(\.+)([\w.]*)[ \t]+import\b", re.MULTILINE)
_TS_SOURCES = (".ts", ".tsx", ".mts", "/index.ts", "/index.tsx")


def reexported_modules(
    entry_points: tuple[str, ...],
    present: Collection[str],
    read: FileReader,
    *,
    known: Collection[str] = (),
) -> tuple[str, ...]:
    """Modules the first `entry_points` re-export, in the order they name them (bounded).

    `present` holds every listed path; modules in `known` (already named elsewhere in the
    digest) and the entry points themselves are left out.
    """
    found: list[str] = []
    skip = {*known, *entry_points}
    for entry in entry_points[:_MAX_ENTRY_POINTS_READ]:
        text = read(entry, _ENTRY_READ_LIMIT)
        if text is None:
            continue
        for module in _named_modules(entry, text, present):
            if module not in skip:
                skip.add(module)
                found.append(module)
                if len(found) == _MAX_MODULES:
                    return tuple(found)
    return tuple(found)


def _named_modules(entry: str, text: str, present: Collection[str]) -> list[str]:
    folder = entry.rpartition("/")[0]
    modules: list[str] = []
    if entry.endswith(".py"):
        # The cheap test first: most lines of an `__init__.py` are not relative imports.
        if "from ." not in text:
            return modules
        for match in _PY_REEXPORT.finditer(text):
            dots, name = match.groups()
            if not name:
                continue  # `from . import types`: a module of the package, named as a name
            base = folder
            for _ in range(len(dots) - 1):
                base = base.rpartition("/")[0]
            stem = posixpath.join(base, name.replace(".", "/"))
            modules.extend(_first_present((f"{stem}.py", f"{stem}/__init__.py"), present))
        return modules
    if "from" not in text:
        return modules
    # Line by line, not one pattern over the file: a statement runs from its first line to the
    # next line that starts at the margin (a closing `} from './x'` continues it), so a file of
    # thousands of `export const` lines costs one pass, not one scan to its end per line.
    in_export = False
    for line in text.splitlines():
        if line[:1] not in ("", " ", "\t", "}"):
            in_export = line.startswith("export ")
        source = _TS_FROM.search(line) if in_export and "from" in line else None
        if source is None:
            continue
        in_export = False
        target = posixpath.normpath(posixpath.join(folder, source.group(1)))
        # A `.js` suffix names the compiled file; the source sits beside it as `.ts`.
        stem = re.sub(r"\.[cm]?js$", "", target)
        modules.extend(_first_present(tuple(stem + ending for ending in _TS_SOURCES), present))
    return modules


def _first_present(candidates: tuple[str, ...], present: Collection[str]) -> list[str]:
    for candidate in candidates:
        if candidate in present:
            return [candidate]
    return []
