"""StaticDigestWriter: optimize without a model under the same rules as a model writer.
choose_digest_writer: which writer `auto` picks, and that it says why without showing a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptkit.adapters import AnthropicAdapter, OpenAIAdapter, choose_adapter
from promptkit.digest import latest_workspace_digest
from promptkit.errors import OptimizationError, ProviderAuthenticationError
from promptkit.optimize import (
    ModelDigestWriter,
    OptimizationScope,
    StaticDigestWriter,
    choose_digest_writer,
    optimize_workspace_digest,
)
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor
from promptkit.repofacts import render_static_digest, scan_workspace
from promptkit.session import Session

from .conftest import OPENAI_KEY, make_prompt


def test_static_optimize_stores_the_static_digest_of_the_workspace(repo: Path) -> None:
    session = Session()

    result = optimize_workspace_digest(
        StaticDigestWriter(), make_prompt(session, repo), session=session
    )

    expected = render_static_digest(scan_workspace(repo)).strip()
    stored = latest_workspace_digest(session, "workspace-digest")
    assert stored is not None
    assert result.digest == stored.body == expected
    assert "make test" in result.digest
    assert stored.source == "optimizer:static"
    assert result.response.provider == "static"


def test_static_global_scope_writes_the_shared_entry(repo: Path, tmp_path: Path) -> None:
    session = Session()
    prompt = make_prompt(session, repo)
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    result = optimize_workspace_digest(
        StaticDigestWriter(),
        prompt,
        store_scope=OptimizationScope.GLOBAL,
        overrides_store=store,
        overrides_tag="latest",
        session=session,
    )

    assert store.resolve(prompt.descriptor, "latest") is None
    shared = store.resolve_shared_section("workspace-digest", "latest")
    assert shared is not None
    assert (shared.body, shared.source) == (result.digest, OverrideAuthor("optimizer", "static"))


def test_static_optimize_validates_the_prompt_like_any_adapter(repo: Path) -> None:
    session = Session()

    with pytest.raises(OptimizationError, match="WorkspaceDigestSection"):
        optimize_workspace_digest(
            StaticDigestWriter(), make_prompt(session, repo, with_digest=False), session=session
        )


def test_static_digest_of_a_workspace_holding_a_credential_never_carries_it(
    repo: Path, tmp_path: Path
) -> None:
    fake_key = "sk-proj-" + "Z9y8X7w6V5u4" * 4
    (repo / "CONTRIBUTING.md").write_text(
        f"# Contributing\n\nAlways run `make test`. Never commit the key {fake_key}.\n",
        encoding="utf-8",
    )
    session = Session()

    result = optimize_workspace_digest(
        StaticDigestWriter(), make_prompt(session, repo), session=session
    )

    assert fake_key not in result.digest


def test_auto_picks_openai_when_its_key_is_set() -> None:
    choice = choose_adapter(environ={"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": "x"})

    assert isinstance(choice.adapter, OpenAIAdapter)
    assert "OPENAI_API_KEY is set" in choice.reason
    assert OPENAI_KEY not in choice.reason


def test_auto_picks_anthropic_when_only_its_key_is_set() -> None:
    choice = choose_adapter(environ={"ANTHROPIC_API_KEY": "sk-ant-test-only"}, model="m-1")

    assert isinstance(choice.adapter, AnthropicAdapter)
    assert choice.adapter.model == "m-1"
    assert "ANTHROPIC_API_KEY is set" in choice.reason


def test_auto_falls_back_to_the_static_writer_without_keys() -> None:
    choice = choose_digest_writer(environ={})

    assert isinstance(choice.writer, StaticDigestWriter)
    assert choice.adapter is None
    assert "static optimizer" in choice.reason


def test_a_configured_model_writes_the_digest_through_its_adapter() -> None:
    choice = choose_digest_writer(environ={"ANTHROPIC_API_KEY": "sk-ant-test-only"})

    assert isinstance(choice.writer, ModelDigestWriter)
    assert choice.writer.adapter is choice.adapter
    assert isinstance(choice.adapter, AnthropicAdapter)


def test_choose_adapter_without_any_configured_model_says_how_to_configure_one() -> None:
    with pytest.raises(ProviderAuthenticationError, match="OPENAI_API_KEY"):
        choose_adapter(environ={})


def test_a_base_url_means_an_openai_compatible_server_spoken_to_through_chat() -> None:
    choice = choose_adapter(environ={}, model="served-model", base_url="http://127.0.0.1:9/v1")

    assert isinstance(choice.adapter, OpenAIAdapter)
    assert choice.adapter.api == "chat"
    assert "127.0.0.1:9" in choice.reason


def test_an_explicit_provider_without_its_key_fails_saying_which_variable() -> None:
    with pytest.raises(ProviderAuthenticationError, match="ANTHROPIC_API_KEY"):
        choose_adapter("anthropic", environ={})
