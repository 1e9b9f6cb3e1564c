"""A failing optimize leaves the caller's stored session and override files exactly as they were:
provider failures mid-loop, refused digests, truncated or declined replies on every wire API, and
a write that fails half-way through GLOBAL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from promptkit.adapters import ProviderAdapter
from promptkit.digest import (
    WorkspaceDigestSection,
    latest_workspace_digest,
    set_workspace_digest,
)
from promptkit.errors import (
    DigestRejectedError,
    ModelRefusalError,
    ProviderServerError,
)
from promptkit.optimize import OptimizationScope
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor, Prompt
from promptkit.session import Session, SessionStore
from promptkit.testing import FakeProviderServer, Reply, ToolCall

from .conftest import make_prompt

PREVIOUS = "The digest stored before this run."
FAKE_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` (lock files aside: taking a lock may create one) and its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.name.endswith(".lock")
    }


class Caller:
    """A caller's state on disk: a stored session holding a digest, and override files."""

    def __init__(self, tmp_path: Path, repo: Path) -> None:
        self.state_dir = tmp_path / "state"
        self.overrides_dir = tmp_path / "overrides"
        self.store = SessionStore(self.state_dir)
        self.session = Session()
        self.prompt: Prompt[Any] = make_prompt(self.session, repo)
        self.attachment = self.store.attach(self.session, repo)
        set_workspace_digest(self.session, "workspace-digest", PREVIOUS)
        self.overrides = LocalPromptOverridesStore(self.overrides_dir)
        self.overrides.set_section_override(self.prompt, path="role", body="You review kindly.")
        self.overrides.set_shared_section(
            section_key="workspace-digest",
            tag="latest",
            body="A shared digest written earlier.",
            expected_hash=self.prompt.find_section(WorkspaceDigestSection).content_hash,
            source=OverrideAuthor("optimizer", "an-earlier-model"),
        )

    def files(self) -> dict[str, dict[str, bytes]]:
        return {"state": tree_bytes(self.state_dir), "overrides": tree_bytes(self.overrides_dir)}

    def optimize(self, adapter: ProviderAdapter, scope: OptimizationScope) -> None:
        adapter.optimize(
            self.prompt,
            store_scope=scope,
            overrides_store=self.overrides,
            overrides_tag="latest",
            session=self.session,
        )


@pytest.fixture
def caller(tmp_path: Path, repo: Path) -> Iterator[Caller]:
    state = Caller(tmp_path, repo)
    yield state
    state.attachment.close()


FAILURES: dict[str, tuple[tuple[Reply, ...], type[Exception]]] = {
    "provider-500-mid-loop": (
        (
            Reply.tool_calls(ToolCall("vfs_list_directory", {"path": "/"})),
            Reply.error(500, "the model server fell over"),
        ),
        ProviderServerError,
    ),
    "secret-bearing-digest": (
        (Reply.json({"digest": f"## Deploy\n- AWS key {FAKE_KEY}"}),),
        DigestRejectedError,
    ),
    "empty-digest": ((Reply.json({"digest": "\n\n"}),), DigestRejectedError),
}


@pytest.mark.parametrize("scope", list(OptimizationScope))
@pytest.mark.parametrize("failure", list(FAILURES))
def test_failed_optimize_leaves_the_callers_session_and_override_files_unchanged(
    openai_adapter: ProviderAdapter,
    server: FakeProviderServer,
    caller: Caller,
    scope: OptimizationScope,
    failure: str,
) -> None:
    replies, error = FAILURES[failure]
    server.enqueue(*replies)
    before = caller.files()

    with pytest.raises(error):
        caller.optimize(openai_adapter, scope)

    assert caller.files() == before
    digest = latest_workspace_digest(caller.session, "workspace-digest")
    assert digest is not None
    assert digest.body == PREVIOUS


