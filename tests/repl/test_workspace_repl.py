"""The library loop, `WorkspaceRepl`, run in this process with its streams given: what a review
sees after an edit, how the session is stored, and `promptkit repl` for any prompt."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from promptkit import App, Tool, ToolContext, ToolResult
from promptkit.adapters import OpenAIAdapter
from promptkit.digest import WorkspaceDigestSection
from promptkit.errors import PromptValidationError
from promptkit.optimize import WriterChoice, choose_digest_writer
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import MarkdownSection, Prompt, TextSection
from promptkit.repl import ReplSetup, WorkspaceRepl
from promptkit.session import Session, SessionStore
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from ..conftest import REPO_ROOT, run_promptkit
from .conftest import OPENAI_KEY


@pytest.fixture
def openai_choice(server: FakeProviderServer) -> Iterator[WriterChoice]:
    client = openai.OpenAI(
        api_key=OPENAI_KEY,
        base_url=server.openai_base_url,
        max_retries=0,
        timeout=10.0,
        _strict_response_validation=True,
    )
    with client:
        yield WriterChoice.of_adapter(
            OpenAIAdapter(model="gpt-4.1-mini", client=client), "test client"
        )


def setup_for(repo: Path, state_dir: Path, choice: WriterChoice, source: Any = None) -> ReplSetup:
    from promptkit.discovery import workspace_prompt

    return ReplSetup(
        workspace=repo,
        prompt_source=source if source is not None else workspace_prompt,
        choice=choice,
        overrides=LocalPromptOverridesStore(repo / "overrides"),
        tag="latest",
        state=SessionStore(state_dir),
    )


def open_repl(setup: ReplSetup) -> tuple[WorkspaceRepl, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    repl = WorkspaceRepl.open(setup, stdin=io.StringIO(""), stdout=out, stderr=err)
    return repl, out, err


def test_ask_after_an_edit_reads_the_edited_file(
    repo: Path, state_dir: Path, server: FakeProviderServer, openai_choice: WriterChoice
) -> None:
    read_cli = ToolCall("vfs_read_file", {"path": "/src/demo/cli.py"})
    server.enqueue(Reply.tool_calls(read_cli), Reply.text("first"))
    server.enqueue(Reply.tool_calls(read_cli), Reply.text("second"))
    repl, out, err = open_repl(setup_for(repo, state_dir, openai_choice))

    with repl:
        repl.onecmd("ask what does main return?")
        (repo / "src/demo/cli.py").write_text("def main() -> int:\n    return 7\n")
        repl.onecmd("ask and now?")

    assert err.getvalue() == ""
    tool_replies = [str(request.body["input"][-1]) for request in server.requests[1::2]]
    assert "return 0" in tool_replies[0]
    assert "return 7" in tool_replies[1]
    assert "first" in out.getvalue()
    assert "second" in out.getvalue()


def test_a_new_session_is_stored_only_once_a_command_used_it(repo: Path, state_dir: Path) -> None:
    store = SessionStore(state_dir)
    repl, _, _ = open_repl(setup_for(repo, state_dir, choose_digest_writer("static", environ={})))

    with repl:
        repl.onecmd("digest")
        repl.onecmd("overrides")
        assert store.sessions(repo) == ()
        repl.onecmd("optimize")

    (stored,) = store.sessions(repo)
    assert stored.session_id == repl.session.session_id


def test_the_latest_stored_session_is_continued(repo: Path, state_dir: Path) -> None:
    static = choose_digest_writer("static", environ={})
    first, _, _ = open_repl(setup_for(repo, state_dir, static))
    with first:
        first.onecmd("optimize session")

    second, out, _ = open_repl(setup_for(repo, state_dir, static))
    with second:
        second.onecmd("digest")

    assert second.session.session_id == first.session.session_id
    assert f"origin:    session ({first.session.session_id})" in out.getvalue()


def test_a_prompt_without_a_digest_section_is_refused(repo: Path, state_dir: Path) -> None:
    bare: Prompt[None] = Prompt(
        ns="tests", key="bare", sections=(TextSection(title="Role", key="role"),)
    )
    setup = setup_for(repo, state_dir, choose_digest_writer("static", environ={}), bare)

    with pytest.raises(PromptValidationError, match="has no WorkspaceDigestSection"):
        open_repl(setup)


def test_help_for_one_command_shows_its_whole_description(repo: Path, state_dir: Path) -> None:
    repl, out, _ = open_repl(setup_for(repo, state_dir, choose_digest_writer("static", environ={})))

    with repl:
        repl.onecmd("help optimize")

    assert out.getvalue().startswith(
        "optimize [session|global [force]]: write the workspace digest"
    )
    assert "\nsession (the default) keeps the digest" in out.getvalue()


def test_promptkit_repl_runs_the_loop_for_a_prompt_given_by_reference(
    repo: Path, state_dir: Path
) -> None:
    completed = run_promptkit(
        "repl",
        str(repo),
        "--prompt",
        "examples.code_reviewer_example:build_review_prompt",
        "--state-dir",
        str(state_dir),
        cwd=REPO_ROOT,
        stdin="optimize session\ndigest\nask anything\n",
    )

    assert "origin:    session (" in completed.stdout
    assert completed.stderr.startswith("error: `ask` needs a model")
    assert completed.returncode == 1


def test_promptkit_repl_uses_the_built_in_prompt_by_default(repo: Path, state_dir: Path) -> None:
    completed = run_promptkit(
        "repl", str(repo), "--state-dir", str(state_dir), cwd=repo, stdin="digest\nhelp\n"
    )

    assert completed.returncode == 0, completed.stderr
    assert "origin:    placeholder" in completed.stdout
    assert "\n  ask [--params JSON|@FILE] MESSAGE " in completed.stdout
    assert "review" not in completed.stdout


def test_the_digest_section_key_is_the_one_the_prompt_declares(repo: Path, state_dir: Path) -> None:
    def keyed_prompt(session: Any, workspace: Path) -> Prompt[Any]:
        from promptkit.workspace import HostMount, VfsWorkspaceSection

        return Prompt(
            ns="tests",
            key="keyed",
            sections=(
                VfsWorkspaceSection(session=session, mounts=[HostMount(workspace)]),
                WorkspaceDigestSection(session=session, key="repo-digest"),
            ),
        )

    static = choose_digest_writer("static", environ={})
    repl, out, _ = open_repl(setup_for(repo, state_dir, static, keyed_prompt))
    with repl:
        repl.onecmd("optimize global")

    assert (repo / "overrides" / "_shared" / "repo-digest" / "latest.toml").is_file()
    assert "stored the 'repo-digest' digest" in out.getvalue()


@dataclass(frozen=True)
class Ticket:
    title: str


def ticket_prompt(session: Any, workspace: Path) -> Prompt[None]:
    return Prompt(
        ns="team",
        key="triage",
        sections=(
            MarkdownSection(
                title="Ticket", key="ticket", template="{{ title }}", params_type=Ticket
            ),
            WorkspaceDigestSection(session=session),
        ),
    )


def test_ask_with_params_renders_the_prompt_with_them(
    repo: Path, state_dir: Path, server: FakeProviderServer, openai_choice: WriterChoice
) -> None:
    server.enqueue(Reply.text("triaged"))
    repl, out, err = open_repl(setup_for(repo, state_dir, openai_choice, ticket_prompt))

    with repl:
        repl.onecmd("""ask --params '{"title": "Login fails"}' how urgent is this?""")

    assert err.getvalue() == ""
    sent = json.dumps(server.requests[0].body)
    assert "Login fails" in sent and "how urgent is this?" in sent
    assert "triaged" in out.getvalue()


def test_ask_with_params_that_do_not_validate_fails_that_command_only(
    repo: Path, state_dir: Path, server: FakeProviderServer, openai_choice: WriterChoice
) -> None:
    repl, _, err = open_repl(setup_for(repo, state_dir, openai_choice, ticket_prompt))

    with repl:
        repl.onecmd("""ask --params '{"name": 1}' how urgent?""")

    assert "params Ticket: title: Field required" in err.getvalue()
    assert repl.failures == 1
    assert server.request_count == 0


@dataclass(frozen=True)
class Board:
    owners: dict[str, str]


class Area(BaseModel):
    name: str


def owner(params: Area, context: ToolContext[Board]) -> ToolResult:
    return ToolResult(message=context.deps.owners[params.name])


def owners_prompt(session: Session, workspace: Path) -> Prompt[None, Board]:
    return Prompt(
        ns="tests",
        key="owners",
        sections=(
            MarkdownSection(
                title="Task",
                key="task",
                template="Say who owns an area.",
                tools=(Tool(name="owner", description="Owner.", params_type=Area, handler=owner),),
            ),
            WorkspaceDigestSection(session=session),
        ),
        deps_type=Board,
    )


def test_ask_passes_the_apps_deps_to_the_prompts_tools(
    repo: Path, state_dir: Path, server: FakeProviderServer, openai_choice: WriterChoice
) -> None:
    server.enqueue(Reply.tool_calls(ToolCall("owner", {"name": "billing"})), Reply.text("Ana"))
    setup = replace(
        setup_for(repo, state_dir, openai_choice, owners_prompt),
        app=App(deps=Board({"billing": "Ana"})),
    )
    repl, _, err = open_repl(setup)

    with repl:
        repl.onecmd("ask who owns billing?")

    assert err.getvalue() == ""
    assert "Ana" in str(server.requests[1].body["input"][-1])


class _Pieces(io.StringIO):
    """An output that remembers each write, to see a reply arrive piece by piece."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[str] = []

    def write(self, text: str) -> int:
        self.pieces.append(text)
        return super().write(text)


def test_ask_prints_the_reply_as_it_arrives_then_its_usage(
    repo: Path, state_dir: Path, server: FakeProviderServer, openai_choice: WriterChoice
) -> None:
    server.enqueue(Reply.text("main returns zero on every path"))
    out = _Pieces()
    repl = WorkspaceRepl.open(
        setup_for(repo, state_dir, openai_choice),
        stdin=io.StringIO(""),
        stdout=out,
        stderr=io.StringIO(),
    )

    with repl:
        repl.onecmd("ask what does main return?")

    assert server.requests[0].body["stream"] is True
    text_pieces = [piece for piece in out.pieces if piece and not piece.startswith("\n")]
    assert len(text_pieces) > 1
    assert out.getvalue().startswith("main returns zero on every path\n\n(openai gpt-4.1-mini")
