"""Two processes bound to one PostgreSQL database through `[tool.promptkit]`: a conversation
begun in one continues in the other, and text promoted by an operator's process reaches a
running application's next call. Real processes, a real server, the real OpenAI SDK against
FakeProviderServer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from promptkit import App, Prompt
from promptkit.discovery import bind_prompt, load_prompt_source
from promptkit.overrides import PostgresOverridesStore
from promptkit.session import PostgresSessionStore
from promptkit.testing import FakeProviderServer, Reply

from ..conftest import run_process, run_promptkit
from .test_promotion_reaches_the_app import PROMPTS_MODULE, sent_role

WORKER = """
import sys
from promptkit import App, Session
from promptkit.discovery import bind_prompt, load_prompt_source

app = App.from_project()
prompt = bind_prompt(load_prompt_source("shop_review_prompts:review"))
action, text = sys.argv[1], sys.argv[2]
if action == "start":
    session = Session(session_id="order-42")
else:
    session = app.sessions.load(".", "order-42")
with app.sessions.attach(session, "."):
    app.evaluate(prompt, session=session, conversation="support", user_message=text)
app.sessions.close()
"""


@pytest.fixture
def project(tmp_path: Path, server: FakeProviderServer, database_url: str) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "shop"\n\n[tool.promptkit]\noverrides = "{database_url}"\n'
        f'state = "{database_url}"\ntag = "prod"\nprovider = "openai"\n'
        f'model = "gpt-4.1-mini"\nbase_url = "{server.openai_base_url}"\n',
        encoding="utf-8",
    )
    (root / "shop_review_prompts.py").write_text(PROMPTS_MODULE, encoding="utf-8")
    (root / "worker.py").write_text(WORKER, encoding="utf-8")
    return root


def test_the_binding_of_a_database_url_chooses_the_database_stores(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    app = App.from_project(environ={})

    assert isinstance(app.overrides, PostgresOverridesStore)
    assert isinstance(app.sessions, PostgresSessionStore)
    app.overrides.close()
    app.sessions.close()


def test_a_conversation_begun_in_one_process_continues_in_another(
    project: Path, server: FakeProviderServer
) -> None:
    replies = iter(["Sorry to hear that; it ships tomorrow.", "You said your order is late."])
    server.respond_with(lambda request: Reply.text(next(replies)))

    for action, text in (("start", "My order is late."), ("continue", "What did I say?")):
        completed = run_process([sys.executable, "worker.py", action, text], cwd=project)
        assert completed.returncode == 0, completed.stderr

    second = json.dumps(server.requests[-1].body)
    assert "My order is late." in second
    assert "Sorry to hear that; it ships tomorrow." in second
    assert "What did I say?" in second


def test_a_promotion_in_one_process_reaches_the_running_app_in_another(
    project: Path, server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    app = App.from_project(environ={})
    assert isinstance(app.overrides, PostgresOverridesStore)
    prompt: Prompt[None] = bind_prompt(load_prompt_source("shop_review_prompts:review"))
    server.respond_with(lambda request: Reply.text("ok"))
    app.evaluate(prompt)
    assert "You review the shop's code." in sent_role(server)

    def operator(*arguments: str) -> None:
        completed = run_promptkit(*arguments, cwd=project)
        assert completed.returncode == 0, completed.stdout + completed.stderr

    operator(
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
        *("overrides", "promote", "shop_review_prompts:review", "--from", "candidate"),
        *("--min-score", "0.5", "--provider", "fake", "--script", "replies.json"),
    )
    # The app's listener drops its cached text when the database notifies the change; this
    # waits for that thread only (no time is asserted).
    for _ in range(1000):
        if "Promoted:" in app.render(prompt).text:
            break
        app.overrides.wait_for_change(timeout=0.01)
    app.evaluate(prompt)

    assert "Promoted: review the tests first." in sent_role(server)
    app.overrides.close()
