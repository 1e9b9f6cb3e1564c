"""From prototype to production, end to end on a generated repository, through the public API
and the command line only.

An application is bound once (`App.from_project` with typed deps and a tool that reads them)
and keeps running in this process. The operator, in real `promptkit` processes: writes the
project's digest (`optimize --scope global`), a candidate text (`overrides set`), evaluates
both tags as the application runs them (`eval`: the app's binding from `[tool.promptkit] app`,
a deps factory, a reply script whose tool calls run the app's tool and check its results), and
promotes the candidate. The application's next call, with no restart, sends the promoted text
and the digest; what it sent is read from the requests `FakeProviderServer` received.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from promptkit.app import load_app
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from ..conftest import REPO_FILES, committed_repo, run_promptkit

APP_MODULE = '''
from dataclasses import dataclass

from pydantic import BaseModel

from promptkit import (
    App, MarkdownSection, Prompt, TextSection, Tool, ToolContext, ToolResult,
    WorkspaceDigestSection,
)
from promptkit.evals import Case
from promptkit.session import Session


@dataclass(frozen=True)
class Inventory:
    stock: dict[str, int]


class Item(BaseModel):
    name: str


def count(params: Item, context: ToolContext[Inventory]) -> ToolResult:
    return ToolResult(message=str(context.deps.stock[params.name]))


def stock_prompt() -> Prompt[None, Inventory]:
    return Prompt(
        ns="loop",
        key="stock",
        sections=(
            TextSection(title="Role", key="role", text="You answer questions about the stock."),
            WorkspaceDigestSection(session=Session()),
            MarkdownSection(
                title="Question",
                key="question",
                params_type=Item,
                template="How many {{ name }} are in stock?",
                tools=(Tool(name="count", description="Count.", params_type=Item, handler=count),),
            ),
        ),
        deps_type=Inventory,
    )


def inventory_for(case: Case) -> Inventory:
    """Each case's own inventory: the count it expects of the item it asks about."""
    return Inventory({case.params[0].name: int(case.expected)})


app = App.from_project(deps=Inventory({"bolts": 12}))
'''

# The washers case runs only with the deps factory's inventory: the app's has no washers.
DATASET = (
    '{"id": "bolts", "params": {"name": "bolts"}, "expected": "12"}\n'
    '{"id": "washers", "params": {"name": "washers"}, "expected": "7"}\n'
)

REPLIES = {
    "rules": [
        {
            "when": "How many bolts",
            "tool_calls": [{"name": "count", "arguments": {"name": "bolts"}, "result": "12"}],
        },
        {
            "when": "How many washers",
            "tool_calls": [{"name": "count", "arguments": {"name": "washers"}, "result": "7"}],
        },
        {"when": ["Answer with the number only.", "How many bolts"], "text": "12"},
        {"when": ["Answer with the number only.", "How many washers"], "text": "7"},
        {"when": "How many", "text": "Some are in stock."},
    ]
}

CANDIDATE = "Answer with the number only."
EVALUATION = ("--provider", "fake", "--script", "replies.json", "--deps", "loop_app:inventory_for")


@pytest.fixture
def project(tmp_path: Path, server: FakeProviderServer) -> Path:
    table = (
        '[project]\nname = "loop"\n\n[tool.promptkit]\noverrides = "overrides"\n'
        'tag = "latest"\napp = "loop_app:app"\nprompts = ["loop_app:stock_prompt"]\n'
        f'state = ".promptkit"\nprovider = "openai"\nmodel = "gpt-4.1-mini"\n'
        f'base_url = "{server.openai_base_url}"\n'
    )
    return committed_repo(
        tmp_path / "loop",
        {
            **REPO_FILES,
            "pyproject.toml": table,
            "loop_app.py": APP_MODULE,
            "evals/stock.jsonl": DATASET,
            "replies.json": json.dumps(REPLIES),
            ".gitignore": ".promptkit/\n",
        },
    )


def promptkit(project: Path, *arguments: str) -> str:
    completed = run_promptkit(*arguments, cwd=project)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def instructions(request: Any) -> str:
    text = request.body["messages"][0]["content"]
    assert isinstance(text, str)
    return text


def test_what_the_operator_promotes_is_what_the_running_app_sends_next(
    project: Path,
    server: FakeProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", [str(project), *sys.path])
    request.addfinalizer(lambda: sys.modules.pop("loop_app", None))
    app = load_app("loop_app:app")
    module = sys.modules["loop_app"]
    prompt, bolts = module.stock_prompt(), module.Item(name="bolts")
    server.enqueue(Reply.tool_calls(ToolCall("count", {"name": "bolts"})), Reply.text("12"))

    first = app.evaluate(prompt, bolts)

    assert first.tool_calls[0].result.message == "12"  # the app's deps reached its tool
    assert "You answer questions about the stock." in instructions(server.requests[0])

    optimized = promptkit(
        project, "optimize", "--scope", "global", "--provider", "static", "--json"
    )
    digest = json.loads(optimized)["digest"]
    promptkit(
        project,
        *("overrides", "set", "--prompt", "loop_app:stock_prompt", "--tag", "candidate"),
        *("--path", "role", "--body", CANDIDATE),
    )

    report = json.loads(
        promptkit(
            project,
            *("eval", "loop_app:stock_prompt", "--tag", "latest", "--tag", "candidate"),
            *(*EVALUATION, "--json"),
        )
    )

    scores = {(r["override_tag"], r["case_id"]): r["score"] for r in report["results"]}
    assert scores == {
        ("latest", "bolts"): 0.0,
        ("latest", "washers"): 0.0,
        ("candidate", "bolts"): 1.0,
        ("candidate", "washers"): 1.0,
    }
    calls = {(r["override_tag"], r["case_id"]): r["tool_calls"] for r in report["results"]}
    assert calls[("candidate", "washers")] == [
        {"name": "count", "arguments": {"name": "washers"}, "success": True, "result": "7"}
    ]
    assert not any(r["placeholder_digest"] for r in report["results"])

    promoted = promptkit(
        project,
        *("overrides", "promote", "loop_app:stock_prompt", "--from", "candidate"),
        *("--min-score", "0.9", *EVALUATION),
    )
    assert "promoted candidate over latest" in promoted

    server.enqueue(Reply.tool_calls(ToolCall("count", {"name": "bolts"})), Reply.text("12"))
    after = app.evaluate(prompt, bolts)

    sent = instructions(server.requests[-1])
    assert CANDIDATE in sent
    assert "You answer questions about the stock." not in sent
    assert digest.splitlines()[0] in sent
    assert after.text == "12"
