"""What a small model on a local server really answers when asked for a digest, against a fake
server that behaves like llama-cpp-python's (`ServerProfile.llama_cpp_python()`): a JSON-schema
blob, the schema's own description, or a digest that never ends. None of them is stored, in
either scope: the run fails with a typed error saying why, and its manifest records what
happened. A digest grounded in the workspace is stored, with its grounding figures.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from promptkit.adapters import OpenAIAdapter
from promptkit.digest import latest_workspace_digest
from promptkit.errors import DigestRejectedError, ProviderTimeoutError
from promptkit.logging import configure
from promptkit.optimize import Grounding, OptimizationResult, OptimizationScope
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ServerProfile

from .conftest import make_prompt
from .test_digest_gate import GROUNDED, SCHEMA_BLOB, SCHEMA_DESCRIPTION

MODEL = "qwen2.5-coder-0.5b-instruct"

JUNK = {
    "schema-blob": (Reply.text(SCHEMA_BLOB), "it is a JSON schema"),
    "schema-description": (Reply.json({"digest": SCHEMA_DESCRIPTION}), "names no file"),
    # The server honours `max_tokens`, so the cap cuts an endless digest short.
    "endless-digest": (Reply.text("- `src/demo/` holds code " * 3000), "was cut off"),
}


@pytest.fixture
def local_server() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(profile=ServerProfile.llama_cpp_python()) as server:
        yield server


@pytest.fixture
def local_model(local_server: FakeProviderServer) -> OpenAIAdapter:
    return OpenAIAdapter(
        model=MODEL,
        api="chat",
        client_kwargs={"base_url": local_server.openai_base_url, "max_retries": 0},
    )


class Run:
    """One optimize of the `repo` fixture: its session, overrides and output folder."""

    def __init__(self, tmp_path: Path, repo: Path) -> None:
        self.session = Session()
        self.prompt = make_prompt(self.session, repo)
        self.overrides = LocalPromptOverridesStore(tmp_path / "overrides")
        self.output_dir = tmp_path / "run"

    def optimize(
        self, adapter: OpenAIAdapter, scope: OptimizationScope, **options: Any
    ) -> OptimizationResult:
        return adapter.optimize(
            self.prompt,
            store_scope=scope,
            overrides_store=self.overrides,
            overrides_tag="latest",
            session=self.session,
            output_dir=self.output_dir,
            **options,
        )

    def manifest(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads((self.output_dir / "manifest.json").read_text())
        return document

    def stored_nothing(self) -> bool:
        return latest_workspace_digest(self.session, "workspace-digest") is None and not any(
            self.overrides.root.rglob("*.toml")
        )


@pytest.fixture
def run(tmp_path: Path, repo: Path) -> Run:
    return Run(tmp_path, repo)


@pytest.mark.parametrize("scope", list(OptimizationScope))
@pytest.mark.parametrize("junk", list(JUNK))
def test_junk_from_a_local_model_is_refused_and_nothing_is_stored(
    local_server: FakeProviderServer,
    local_model: OpenAIAdapter,
    run: Run,
    junk: str,
    scope: OptimizationScope,
) -> None:
    reply, why = JUNK[junk]
    local_server.enqueue(reply)

    with pytest.raises(DigestRejectedError, match=why):
        run.optimize(local_model, scope)

    assert run.stored_nothing()
    manifest = run.manifest()
    assert (manifest["status"], manifest["metadata"]["stopped_by"]) == ("failed", "refusal")
    assert "digest.md" not in manifest["artifacts"]


def test_the_refusal_carries_the_grounding_into_the_error_and_the_manifest(
    local_server: FakeProviderServer, local_model: OpenAIAdapter, run: Run
) -> None:
    local_server.enqueue(Reply.json({"digest": "## Layout\n- `app/models/`\n- `lib/tasks.rb`"}))

    with pytest.raises(DigestRejectedError) as raised:
        run.optimize(local_model, OptimizationScope.SESSION)

    assert raised.value.grounding == Grounding(
        paths_named=2, paths_found=0, not_found=("app/models", "lib/tasks.rb")
    )
    assert run.manifest()["metadata"]["grounding"]["paths_named"] == 2


def test_a_model_that_never_finishes_is_stopped_at_the_deadline(
    local_server: FakeProviderServer, local_model: OpenAIAdapter, run: Run
) -> None:
    local_server.enqueue(Reply.delay(5.0, Reply.json({"digest": GROUNDED})))

    with pytest.raises(ProviderTimeoutError, match=r"deadline of 0\.5s"):
        run.optimize(local_model, OptimizationScope.SESSION, deadline=0.5)
    local_server.stop()  # the abandoned request ends with the server, not in a later test
    for worker in threading.enumerate():
        if worker.name == "promptkit-provider-request":
            worker.join(timeout=30)

    assert run.stored_nothing()
    assert run.manifest()["metadata"]["stopped_by"] == "deadline"


@pytest.mark.parametrize("scope", list(OptimizationScope))
def test_a_grounded_digest_is_stored_with_its_grounding(
    local_server: FakeProviderServer,
    local_model: OpenAIAdapter,
    run: Run,
    scope: OptimizationScope,
) -> None:
    local_server.enqueue(Reply.json({"digest": GROUNDED}))
    configure(level="info")  # the conftest puts it back to warning after the test

    with capture_logs() as logs:
        result = run.optimize(local_model, scope)

    expected = Grounding(paths_named=3, paths_found=3, commands_named=3, commands_found=3)
    assert result.grounding == expected
    assert run.manifest()["metadata"]["grounding"] == expected.to_json()
    (optimized,) = [log for log in logs if log["event"] == "workspace_digest_optimized"]
    assert optimized["grounding"] == expected.to_json()
    assert result.digest == GROUNDED.strip()


def test_fallback_static_stores_the_static_digest_and_says_why_in_its_provenance(
    local_server: FakeProviderServer, local_model: OpenAIAdapter, run: Run
) -> None:
    local_server.enqueue(Reply.text(SCHEMA_BLOB))

    result = run.optimize(local_model, OptimizationScope.SESSION, fallback_static=True)

    assert result.fallback_reason is not None and "JSON schema" in result.fallback_reason
    stored = latest_workspace_digest(run.session, "workspace-digest")
    assert stored is not None and stored.body == result.digest
    assert "make test" in stored.body
    assert stored.provenance is not None
    assert any("JSON schema" in note for note in stored.provenance.notes)
    assert run.manifest()["metadata"]["fallback_reason"] == result.fallback_reason


def test_fallback_static_with_global_scope_records_why_in_the_shared_provenance(
    local_server: FakeProviderServer, local_model: OpenAIAdapter, run: Run
) -> None:
    local_server.enqueue(Reply.text(SCHEMA_BLOB))

    run.optimize(local_model, OptimizationScope.GLOBAL, fallback_static=True)

    shared = run.overrides.read_shared_section("workspace-digest", "latest")
    assert shared is not None and shared.provenance is not None
    notes = shared.provenance["notes"]
    assert isinstance(notes, tuple) and any("JSON schema" in str(note) for note in notes)


def test_without_the_gate_the_digest_is_stored_and_its_grounding_still_measured(
    local_server: FakeProviderServer, local_model: OpenAIAdapter, run: Run
) -> None:
    local_server.enqueue(Reply.json({"digest": "## Layout\n- `app/models/`"}))

    result = run.optimize(local_model, OptimizationScope.SESSION, gate=False)

    assert result.grounding is not None and result.grounding.found == 0
    assert latest_workspace_digest(run.session, "workspace-digest") is not None
