"""OpenTelemetry spans with the GenAI attribute names, read with the SDK's in-memory exporter;
content only on opt-in and redacted; and with no SDK, nothing recorded and no SDK imported."""

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

from ..conftest import REPO_ROOT


class City(BaseModel):
    city: str


def lookup(params: City, context: ToolContext) -> ToolResult:
    return ToolResult(message=f"token for {params.city}: sk-live-0123456789abcdefghijklmnop")


PROMPT: Prompt[None] = Prompt(
    ns="tests/tracing",
    key="weather",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Answer.",
            tools=(Tool(name="lookup", description="Look up.", params_type=City, handler=lookup),),
        ),
    ),
)


def attrs(span: ReadableSpan) -> dict[str, Any]:
    """A finished span's attributes."""
    return dict(span.attributes or {})


def _script(server: FakeProviderServer) -> None:
    server.enqueue(
        Reply.tool_calls(ToolCall("lookup", {"city": "Oslo"}), usage=Usage(10, 4)),
        Reply.text("Sunny.", usage=Usage(20, 3)),
    )


def test_evaluate_records_genai_spans(
    wire, server: FakeProviderServer, make_adapter, spans: InMemorySpanExporter
) -> None:
    _script(server)

    make_adapter().evaluate(PROMPT, session=Session())

    finished = {span.name: span for span in spans.get_finished_spans()}
    operation = finished["invoke_agent tests/tracing/weather"]
    requests = [s for s in spans.get_finished_spans() if s.name == f"chat {wire.model}"]
    tool = finished["execute_tool lookup"]
    assert attrs(operation)["gen_ai.operation.name"] == "invoke_agent"
    assert attrs(operation)["gen_ai.provider.name"] in ("openai", "anthropic")
    assert attrs(operation)["gen_ai.usage.input_tokens"] == 30
    assert len(requests) == 2
    first = attrs(requests[0])
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.request.model"] == wire.model
    assert first["gen_ai.response.model"] == wire.model
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (10, 4)
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attrs(tool)["gen_ai.tool.name"] == "lookup"
    parents = {s.parent.span_id if s.parent else None for s in [*requests, tool]}
    assert parents == {operation.context.span_id}
    assert "gen_ai.input.messages" not in attrs(operation)
    assert "gen_ai.tool.call.result" not in attrs(tool)


def test_content_is_recorded_on_opt_in_and_redacted(
    server: FakeProviderServer,
    make_adapter,
    spans: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    _script(server)

    make_adapter().evaluate(PROMPT, session=Session(), user_message="Weather in Oslo?")

    finished = {span.name: span for span in spans.get_finished_spans()}
    operation = attrs(finished["invoke_agent tests/tracing/weather"])
    assert "Weather in Oslo?" in str(operation["gen_ai.input.messages"])
    assert "Sunny." in str(operation["gen_ai.output.messages"])
    result = str(attrs(finished["execute_tool lookup"])["gen_ai.tool.call.result"])
    assert "token for Oslo" in result
    assert "sk-live-0123456789abcdefghijklmnop" not in result


def test_a_failed_request_ends_its_spans_with_an_error(
    wire, server: FakeProviderServer, make_adapter, spans: InMemorySpanExporter
) -> None:
    server.enqueue(Reply.error(400, "bad request"))

    with pytest.raises(Exception, match="bad request"):
        make_adapter().evaluate(PROMPT, session=Session())

    finished = {span.name: span for span in spans.get_finished_spans()}
    for name in ("invoke_agent tests/tracing/weather", f"chat {wire.model}"):
        assert finished[name].status.status_code is trace.StatusCode.ERROR


NO_SDK_SCRIPT = """
import json, sys
import openai
from promptkit import MarkdownSection, Prompt
from promptkit.adapters import OpenAIAdapter
from promptkit.session import Session
from opentelemetry import trace

client = openai.OpenAI(api_key="sk-test", base_url=sys.argv[1], max_retries=0)
prompt = Prompt(ns="t", key="k", sections=(MarkdownSection(title="T", key="t", template="Hi."),))
OpenAIAdapter(model="m", client=client).evaluate(prompt, session=Session())
span = trace.get_tracer("probe").start_span("probe")
print(json.dumps({
    "sdk_imported": any(name.startswith("opentelemetry.sdk") for name in sys.modules),
    "recording": span.is_recording(),
}))
"""


def test_without_an_sdk_evaluate_records_nothing_and_imports_no_sdk(
    server: FakeProviderServer,
) -> None:
    server.enqueue(Reply.text("hi"))

    completed = subprocess.run(
        [sys.executable, "-c", NO_SDK_SCRIPT, server.openai_base_url],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {"sdk_imported": False, "recording": False}
    assert server.request_count == 1


UNTRACED_SCRIPT = """
import json, sys
import openai
from promptkit import MarkdownSection, Prompt
from promptkit.adapters import OpenAIAdapter
from promptkit.session import Session

client = openai.OpenAI(api_key="sk-test", base_url=sys.argv[1], max_retries=0)
prompt = Prompt(ns="t", key="k", sections=(MarkdownSection(title="T", key="t", template="Hi."),))
OpenAIAdapter(model="m", client=client).evaluate(prompt, session=Session())
print(json.dumps({
    "api_imported": "opentelemetry.trace" in sys.modules,
    "sdk_imported": any(name.startswith("opentelemetry.sdk") for name in sys.modules),
}))
"""


def _run_untraced_script(server: FakeProviderServer, **environment: str) -> dict[str, bool]:
    server.enqueue(Reply.text("hi"))
    env = {key: value for key, value in os.environ.items() if key != "OTEL_PYTHON_TRACER_PROVIDER"}
    completed = subprocess.run(
        [sys.executable, "-c", UNTRACED_SCRIPT, server.openai_base_url],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**env, **environment},
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert server.request_count == 1
    result: dict[str, bool] = json.loads(completed.stdout)
    return result


def test_an_application_that_never_imports_opentelemetry_pays_no_import_of_it(
    server: FakeProviderServer,
) -> None:
    assert _run_untraced_script(server) == {"api_imported": False, "sdk_imported": False}


def test_a_tracer_provider_named_in_the_environment_is_still_loaded_by_an_evaluation(
    server: FakeProviderServer,
) -> None:
    traced = _run_untraced_script(server, OTEL_PYTHON_TRACER_PROVIDER="sdk_tracer_provider")

    assert traced == {"api_imported": True, "sdk_imported": True}
