"""Git hook managers: pre-commit and lefthook.

Where a project runs its pre-commit hooks with `prek`, the ranking renames the command
(`promptkit.repofacts._tooling.ranking`), since only the CI files and runners say so.
"""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import unquote

__all__ = ["parse_lefthook", "parse_pre_commit"]

_LEFTHOOK_HOOKS = ("pre-commit", "pre-push", "commit-msg")


def parse_pre_commit(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """.pre-commit-config.yaml: `pre-commit run --all-files`, with the hooks it runs."""
    runner = "prek" if collector.has("", "prek.toml") else "pre-commit"
    collector.tools.add(runner)
    hooks = sorted(set(re.findall(r"^\s*-\s+id:\s*['\"]?([\w.\-]+)", text, re.MULTILINE)))
    detail = "hooks: " + ", ".join(hooks) if hooks else None
    collector.add("lint", f"{runner} run --all-files", source, detail, directory=directory)


def parse_lefthook(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    """lefthook.yml: `lefthook run <hook>` for each hook, with its first command."""
    collector.tools.add("lefthook")
    hook: str | None = None
    for line in text.splitlines():
        if line and not line[0].isspace():
            name = line.split(":", 1)[0].strip()
            if hook is not None:
                hook = None
            if name in _LEFTHOOK_HOOKS:
                hook = name
            continue
        run = re.match(r"\s+run:\s*(.+)$", line)
        if hook is not None and run is not None:
            detail = unquote(run.group(1).strip())
            collector.add("lint", f"lefthook run {hook}", source, detail, directory=directory)
            hook = None
