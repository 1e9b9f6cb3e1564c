"""Fixtures for the optimize tests: a real git repository, a prompt over it, and adapters built on
the real SDK clients pointed at a FakeProviderServer with strict response validation.

`adapter` is parametrised over the three wire APIs (OpenAI Responses, OpenAI Chat Completions,
Anthropic Messages); `openai_adapter` is the Responses one, for behaviour that does not depend on
the wire. Clients never retry, so a scripted 500 fails at once.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from promptkit.adapters import AnthropicAdapter, OpenAIAdapter, ProviderAdapter
from promptkit.digest import WorkspaceDigestSection
from promptkit.planning import PlanningToolsSection
from promptkit.prompt import Prompt, TextSection
from promptkit.session import Session
from promptkit.testing import FakeProviderServer
from promptkit.workspace.vfs import HostMount, VfsWorkspaceSection

OPENAI_KEY = "sk-test-optimize-0123456789abcdefghij"
ANTHROPIC_KEY = "sk-ant-test-optimize-0123456789abcdefghij"
OPENAI_MODEL = "gpt-4.1-mini"
ANTHROPIC_MODEL = "claude-haiku-4-5"
CLIENT_TIMEOUT = 10.0

PROMPT_NS = "tests/app"
PROMPT_KEY = "review"

REPO_FILES = {
    "README.md": "# Demo app\n\nRun the tests with `make test` before every commit.\n",
    "Makefile": "test:\n\tpytest -q\n\nlint:\n\truff check .\n",
    "pyproject.toml": (
        '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    ),
    "src/demo/__init__.py": '"""The demo package."""\n',
    "tests/test_demo.py": "def test_nothing():\n    assert True\n",
}


def git(cwd: Path, *args: str) -> str:
    """Run git with a fixed identity and no user or system configuration; returns stdout."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    completed = subprocess.run(
        [
            "git",
            "-c",
            "user.name=Optimize Tests",
            "-c",
            "user.email=tests@example.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed git repository with a README, a Makefile, a package and a test."""
    root = tmp_path / "repo"
    for relative, text in REPO_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def make_prompt(
    session: Session,
    root: Path,
    *,
    ns: str = PROMPT_NS,
    key: str = PROMPT_KEY,
    with_workspace: bool = True,
    with_digest: bool = True,
) -> Prompt[Any]:
    """A review-style prompt over `root`: role, workspace, planning and digest sections."""
    sections: list[Any] = [TextSection(title="Role", key="role", text="You review code.")]
    if with_workspace:
        sections.append(VfsWorkspaceSection(session=session, mounts=[HostMount(root)]))
    sections.append(PlanningToolsSection(session=session))
    if with_digest:
        sections.append(WorkspaceDigestSection(session=session))
    return Prompt(ns=ns, key=key, sections=tuple(sections))


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    with FakeProviderServer() as running:
        yield running


def build_adapter(wire: str, server: FakeProviderServer) -> tuple[ProviderAdapter, Any]:
    """The adapter of `wire` on a real SDK client pointed at `server`, and that client."""
    if wire == "messages":
        anthropic_client = anthropic.Anthropic(
            api_key=ANTHROPIC_KEY,
            base_url=server.anthropic_base_url,
            max_retries=0,
            timeout=CLIENT_TIMEOUT,
            _strict_response_validation=True,
        )
        return AnthropicAdapter(model=ANTHROPIC_MODEL, client=anthropic_client), anthropic_client
    openai_client = openai.OpenAI(
        api_key=OPENAI_KEY,
        base_url=server.openai_base_url,
        max_retries=0,
        timeout=CLIENT_TIMEOUT,
        _strict_response_validation=True,
    )
    if wire == "chat":
        return OpenAIAdapter(model=OPENAI_MODEL, client=openai_client, api="chat"), openai_client
    return OpenAIAdapter(model=OPENAI_MODEL, client=openai_client), openai_client


@pytest.fixture(params=["responses", "chat", "messages"])
def adapter(
    request: pytest.FixtureRequest, server: FakeProviderServer
) -> Iterator[ProviderAdapter]:
    built, client = build_adapter(request.param, server)
    with client:
        yield built


@pytest.fixture
def openai_adapter(server: FakeProviderServer) -> Iterator[ProviderAdapter]:
    built, client = build_adapter("responses", server)
    with client:
        yield built
