"""The merge view `overrides edit` opens for a stale entry: the operator's text is never lost.

When the code of a section changed after an operator overrode it, the editor buffer holds three
texts between conflict markers in the diff3 layout editors and merge tools highlight: the
operator's override, the default the override was written against (`code_default`, when the
store recorded it), and the code's new default. The edit is stored only once no marker line
is left.
"""

from __future__ import annotations

import re

OURS = "<<<<<<< "
BASE = "||||||| "
SEPARATOR = "======="
THEIRS = ">>>>>>> "
_MARKER = re.compile(r"^(?:<{7} |\|{7} |={7}$|>{7} )", re.MULTILINE)


def merge_view(*, override: str, old_default: str | None, new_default: str) -> str:
    """The buffer to edit: the override and both defaults between conflict markers."""
    base = old_default if old_default is not None else "(not recorded in the override file)\n"
    return (
        f"{OURS}your override (written for the old code)\n{_line_ended(override)}"
        f"{BASE}the code's default when the override was written\n{_line_ended(base)}"
        f"{SEPARATOR}\n{_line_ended(new_default)}"
        f"{THEIRS}the code's default now\n"
    )


def unresolved_markers(text: str) -> list[int]:
    """The line numbers of conflict marker lines left in `text` (empty when resolved)."""
    return [text.count("\n", 0, found.start()) + 1 for found in _MARKER.finditer(text)]


def _line_ended(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"
