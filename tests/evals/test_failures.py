"""A reply that fails after costing tokens is a failed case that still reports its tokens."""

from promptkit.evals import Case, Dataset, JsonFieldEquals, run_evaluation
from promptkit.testing import FakeProviderServer, Reply, Usage

from .conftest import STRUCTURED_PROMPT, Country, openai_adapter


def test_unparseable_structured_reply_fails_the_case_and_keeps_its_tokens(
    server: FakeProviderServer,
):
    server.respond_with(lambda request: Reply.text("not json at all", usage=Usage(40, 7)))
    dataset = Dataset("s", (Case("fr", (Country("France"),), expected={"capital": "Paris"}),))

    report = run_evaluation(
        STRUCTURED_PROMPT, dataset, openai_adapter(server), [JsonFieldEquals("capital")]
    )

    result = report.result("latest", "fr")
    assert result is not None and result.failed
    assert result.error is not None and result.error.startswith("OutputParseError")
    assert result.output_tokens is not None and result.output_tokens >= 7
