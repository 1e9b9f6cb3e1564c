"""What reaches the model is written for it: no request of an optimize run, on any wire API,
carries a name or a sentence written for promptkit's developers (a private class's title such
as `_SetupPlanParams`, a docstring naming "the seed", a section key or a prompt's ns/key), and
the Response Format section shows an example reply besides the schema.

A small model served locally copied such text back as the digest; see docs/local-servers.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt
from promptkit.adapters import ProviderAdapter
from promptkit.discovery import workspace_prompt
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from .test_optimize import DIGEST

# What only a developer of promptkit writes: private names, the documents promptkit was made
# from, and words about code.
DEVELOPER_TEXT = re.compile(r"\b_[A-Z][A-Za-z]+|\bseed\b|docstring|promptkit", re.IGNORECASE)


def _titles(value: Any, parent: str = "") -> list[str]:
    """Every schema `title` keyword inside `value` (a property named `title` is not one)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "title" and parent != "properties" and isinstance(inner, str):
                found.append(inner)
            found += _titles(inner, key)
    elif isinstance(value, list):
        for inner in value:
            found += _titles(inner, parent)
    return found


def test_no_request_of_an_optimize_run_carries_developer_text(
    adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    server.enqueue(
        Reply.tool_calls(
            ToolCall("planning_setup_plan", {"objective": "Describe it", "steps": ["layout"]}),
            ToolCall("vfs_read_file", {"path": "/Makefile"}),
        ),
        Reply.json({"digest": DIGEST}),
    )

    adapter.optimize(workspace_prompt(session, repo), session=session)

    for request in server.requests:
        sent = json.dumps(request.body, ensure_ascii=False)
        assert DEVELOPER_TEXT.findall(sent) == []
        assert _titles(request.body) == []


class Capital(BaseModel):
    country: str
    capital: str


def test_the_response_format_shows_an_example_reply_before_the_schema() -> None:
    prompt = Prompt(
        ns="tests/model-text",
        key="capital",
        sections=(MarkdownSection(title="Task", key="task", template="Name a capital."),),
        output_type=Capital,
    )

    text = prompt.render().text

    example = text.index('"country": "<country>"')
    schema = text.index('"properties"')
    assert example < schema
    assert '"title"' not in text
