"""ProviderAdapter.optimize through the real SDK clients against FakeProviderServer: scopes,
validation before any request, text fallback, refusals, and the optimization prompt itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from promptkit._names import KEY_PATTERN, is_valid_key
from promptkit.adapters import ProviderAdapter
from promptkit.digest import latest_workspace_digest, set_workspace_digest
from promptkit.errors import DigestRejectedError, OptimizationError
from promptkit.optimize import OptimizationScope
from promptkit.optimize._model_writer import optimization_prompt
from promptkit.optimize._target import prepare_optimization
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor, Prompt, Section
from promptkit.session import PromptExecuted, PromptRendered, Session, ToolInvoked
from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

from .conftest import OPENAI_MODEL, PROMPT_KEY, PROMPT_NS, git, make_prompt

DIGEST = "## Layout\n- `src/demo/`: the package\n\n## Tooling\n- Test: `make test`"
FAKE_KEY = "sk-proj-" + "A1b2C3d4E5f6" * 4


def explore_then_answer(server: FakeProviderServer, answer: Reply) -> None:
    """Script one round of tool calls (plan, list the root) and then `answer`."""
    server.enqueue(
        Reply.tool_calls(
            ToolCall(
                "planning_setup_plan",
                {"objective": "Describe the workspace", "steps": ["layout", "tooling"]},
            ),
            ToolCall("vfs_list_directory", {"path": "/"}),
        ),
        answer,
    )


def test_session_scope_stores_the_digest_in_the_callers_session(
    adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    prompt = make_prompt(session, repo)
    explore_then_answer(server, Reply.json({"digest": f"\n{DIGEST}\n\n"}))

    result = adapter.optimize(prompt, session=session)

    stored = latest_workspace_digest(session, "workspace-digest")
    assert stored is not None
    assert (result.digest, result.scope, result.section_key) == (
        DIGEST,
        OptimizationScope.SESSION,
        "workspace-digest",
    )
    assert stored.body == DIGEST
    assert stored.source == f"optimizer:{adapter.model}"
    assert stored.provenance is not None
    assert stored.provenance.head_sha == git(repo, "rev-parse", "HEAD")
    assert [call.name for call in result.response.tool_calls] == [
        "planning_setup_plan",
        "vfs_list_directory",
    ]
    assert server.request_count == 2


def test_session_digest_is_what_the_prompt_renders_next(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    prompt = make_prompt(session, repo)
    server.enqueue(Reply.json({"digest": DIGEST}))

    openai_adapter.optimize(prompt, session=session)

    assert DIGEST in prompt.render().text


def test_global_scope_writes_the_shared_override_and_clears_the_session_digest(
    adapter: ProviderAdapter, server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    session = Session()
    prompt = make_prompt(session, repo)
    set_workspace_digest(session, "workspace-digest", "an older session digest")
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    explore_then_answer(server, Reply.json({"digest": DIGEST}))

    result = adapter.optimize(
        prompt,
        store_scope=OptimizationScope.GLOBAL,
        overrides_store=store,
        overrides_tag="v1",
        session=session,
    )

    assert result.scope is OptimizationScope.GLOBAL
    assert result.locations == (str(store.shared_file("workspace-digest", "v1")),)
    assert not (tmp_path / "overrides" / "tests" / "app" / "review" / "v1.toml").exists()
    entry = store.resolve_shared_section("workspace-digest", "v1")
    assert entry is not None
    assert entry.body == DIGEST
    assert entry.source == OverrideAuthor("optimizer", adapter.model)
    assert latest_workspace_digest(session, "workspace-digest") is None
    assert DIGEST in prompt.render(overrides_store=store, tag="v1").text


def test_global_digest_is_found_by_another_prompt_with_a_digest_section_of_the_same_key(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    session = Session()
    server.enqueue(Reply.json({"digest": DIGEST}))
    openai_adapter.optimize(
        make_prompt(session, repo),
        store_scope=OptimizationScope.GLOBAL,
        overrides_store=store,
        overrides_tag="latest",
        session=session,
    )

    other = make_prompt(Session(), repo, ns="tests/other", key="triage")

    assert DIGEST in other.render(overrides_store=store).text


def test_a_prompts_own_override_wins_over_the_shared_global_digest(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    other = make_prompt(Session(), repo, ns="tests/other", key="triage")
    store.set_section_override(other, path="workspace-digest", body="Curated by hand.")
    session = Session()
    server.enqueue(Reply.json({"digest": DIGEST}))

    openai_adapter.optimize(
        make_prompt(session, repo),
        store_scope=OptimizationScope.GLOBAL,
        overrides_store=store,
        overrides_tag="latest",
        session=session,
    )

    text = other.render(overrides_store=store).text
    assert "Curated by hand." in text
    assert DIGEST not in text


@pytest.mark.parametrize("missing", ["overrides_store", "overrides_tag"])
def test_global_scope_without_store_or_tag_fails_before_any_request(
    openai_adapter: ProviderAdapter,
    server: FakeProviderServer,
    repo: Path,
    tmp_path: Path,
    missing: str,
) -> None:
    session = Session()
    store = LocalPromptOverridesStore(tmp_path / "overrides")

    with pytest.raises(OptimizationError, match=f"missing: {missing}"):
        openai_adapter.optimize(
            make_prompt(session, repo),
            store_scope=OptimizationScope.GLOBAL,
            overrides_store=None if missing == "overrides_store" else store,
            overrides_tag=None if missing == "overrides_tag" else "latest",
            session=session,
        )

    assert server.request_count == 0
    assert not (tmp_path / "overrides").exists()


@pytest.mark.parametrize(
    ("without", "named"),
    [("with_digest", "WorkspaceDigestSection"), ("with_workspace", "workspace section")],
)
def test_prompt_without_the_needed_sections_fails_before_any_request(
    openai_adapter: ProviderAdapter,
    server: FakeProviderServer,
    repo: Path,
    without: str,
    named: str,
) -> None:
    session = Session()
    prompt = make_prompt(
        session,
        repo,
        with_digest=without != "with_digest",
        with_workspace=without != "with_workspace",
    )

    with pytest.raises(OptimizationError, match=named):
        openai_adapter.optimize(prompt, session=session)

    assert server.request_count == 0


def test_reply_that_does_not_parse_is_used_as_plain_text(
    adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    explore_then_answer(server, Reply.text(f"  {DIGEST}\n"))

    result = adapter.optimize(make_prompt(session, repo), session=session)

    assert result.digest == DIGEST
    assert result.response.output is None
    assert len(result.response.tool_calls) == 2
    stored = latest_workspace_digest(session, "workspace-digest")
    assert stored is not None
    assert stored.body == DIGEST


def test_plain_text_reply_keeps_the_token_usage_of_the_run(
    adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    server.enqueue(
        Reply.tool_calls(
            ToolCall("vfs_list_directory", {"path": "/"}),
            usage=Usage(input_tokens=120, output_tokens=30),
        ),
        Reply.text(DIGEST, usage=Usage(input_tokens=200, output_tokens=40)),
    )

    result = adapter.optimize(make_prompt(session, repo), session=session)

    assert result.response.output is None
    usage = result.response.usage
    assert (usage.input_tokens, usage.output_tokens) == (320, 70)
    assert result.response.model == adapter.model


@pytest.mark.parametrize("answer", [Reply.json({"digest": " \n "}), Reply.text("   ")])
def test_empty_digest_is_refused_and_nothing_is_stored(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path, answer: Reply
) -> None:
    session = Session()
    server.enqueue(answer)

    with pytest.raises(DigestRejectedError, match="empty digest"):
        openai_adapter.optimize(make_prompt(session, repo), session=session)

    assert latest_workspace_digest(session, "workspace-digest") is None


def test_digest_holding_a_credential_is_refused_naming_the_rule_never_the_value(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    session = Session()
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    server.enqueue(Reply.json({"digest": f"{DIGEST}\n- Deploy key: {FAKE_KEY}"}))

    with pytest.raises(DigestRejectedError) as refused:
        openai_adapter.optimize(
            make_prompt(session, repo),
            store_scope=OptimizationScope.GLOBAL,
            overrides_store=store,
            overrides_tag="latest",
            session=session,
        )

    message = str(refused.value)
    assert "openai-project-key" in message
    assert FAKE_KEY not in message
    assert FAKE_KEY[8:20] not in message
    assert latest_workspace_digest(session, "workspace-digest") is None
    assert not (tmp_path / "overrides").exists()


def test_given_optimization_session_is_the_one_the_run_uses(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    run_session = Session()
    explore_then_answer(server, Reply.json({"digest": DIGEST}))

    openai_adapter.optimize(
        make_prompt(session, repo), session=session, optimization_session=run_session
    )

    assert [call.name for call in run_session.select_all(ToolInvoked)] == [
        "planning_setup_plan",
        "vfs_list_directory",
    ]
    assert len(run_session.select_all(PromptExecuted)) == 1
    assert session.select_all(ToolInvoked) == ()
    assert session.select_all(PromptRendered) == ()


def test_optimization_prompt_has_its_own_ns_key_sections_and_digest_output(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    run_session = Session()
    server.enqueue(Reply.json({"digest": DIGEST}))

    openai_adapter.optimize(
        make_prompt(session, repo), session=session, optimization_session=run_session
    )

    (rendered,) = run_session.select_all(PromptRendered)
    assert (rendered.prompt_ns, rendered.prompt_key) == (
        f"{PROMPT_NS}.optimization",
        f"{PROMPT_KEY}-workspace-digest",
    )
    headings = [line for line in rendered.text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## 1. Optimization Goal",
        "## 2. Expectations",
        "## 3. Planning",
        "## 4. Workspace",
        "## 5. Workspace Digest",
        "## 6. Response Format",
    ]
    (request,) = server.requests
    assert request.body["instructions"] == rendered.text
    schema = request.body["text"]["format"]["schema"]
    assert schema["required"] == ["digest"]
    assert request.body["model"] == OPENAI_MODEL


def test_optimization_prompt_names_stay_within_the_key_rule_for_long_names(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path
) -> None:
    session = Session()
    run_session = Session()
    long_ns, long_key = "team/" + "n" * 60, "k" * 64
    server.enqueue(Reply.json({"digest": DIGEST}))

    openai_adapter.optimize(
        make_prompt(session, repo, ns=long_ns, key=long_key),
        session=session,
        optimization_session=run_session,
    )

    (rendered,) = run_session.select_all(PromptRendered)
    last_ns_segment = rendered.prompt_ns.rsplit("/", 1)[1]
    assert rendered.prompt_ns.startswith("team/n")
    assert last_ns_segment.endswith(".optimization")
    assert rendered.prompt_key.endswith("-workspace-digest")
    assert len(last_ns_segment) <= 64
    assert len(rendered.prompt_key) <= 64


def test_output_dir_receives_the_run_record_and_the_workspace_manifest(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    session = Session()
    server.enqueue(Reply.json({"digest": DIGEST}))
    output = tmp_path / "out"

    openai_adapter.optimize(make_prompt(session, repo), session=session, output_dir=output)

    record = json.loads((output / "manifest.json").read_text(encoding="utf-8"))
    assert (record["status"], record["outcome"]) == ("completed", "success")
    assert sorted(record["artifacts"]) == ["digest.md", "workspace.manifest.json"]
    assert record["metadata"]["scope"] == "session"
    assert record["metadata"]["usage"]["input_tokens"] == 10
    workspace = json.loads((output / "workspace.manifest.json").read_text(encoding="utf-8"))
    assert workspace["head_sha"] == git(repo, "rev-parse", "HEAD")
    assert (output / "digest.md").read_text(encoding="utf-8") == DIGEST + "\n"


KEYS = st.from_regex(KEY_PATTERN, fullmatch=True).filter(is_valid_key)


@pytest.fixture
def bound_sections(repo: Path) -> tuple[Section, ...]:
    """The sections of a prompt over `repo`, built once: prompts of any name can share them."""
    return make_prompt(Session(), repo).sections


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ns=st.lists(KEYS, min_size=1, max_size=3).map("/".join), keys=st.tuples(KEYS, KEYS))
def test_optimization_prompt_names_follow_the_key_rule_and_never_collide(
    bound_sections: tuple[Section, ...], ns: str, keys: tuple[str, str]
) -> None:
    run_session = Session()
    inner = [
        optimization_prompt(
            prepare_optimization(
                Prompt(ns=ns, key=key, sections=bound_sections),
                store_scope=OptimizationScope.SESSION,
                overrides_store=None,
                overrides_tag=None,
                session=Session(),
            ),
            run_session,
        )
        for key in keys
    ]

    for prompt in inner:
        last_segment = prompt.ns.rsplit("/", 1)[-1]
        assert last_segment.endswith(".optimization") and is_valid_key(last_segment)
        assert prompt.key.endswith("-workspace-digest") and is_valid_key(prompt.key)
        assert prompt.ns.count("/") == ns.count("/")
    assert (inner[0].key == inner[1].key) == (keys[0] == keys[1])
