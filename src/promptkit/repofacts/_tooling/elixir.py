"""Elixir: mix.exs (the application, an umbrella's apps, its aliases and check dependencies).

Mix runs a project's tasks and its aliases alike (`mix test`, `mix precommit`); an alias says
what it is for by its name or, failing that, by the tasks it runs. Credo and Dialyxir add
`mix credo` and `mix dialyzer`; `.formatter.exs` is what `mix format` reads.
"""

from __future__ import annotations

import re

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import CommandPurpose, classify_command, classify_name

__all__ = ["parse_mix"]

_APP = re.compile(r"\bapp:\s*:(\w+)")
_ELIXIR = re.compile(r"""\belixir:\s*"([^"]+)\"""")
_UMBRELLA = re.compile(r"""\bapps_path:\s*"([^"]+)\"""")
_ALIASES = re.compile(r"defp?\s+aliases\b[^\n]*\bdo\b(.*?)^\s*end\b", re.DOTALL | re.MULTILINE)
_ALIAS = re.compile(r"""^\s*(?:"([\w.:-]+)"|([\w.]+)):\s*(.+)$""", re.MULTILINE)
_CHECK_DEPS: tuple[tuple[str, CommandPurpose, str], ...] = (
    ("credo", "lint", "mix credo"),
    ("dialyxir", "typecheck", "mix dialyzer"),
)


def parse_mix(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    collector.tools.add("mix")
    collector.programs.update(("mix", "iex", "elixir"))
    app = _APP.search(text)
    version = _ELIXIR.search(text)
    umbrella = _UMBRELLA.search(text)
    facts = [f"elixir {version.group(1)}"] if version else []
    if umbrella:
        facts.append(f"umbrella of {umbrella.group(1)}/")
    collector.project("Elixir project", app.group(1) if app else None, facts, source)
    block = _ALIASES.search(text)
    for found in _ALIAS.finditer(block.group(1) if block else ""):
        name = found.group(1) or found.group(2)
        body = found.group(3).strip().rstrip(",")
        tasks = re.findall(r"""["']([^"']+)["']""", body)
        purpose = classify_name(name)
        if purpose == "other" and tasks:
            purpose = classify_command(f"mix {tasks[-1]}")
        detail = "; ".join(f"mix {task}" for task in tasks[:3]) or None
        collector.add(purpose, f"mix {name}", source, detail, directory=directory)
    collector.add_default("mix", "test", "mix test", source, directory)
    collector.add_default("mix", "build", "mix compile --warnings-as-errors", source, directory)
    if collector.has(directory, ".formatter.exs"):
        collector.add_default("mix", "format", "mix format --check-formatted", source, directory)
    for dependency, purpose, command in _CHECK_DEPS:
        if re.search(rf"\{{:{dependency}\b", text):
            collector.tools.add(dependency)
            collector.add_default(dependency, purpose, command, source, directory)
