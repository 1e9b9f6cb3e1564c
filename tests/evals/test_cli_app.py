"""`promptkit eval` runs the application as it runs, as a user runs it (a real subprocess):
`--app` (or `[tool.promptkit] app`) brings its deps, prices and overrides, flags replace only
what they name, each case's tool calls are in the table, a tool error fails its case unless
expected, and a case whose prompt would render the placeholder digest makes `eval` exit 1
naming it, unless `--allow-placeholder-digest`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import run_promptkit, write_files

APP_MODULE = """
from dataclasses import dataclass

from pydantic import BaseModel

from promptkit import (
    App, MarkdownSection, Prompt, Tool, ToolContext, ToolResult, WorkspaceDigestSection,
)
from promptkit.adapters import ModelPrice, PriceTable
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.session import Session


@dataclass(frozen=True)
class Inventory:
    stock: dict[str, int]


class Item(BaseModel):
    name: str


def count(params: Item, context: ToolContext[Inventory]) -> ToolResult:
    return ToolResult(message=str(context.deps.stock[params.name]))


def question() -> MarkdownSection:
    return MarkdownSection(
        title="Question",
        key="question",
        params_type=Item,
        template="How many {{ name }}?",
        tools=(Tool(name="count", description="Count.", params_type=Item, handler=count),),
    )


def stock_prompt() -> Prompt[None, Inventory]:
    return Prompt(ns="cli", key="stock", sections=(question(),), deps_type=Inventory)


def digest_prompt() -> Prompt[None, Inventory]:
    return Prompt(
        ns="cli",
        key="stock",
        sections=(WorkspaceDigestSection(session=Session()), question()),
        deps_type=Inventory,
    )


app = App(
    overrides=LocalPromptOverridesStore("app-overrides"),
    deps=Inventory({"bolts": 12}),
    prices=PriceTable({"shop-model": ModelPrice(input=1000.0, output=0.0)}),
)
"""

DATASET = (
    '{"id": "bolts", "params": {"name": "bolts"}, "expected": "12"}\n'
    '{"id": "nuts", "params": {"name": "nuts"}, "expected": "none"}\n'
)

REPLIES = {
    "rules": [
        {
            "when": "How many bolts",
            "tool_calls": [{"name": "count", "arguments": {"name": "bolts"}}],
        },
        {"when": "How many nuts", "tool_calls": [{"name": "count", "arguments": {"name": "nuts"}}]},
        {"when": ["How many bolts", "12"], "text": "12"},
        {"text": "none"},
    ]
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_files(
        tmp_path,
        {
            "shop.py": APP_MODULE,
            "evals/stock.jsonl": DATASET,
            "replies.json": json.dumps(REPLIES),
        },
    )
    return tmp_path


def evaluate(project: Path, prompt: str, *options: str) -> tuple[int, str, str]:
    completed = run_promptkit(
        "eval",
        f"shop:{prompt}",
        "--app",
        "shop:app",
        *("--provider", "fake", "--script", "replies.json", "--model", "shop-model"),
        *options,
        cwd=project,
    )
    return completed.returncode, completed.stdout, completed.stderr


def test_eval_runs_the_apps_deps_and_prices_and_shows_each_cases_tool_calls(
    project: Path,
) -> None:
    status, out, err = evaluate(project, "stock_prompt")

    assert status == 1, err  # the nuts case: its tool failed
    assert 'bolts [latest]: count({"name": "bolts"}) ok' in out
    assert 'nuts [latest]: count({"name": "nuts"}) FAILED' in out
    [cost] = [line for line in out.splitlines() if line.startswith("cost ")]
    assert cost.split(None, 1)[1] == "$0.0400"  # four replies of 10 input tokens at the app's price
    assert (
        "nuts [latest] (evals/stock.jsonl line 2): tool 'count' returned an error: tool 'count'"
        " failed with KeyError" in out
    )


def test_a_case_that_expects_the_tool_error_is_scored(project: Path) -> None:
    (project / "evals" / "stock.jsonl").write_text(
        DATASET.replace(
            '"expected": "none"}', '"expected": "none", "expected_tool_errors": ["count"]}'
        )
    )

    status, out, err = evaluate(project, "stock_prompt", "--json")

    assert status == 0, out + err
    assert [r["score"] for r in json.loads(out)["results"]] == [1.0, 1.0]


def test_a_case_without_a_digest_makes_eval_exit_one_naming_it(project: Path) -> None:
    status, out, err = evaluate(project, "digest_prompt")

    assert status == 1, err
    assert (
        "bolts [latest] (evals/stock.jsonl line 1): the prompt would render the placeholder"
        " workspace digest under tag 'latest'" in out
    )


def test_allow_placeholder_digest_runs_the_cases(project: Path) -> None:
    (project / "evals" / "stock.jsonl").write_text(DATASET.splitlines()[0] + "\n")

    status, out, err = evaluate(project, "digest_prompt", "--allow-placeholder-digest", "--json")

    assert status == 0, out + err
    [result] = json.loads(out)["results"]
    assert (result["score"], result["placeholder_digest"]) == (1.0, True)


def test_the_apps_overrides_are_the_ones_evaluated(project: Path) -> None:
    (project / "evals" / "stock.jsonl").write_text(DATASET.splitlines()[0] + "\n")
    set_by_operator = run_promptkit(
        *("overrides", "set", "--overrides-dir", "app-overrides", "--prompt", "shop:stock_prompt"),
        *("--tag", "candidate", "--path", "question", "--body", "How many bolts? Count twice."),
        cwd=project,
    )
    assert set_by_operator.returncode == 0, set_by_operator.stderr

    status, out, err = evaluate(project, "stock_prompt", "--tag", "candidate", "--json")

    assert status == 0, out + err
    report = json.loads(out)
    assert list(report["overrides"]["candidate"]["sections"]) == ["question"]
