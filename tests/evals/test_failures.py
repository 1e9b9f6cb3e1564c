"""What a run keeps of a failed or unsafe reply: the tokens it cost, never a credential."""

import json

from promptkit.evals import Case, Dataset, ExactMatch, JsonFieldEquals, run_evaluation
from promptkit.testing import FakeProviderServer, Reply, Usage

from .conftest import CAPITAL_PROMPT, STRUCTURED_PROMPT, Country, openai_adapter


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


def test_a_credential_the_model_echoes_stays_out_of_the_report(server: FakeProviderServer):
    planted = "sk-proj-Fake0123456789abcdefGHIJKLMNOPqrstuv"
    server.respond_with(lambda request: Reply.text(f"the key is {planted}"))
    dataset = Dataset("t", (Case("fr", (Country("France"),), expected="Paris"),))

    report = run_evaluation(CAPITAL_PROMPT, dataset, openai_adapter(server), [ExactMatch()])

    assert planted not in json.dumps(report.to_json())
    assert "the key is" in json.dumps(report.to_json())
