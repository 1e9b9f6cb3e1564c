"""Text an operator sets or promotes reaches an application that is already running: its next
call sends it, with no restart and no code change; a file broken afterwards does not take the
application down, which keeps sending the last good text.

The application is an `App` built from the project's `[tool.promptkit]` table in this process;
the operator's commands run as real `promptkit` processes in the project folder, and what the
application sent is read from the requests `FakeProviderServer` received.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from promptkit import App, Prompt
from promptkit.discovery import bind_prompt, load_prompt_source
from promptkit.testing import FakeProviderServer, Reply

from ..conftest import run_promptkit

PROMPTS_MODULE = """
from promptkit import Prompt, TextSection


def review() -> Prompt[None]:
    return Prompt(
        ns="shop",
        key="review",
        sections=(TextSection(title="Role", key="role", text="You review the shop's code."),),
    )
"""


@pytest.fixture
def project(tmp_path: Path, server: FakeProviderServer) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shop"\n\n[tool.promptkit]\noverrides = "ops/overrides"\n'
        f'tag = "prod"\nprovider = "openai"\nmodel = "gpt-4.1-mini"\n'
        f'base_url = "{server.openai_base_url}"\n',
        encoding="utf-8",
    )
    (root / "shop_review_prompts.py").write_text(PROMPTS_MODULE, encoding="utf-8")
    return root


def sent_role(server: FakeProviderServer) -> str:
    body = server.requests[-1].body
    system = body["messages"][0]["content"]
    assert isinstance(system, str)
    return system


def operator(project: Path, *arguments: str) -> None:
    completed = run_promptkit(*arguments, cwd=project)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_set_and_promote_reach_the_running_app_and_a_broken_file_keeps_the_last_good_text(
    project: Path, server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    app = App.from_project(environ={})
    prompt: Prompt[None] = bind_prompt(load_prompt_source("shop_review_prompts:review"))
    server.respond_with(lambda request: Reply.text("ok"))

    app.evaluate(prompt)
    assert "You review the shop's code." in sent_role(server)

    operator(
        project,
        *("overrides", "set", "--prompt", "shop_review_prompts:review", "--path", "role"),
        *("--body", "Set by the operator."),
    )
    app.evaluate(prompt)
    assert "Set by the operator." in sent_role(server)

    operator(
        project,
        *("overrides", "set", "--prompt", "shop_review_prompts:review", "--path", "role"),
        *("--tag", "candidate", "--body", "Promoted: review the tests first."),
    )
    (project / "evals").mkdir()
    (project / "evals" / "review.jsonl").write_text(
        '{"id": "tests-first", "expected": "tests first"}\n', encoding="utf-8"
    )
    (project / "replies.json").write_text(
        json.dumps(
            {"rules": [{"when": ["Promoted:"], "text": "tests first"}, {"text": "anything"}]}
        ),
        encoding="utf-8",
    )
    operator(
        project,
        *("overrides", "promote", "shop_review_prompts:review", "--from", "candidate"),
        *("--min-score", "0.5", "--provider", "fake", "--script", "replies.json"),
    )
    app.evaluate(prompt)
    assert "Promoted: review the tests first." in sent_role(server)

    promoted = project / "ops" / "overrides" / "shop" / "review" / "prod.toml"
    promoted.write_text(promoted.read_text(encoding="utf-8") + "\nbody = \n", encoding="utf-8")
    with capture_logs() as logs:
        app.evaluate(prompt)
    assert "Promoted: review the tests first." in sent_role(server)
    assert [log["event"] for log in logs if log["log_level"] == "error"] == ["override_unreadable"]