def test_unwritable_output_dir_leaves_the_optimizations_own_error_to_the_caller(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, caller: Caller, tmp_path: Path
) -> None:
    server.enqueue(Reply.json({"digest": ""}))
    not_a_directory = tmp_path / "taken"
    not_a_directory.write_text("a file where the output directory should be")

    with capture_logs() as logs, pytest.raises(DigestRejectedError, match="empty digest"):
        openai_adapter.optimize(caller.prompt, session=caller.session, output_dir=not_a_directory)

    failed = [log for log in logs if log["event"] == "execution_record_failed"]
    assert {log["output_dir"] for log in failed} == {str(not_a_directory)}


def test_global_write_failing_half_way_puts_back_the_shared_digest(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, caller: Caller
) -> None:
    # The prompt's own digest entry would hide the new shared digest, so GLOBAL removes it
    # after writing the shared file. A directory where its lock goes makes that step fail, and
    # the shared write has to be undone.
    caller.overrides.set_section_override(
        caller.prompt,
        path="workspace-digest",
        body="An older digest of this prompt.",
        source=OverrideAuthor("optimizer", "an-earlier-model"),
    )
    own_lock = caller.overrides.prompt_file(caller.prompt.ns, caller.prompt.key, "latest")
    own_lock = own_lock.with_name(own_lock.name + ".lock")
    own_lock.unlink()
    own_lock.mkdir()
    server.enqueue(Reply.json({"digest": "## Layout\n- `src/demo/`: a fresh digest"}))
    before = caller.files()
    stored_before = caller.overrides.resolve(caller.prompt.descriptor, "latest")

    with pytest.raises(OSError):
        caller.optimize(openai_adapter, OptimizationScope.GLOBAL)

    assert caller.overrides.resolve(caller.prompt.descriptor, "latest") == stored_before
    assert caller.files() == before
    digest = latest_workspace_digest(caller.session, "workspace-digest")
    assert digest is not None
    assert digest.body == PREVIOUS


def test_global_write_failing_on_a_new_override_file_removes_it(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, repo: Path, tmp_path: Path
) -> None:
    session = Session()
    prompt = make_prompt(session, repo)
    overrides = LocalPromptOverridesStore(tmp_path / "overrides")
    shared_lock = tmp_path / "overrides" / "_shared" / "workspace-digest" / "latest.toml.lock"
    shared_lock.mkdir(parents=True)
    server.enqueue(Reply.json({"digest": "## Layout\n- `src/demo/`: a fresh digest"}))

    with pytest.raises(OSError):
        openai_adapter.optimize(
            prompt,
            store_scope=OptimizationScope.GLOBAL,
            overrides_store=overrides,
            overrides_tag="latest",
            session=session,
        )

    assert not overrides.prompt_file(prompt.ns, prompt.key, "latest").exists()


CUT_SHORT: dict[str, tuple[Reply, type[Exception]]] = {
    "truncated": (
        Reply.truncated(Reply.text('{"digest": "## Layout\\n- src/ holds the code; run make te')),
        DigestRejectedError,
    ),
    "refused": (Reply.refusal("I can't describe this repository."), ModelRefusalError),
}


@pytest.mark.parametrize("reply", list(CUT_SHORT))
def test_optimize_never_stores_a_truncated_or_refused_digest(
    adapter: ProviderAdapter, server: FakeProviderServer, caller: Caller, reply: str
) -> None:
    scripted, error = CUT_SHORT[reply]
    server.enqueue(scripted)
    before = caller.files()

    with pytest.raises(error):
        caller.optimize(adapter, OptimizationScope.GLOBAL)

    assert caller.files() == before
    digest = latest_workspace_digest(caller.session, "workspace-digest")
    assert digest is not None
    assert digest.body == PREVIOUS


def test_optimize_with_session_scope_never_stores_a_truncated_digest(
    openai_adapter: ProviderAdapter, server: FakeProviderServer, caller: Caller
) -> None:
    scripted, error = CUT_SHORT["truncated"]
    server.enqueue(scripted)
    before = caller.files()

    with pytest.raises(error):
        caller.optimize(openai_adapter, OptimizationScope.SESSION)

    assert caller.files() == before
    digest = latest_workspace_digest(caller.session, "workspace-digest")
    assert digest is not None
    assert digest.body == PREVIOUS
