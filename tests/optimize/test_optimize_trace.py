"""`optimize` is one `optimize {prompt}` span, with the evaluation that writes the digest and
its requests nested under it."""

from pathlib import Path

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from promptkit.adapters import ProviderAdapter
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply

from .conftest import make_prompt
from .test_optimize import DIGEST, explore_then_answer


def test_optimize_span_holds_the_evaluation_that_writes_the_digest(
    openai_adapter: ProviderAdapter,
    server: FakeProviderServer,
    repo: Path,
    spans: InMemorySpanExporter,
) -> None:
    session = Session()
    explore_then_answer(server, Reply.json({"digest": DIGEST}))

    openai_adapter.optimize(make_prompt(session, repo), session=session)

    finished = spans.get_finished_spans()
    (optimize,) = [span for span in finished if span.name.startswith("optimize ")]
    (evaluation,) = [span for span in finished if span.name.startswith("invoke_agent ")]
    assert dict(optimize.attributes or {})["gen_ai.operation.name"] == "optimize"
    assert evaluation.parent is not None
    assert evaluation.parent.span_id == optimize.context.span_id
