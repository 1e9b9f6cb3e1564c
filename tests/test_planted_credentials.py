"""The planted corpus end to end: credentials in ordinary workspace files never reach the
model, the session files, the execution records or the logs, through the real OpenAI SDK
client against FakeProviderServer."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
import structlog

from promptkit.adapters import OpenAIAdapter
from promptkit.errors import ToolLoopLimitError
from promptkit.logging import configure
from promptkit.prompt import Prompt, TextSection, Tool, ToolContext, ToolResult
from promptkit.session import Session, SessionStore, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall
from promptkit.workspace import HostMount, VfsWorkspaceSection

from .conftest import committed_repo, offline_env, run_promptkit
from .credentials import PLANTED, leaked_values, planted_file_text, well_known_prose_text

API_KEY = "sk-test-planted-0123456789abcdefghij"


def _planted_repo(root: Path) -> Path:
    """A repository whose ordinary files hold the planted corpus, as people commit it."""
    lines = [planted.line for planted in PLANTED]
    third = len(lines) // 3
    notebook = {"cells": [{"cell_type": "code", "source": lines[third : 2 * third]}]}
    return committed_repo(
        root,
        {
            "config.py": "\n".join(lines[:third]) + "\n",
            "settings.yaml": "\n".join(f"# {line}" for line in lines[third:]) + "\n",
            "analysis.ipynb": json.dumps(notebook, indent=1),
            "README.md": "# App\n\nExample:\n\n```\n" + planted_file_text() + "```\n",
            "NOTES.md": "# Notes\n\n" + well_known_prose_text(),
            "Makefile": "".join(f"step{i}:\n\t{line}\n" for i, line in enumerate(lines)),
            "package.json": json.dumps(
                {"scripts": {f"s{i}": line for i, line in enumerate(lines)}}
            ),
            ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n"
            + "".join(f"      - run: {json.dumps(line)}\n" for line in lines),
        },
    )


@dataclass
class Run:
    server: FakeProviderServer
    state_root: Path
    output_dir: Path
    log: io.StringIO

    def everything_stored(self) -> str:
        files = [*self.state_root.rglob("*"), *self.output_dir.rglob("*")]
        return "".join(path.read_text() for path in files if path.is_file())

    def everything_sent(self) -> str:
        return "".join(request.raw_body.decode() for request in self.server.requests)


@pytest.fixture
def log() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure(format="json", level="debug", stream=stream)
    yield stream
    structlog.reset_defaults()


def _adapter(server: FakeProviderServer) -> tuple[OpenAIAdapter, openai.OpenAI]:
    client = openai.OpenAI(
        api_key=API_KEY, base_url=server.openai_base_url, max_retries=0, timeout=10.0
    )
    return OpenAIAdapter(model="gpt-4.1-mini", client=client, api="chat"), client


def _failing_handler(params: Any, context: ToolContext) -> ToolResult:
    raise RuntimeError(f"could not parse {planted_file_text()}")


@dataclass(frozen=True)
class _NoParams:
    pass


def _run_model_over_the_repo(
    tmp_path: Path, server: FakeProviderServer, log: io.StringIO, **section: Any
) -> Run:
    repo = _planted_repo(tmp_path / "repo")
    session = Session(session_id="planted")
    failing = Tool(
        name="parse_config",
        description="Parse the configuration.",
        params_type=_NoParams,
        handler=_failing_handler,
    )
    prompt: Prompt[Any] = Prompt(
        ns="tests",
        key="planted",
        sections=(
            TextSection(title="Role", key="role", text="You review code.", tools=(failing,)),
            VfsWorkspaceSection(session=session, mounts=[HostMount(repo)], **section),
        ),
    )
    server.enqueue(
        Reply.tool_calls(
            *(ToolCall("vfs_read_file", {"path": f"/{name}"}) for name in _FILES),
            ToolCall("vfs_grep", {"pattern": ".", "path": "/"}),
            ToolCall("parse_config"),
        ),
        Reply.text("reviewed"),
    )
    run = Run(server, tmp_path / "state", tmp_path / "record", log)
    adapter, client = _adapter(server)
    with SessionStore(run.state_root) as store, client:
        store.attach(session, repo)
        adapter.evaluate(prompt, session=session, output_dir=run.output_dir)
    return run


_FILES = ("config.py", "settings.yaml", "analysis.ipynb", "README.md", "NOTES.md")


def test_planted_credentials_never_reach_the_model_the_session_records_or_logs(
    tmp_path: Path, server: FakeProviderServer, log: io.StringIO
) -> None:
    run = _run_model_over_the_repo(tmp_path, server, log)

    assert leaked_values(run.everything_sent()) == []
    assert leaked_values(run.everything_stored()) == []
    assert leaked_values(log.getvalue()) == []
    assert "promptkit masked credentials in this result" in run.everything_sent()
    assert "Use [REDACTED:groq-api-key] to sign in" in run.everything_sent()
    assert "tool_handler_failed" in log.getvalue()


def test_a_section_can_knowingly_send_unmasked_tool_results(
    tmp_path: Path, server: FakeProviderServer, log: io.StringIO
) -> None:
    run = _run_model_over_the_repo(tmp_path, server, log, mask_credentials=False)

    assert set(leaked_values(run.everything_sent())) >= {"stripe-live", "google-api"}
    # What is stored is still redacted: the opt-out is about what the model sees.
    assert leaked_values(run.everything_stored()) == []


def test_too_many_tool_calls_in_one_reply_run_none_of_them(
    tmp_path: Path, server: FakeProviderServer
) -> None:
    repo = _planted_repo(tmp_path / "repo")
    session = Session()
    prompt: Prompt[Any] = Prompt(
        ns="tests",
        key="flood",
        sections=(VfsWorkspaceSection(session=session, mounts=[HostMount(repo)]),),
    )
    server.enqueue(Reply.tool_calls(*(ToolCall("vfs_glob", {"pattern": "*"}) for _ in range(65))))
    adapter, client = _adapter(server)

    with client, pytest.raises(ToolLoopLimitError, match="65 tool calls in one reply"):
        adapter.evaluate(prompt, session=session)
    assert session.select_all(ToolInvoked) == ()


def test_a_huge_tool_result_is_cut_with_a_note_before_it_is_sent(
    tmp_path: Path, server: FakeProviderServer
) -> None:
    def huge(params: _NoParams, context: ToolContext) -> ToolResult:
        return ToolResult(message="x" * 2_000_000)

    tool = Tool(name="dump", description="Dump.", params_type=_NoParams, handler=huge)
    prompt: Prompt[Any] = Prompt(
        ns="tests",
        key="huge",
        sections=(TextSection(title="Role", key="role", text="Dump.", tools=(tool,)),),
    )
    server.enqueue(Reply.tool_calls(ToolCall("dump")), Reply.text("done"))
    adapter, client = _adapter(server)

    with client:
        adapter.evaluate(prompt, session=Session())
    sent = server.requests[-1].raw_body.decode()
    assert len(sent) < 400_000
    assert "promptkit truncated this result: 2,000,000 bytes" in sent


def test_static_digest_and_global_override_files_of_a_planted_repo_hold_no_credentials(
    tmp_path: Path,
) -> None:
    repo = _planted_repo(tmp_path / "repo")
    env = {**offline_env(), "PROMPTKIT_HOME": str(tmp_path / "home")}

    done = run_promptkit(
        "optimize",
        str(repo),
        "--provider",
        "static",
        "--scope",
        "global",
        "--overrides-dir",
        str(tmp_path / "overrides"),
        "--output-dir",
        str(tmp_path / "record"),
        cwd=tmp_path,
        env=env,
    )

    assert done.returncode == 0, done.stderr
    written = [*(tmp_path / "overrides").rglob("*.toml"), *(tmp_path / "record").rglob("*")]
    assert any(path.suffix == ".toml" for path in written)
    stored = "".join(path.read_text() for path in written if path.is_file())
    assert leaked_values(stored + done.stdout + done.stderr) == []
