"""`run_evaluation` runs the application as it runs: through its `App` (model, settings,
prices, deps) or a deps factory per case; a reply script's tool calls run the application's
tools; a tool error fails its case unless the case expects it, and the report keeps each case's
tool calls; a prompt that would render the placeholder workspace digest fails its cases."""

from pathlib import Path

import pytest

from promptkit import (
    App,
    MarkdownSection,
    Prompt,
    TextSection,
    WorkspaceDigestSection,
)
from promptkit.adapters import ModelPrice, PriceTable
from promptkit.evals import Case, CaseToolCall, Contains, Dataset, run_evaluation
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.prompt import OverrideAuthor
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, reply_script_from

from ..stock import Item, Shelf, count_tool
from .conftest import openai_adapter


def stock_prompt(*extra: WorkspaceDigestSection) -> Prompt[None, Shelf]:
    return Prompt(
        ns="tests.evals",
        key="stock",
        sections=(
            TextSection(title="Role", key="role", text="You count the stock."),
            MarkdownSection(
                title="Task",
                key="task",
                params_type=Item,
                template="Count the {{ name }}.",
                tools=(count_tool(),),
            ),
            *extra,
        ),
        deps_type=Shelf,
    )


STOCK = stock_prompt()
# The model counts with the tool, then says what the tool returned.
SCRIPT = reply_script_from(
    {
        "rules": [
            {
                "when": "Count the bolts.",
                "tool_calls": [{"name": "count", "arguments": {"name": "bolts"}}],
            },
            {
                "when": "Count the nuts.",
                "tool_calls": [{"name": "count", "arguments": {"name": "nuts"}}],
            },
            {"when": ["Count the", "75"], "text": "75 in stock"},
            {"when": ["Count the", "12"], "text": "12 in stock"},
            {"when": "Count the", "text": "I could not count them"},
        ]
    }
)


def case(case_id: str, name: str, expected: str, **fields: object) -> Case:
    return Case(id=case_id, params=(Item(name=name),), expected=expected, **fields)  # type: ignore[arg-type]


@pytest.fixture
def scripted(server: FakeProviderServer) -> FakeProviderServer:
    server.respond_with(SCRIPT.reply_to)
    return server


def test_cases_run_with_the_apps_deps_and_prices(scripted: FakeProviderServer) -> None:
    prices = PriceTable({"gpt-4.1-mini": ModelPrice(input=1.0, output=0.0)})
    app = App(adapter=openai_adapter(scripted), deps=Shelf({"bolts": 12}), prices=prices)

    report = run_evaluation(
        STOCK, Dataset("stock", [case("bolts", "bolts", "12")]), app, [Contains()]
    )

    [result] = report.results
    assert (result.score, result.failed) == (1.0, False)
    assert result.tool_calls == (CaseToolCall("count", {"name": "bolts"}, True, "12"),)
    # Two replies of the fake's default 10 input tokens, at the app's price.
    assert result.cost == pytest.approx(20 / 1_000_000)


def test_a_deps_factory_gives_each_case_deps_of_its_own(scripted: FakeProviderServer) -> None:
    dataset = Dataset("stock", [case("few", "bolts", "12"), case("many", "bolts", "75")])

    report = run_evaluation(
        STOCK,
        dataset,
        App(adapter=openai_adapter(scripted)),
        [Contains()],
        deps=lambda case: Shelf({"bolts": int(case.expected)}),
    )

    assert [(r.case_id, r.text, r.score) for r in report.results] == [
        ("few", "12 in stock", 1.0),
        ("many", "75 in stock", 1.0),
    ]


def test_a_case_whose_tool_lacks_deps_fails_its_case_before_anything_is_sent(
    scripted: FakeProviderServer,
) -> None:
    report = run_evaluation(
        STOCK, Dataset("stock", [case("bolts", "bolts", "12")]), openai_adapter(scripted), []
    )

    [result] = report.results
    assert result.failed
    assert result.error is not None and result.error.startswith("DepsError: ")
    assert "'count'" in result.error
    assert scripted.requests == ()


def test_a_tool_error_fails_the_case_unless_the_case_expects_it(
    scripted: FakeProviderServer,
) -> None:
    dataset = Dataset(
        "stock",
        [
            case("unexpected", "nuts", "could not"),
            case("expected", "nuts", "could not", expected_tool_errors=("count",)),
        ],
    )
    app = App(adapter=openai_adapter(scripted), deps=Shelf({"bolts": 12}))

    report = run_evaluation(STOCK, dataset, app, [Contains()])

    unexpected, expected = report.results
    assert unexpected.failed and unexpected.score == 0.0
    assert unexpected.error is not None
    assert unexpected.error.startswith(
        "tool 'count' returned an error: tool 'count' failed with KeyError"
    )
    assert (expected.failed, expected.score) == (False, 1.0)
    assert [call.success for call in expected.tool_calls] == [False]
    assert report.to_json()["results"][0]["tool_calls"][0]["name"] == "count"


def test_a_prompt_without_a_digest_fails_every_case_naming_why_and_sends_nothing(
    scripted: FakeProviderServer, tmp_path: Path
) -> None:
    prompt = stock_prompt(WorkspaceDigestSection(session=Session()))
    app = App(
        adapter=openai_adapter(scripted),
        overrides=LocalPromptOverridesStore(tmp_path / "overrides"),
        deps=Shelf({"bolts": 12}),
    )

    report = run_evaluation(
        prompt, Dataset("stock", [case("bolts", "bolts", "12")]), app, [Contains()]
    )

    [result] = report.results
    assert result.failed and result.placeholder_digest
    assert result.error is not None
    assert "would render the placeholder workspace digest under tag 'latest'" in result.error
    assert scripted.requests == ()


def test_allowing_the_placeholder_digest_runs_the_cases(scripted: FakeProviderServer) -> None:
    prompt = stock_prompt(WorkspaceDigestSection(session=Session()))
    app = App(adapter=openai_adapter(scripted), deps=Shelf({"bolts": 12}))

    report = run_evaluation(
        prompt,
        Dataset("stock", [case("bolts", "bolts", "12")]),
        app,
        [Contains()],
        allow_placeholder_digest=True,
    )

    [result] = report.results
    assert (result.failed, result.placeholder_digest, result.score) == (False, True, 1.0)
    assert report.settings["allow_placeholder_digest"] is True


def test_a_tag_without_a_digest_runs_on_the_projects_digest(
    scripted: FakeProviderServer, tmp_path: Path
) -> None:
    section = WorkspaceDigestSection(session=Session())
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    store.set_shared_section(
        section_key=section.key,
        tag="latest",
        body="A shop with a stock table.",
        expected_hash=section.content_hash,
        source=OverrideAuthor("optimizer", "test-model"),
    )
    app = App(adapter=openai_adapter(scripted), overrides=store, deps=Shelf({"bolts": 12}))

    report = run_evaluation(
        stock_prompt(section),
        Dataset("stock", [case("bolts", "bolts", "12")]),
        app,
        [Contains()],
        tag=["latest", "candidate"],
    )

    assert [(r.override_tag, r.failed, r.placeholder_digest) for r in report.results] == [
        ("latest", False, False),
        ("candidate", False, False),
    ]
    assert all("A shop with a stock table." in r.body["instructions"] for r in scripted.requests)
