"""Fixtures for the optimize tests: a prompt over the shared `repo` fixture, and adapters built on
the real SDK clients pointed at the shared FakeProviderServer with strict response validation.

`adapter` is parametrised over the three wire APIs (OpenAI Responses, OpenAI Chat Completions,
Anthropic Messages); `openai_adapter` is the Responses one, for behaviour that does not depend on
the wire. Clients never retry, so a scripted 500 fails at once.
"""

from __future__ import annotations

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
from promptkit.workspace import HostMount, VfsWorkspaceSection

# test_optimize.py takes `git` from this module; it is the shared one.
from ..conftest import git as git

OPENAI_KEY = "sk-test-optimize-0123456789abcdefghij"
ANTHROPIC_KEY = "sk-ant-test-optimize-0123456789abcdefghij"
OPENAI_MODEL = "gpt-4.1-mini"
ANTHROPIC_MODEL = "claude-haiku-4-5"
CLIENT_TIMEOUT = 10.0

PROMPT_NS = "tests/app"
PROMPT_KEY = "review"


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
