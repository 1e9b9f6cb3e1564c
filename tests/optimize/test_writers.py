"""Digest writers: both satisfy the `DigestWriter` protocol, the static one is not an adapter, and
`ProviderAdapter.optimize` keeps the workflow's defaults, as `App.optimize` and the command
line keep its deadline."""

from __future__ import annotations

import inspect

from promptkit.adapters import OpenAIAdapter, ProviderAdapter
from promptkit.app import App
from promptkit.cli._options import DEFAULT_OPTIMIZE_DEADLINE_S
from promptkit.optimize import (
    DEFAULT_OPTIMIZE_DEADLINE,
    DEFAULT_OPTIMIZE_TOOL_ROUNDS,
    DigestWriter,
    ModelDigestWriter,
    OptimizationScope,
    StaticDigestWriter,
    optimize_workspace_digest,
)


def test_both_writers_satisfy_the_digest_writer_protocol() -> None:
    adapter = OpenAIAdapter(model="gpt-4.1-mini", client_kwargs={"api_key": "sk-test"})

    assert isinstance(StaticDigestWriter(), DigestWriter)
    assert isinstance(ModelDigestWriter(adapter), DigestWriter)


def test_the_static_writer_is_not_an_adapter() -> None:
    assert not isinstance(StaticDigestWriter(), ProviderAdapter)


def test_a_model_writer_is_named_after_its_adapter() -> None:
    adapter = OpenAIAdapter(model="gpt-4.1-mini", client_kwargs={"api_key": "sk-test"})

    writer = ModelDigestWriter(adapter)

    assert (writer.provider, writer.model) == ("openai", "gpt-4.1-mini")


def test_adapter_optimize_has_the_workflow_defaults() -> None:
    method = inspect.signature(ProviderAdapter.optimize).parameters
    workflow = inspect.signature(optimize_workspace_digest).parameters

    assert method["max_tool_rounds"].default == DEFAULT_OPTIMIZE_TOOL_ROUNDS
    assert method["store_scope"].default == OptimizationScope.SESSION
    shared = [name for name in workflow if name not in ("writer", "prompt")]
    assert all(method[name].default == workflow[name].default for name in shared)


def test_the_app_and_the_command_line_keep_the_workflows_deadline() -> None:
    # Both repeat the figure so as not to import the workflow before it runs.
    app_deadline = inspect.signature(App.optimize).parameters["deadline"].default

    assert app_deadline == DEFAULT_OPTIMIZE_DEADLINE
    assert DEFAULT_OPTIMIZE_DEADLINE_S == DEFAULT_OPTIMIZE_DEADLINE
