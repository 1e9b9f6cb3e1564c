"""Deno: `deno.json` (or `deno.jsonc`, whose comments and trailing commas are allowed) names a
project's tasks, run as `deno task <name>`, and its workspace members; `deno test`, `deno lint`
and `deno fmt` need no configuration."""

from __future__ import annotations

import json
import re
from typing import Any

from promptkit.repofacts._tooling.collector import ToolingCollector
from promptkit.repofacts._tooling.model import classify_name

__all__ = ["parse_deno"]

# A JSONC token: a string (kept), a comment (dropped), or a comma before a closing bracket.
_JSONC_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def parse_deno(collector: ToolingCollector, source: str, directory: str, text: str) -> None:
    document = _load_jsonc(text)
    if document is None:
        return
    collector.tools.add("deno")
    collector.programs.add("deno")
    name = document.get("name")
    workspace = document.get("workspace")
    facts = []
    if isinstance(workspace, list) and workspace:
        facts.append(f"workspace of {len(workspace)} members")
    collector.project("Deno project", name, facts, source)
    tasks = document.get("tasks")
    for task, body in tasks.items() if isinstance(tasks, dict) else ():
        if isinstance(body, dict):
            body = body.get("command")
        detail = body if isinstance(body, str) else None
        collector.add(classify_name(task), f"deno task {task}", source, detail, directory=directory)
    collector.add_default("deno", "test", "deno test", source, directory)
    collector.add_default("deno", "lint", "deno lint", source, directory)
    collector.add_default("deno", "format", "deno fmt --check", source, directory)


def _load_jsonc(text: str) -> dict[str, Any] | None:
    """JSON with comments and trailing commas, as deno.jsonc allows; None when it does not
    parse."""
    plain = _JSONC_TOKEN.sub(lambda match: match.group() if match.group()[0] == '"' else "", text)
    try:
        document = json.loads(plain)
    except (json.JSONDecodeError, RecursionError):
        return None
    return document if isinstance(document, dict) else None
