"""`App` binds an adapter, overrides store and tag, settings, prices and deps once; every call
(`evaluate`, `aevaluate`, `stream`, `astream`, `render`) passes them on, and a call's own
options win."""

import asyncio
from dataclasses import replace
from pathlib import Path

import openai
import pytest
from pydantic import BaseModel

from promptkit import App, MarkdownSection, Prompt, TextSection
from promptkit.adapters import (
    ModelPrice,
    ModelSettings,
    OpenAIAdapter,
    PriceTable,
    ResponseCompleted,
    TextDelta,
    WireAdapter,
)
from promptkit.errors import ArgumentTypeError, ProviderError
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply, ToolCall, Usage

from ..stock import Shelf, count_tool


class Count(BaseModel):
    count: int


PROMPT: Prompt[Count, Shelf] = Prompt(
    ns="tests/app",
    key="stock",
    sections=(
        TextSection(title="Role", key="role", text="You count the stock."),
        MarkdownSection(
            title="Task",
            key="task",
            template="Count the bolts.",
            tools=(count_tool(),),
        ),
    ),
    output_type=Count,
    deps_type=Shelf,
)
SHELF = Shelf({"bolts": 12})


def client_of(server: FakeProviderServer) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test-app", base_url=server.openai_base_url, max_retries=0)


def app_of(server: FakeProviderServer, tmp_path: Path, **binding: object) -> App[Shelf]:
    adapter = OpenAIAdapter(model="gpt-4.1-mini", client=client_of(server))
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    binding.setdefault("deps", SHELF)
    return App(adapter=adapter, overrides=store, **binding)  # type: ignore[arg-type]


def instructions(server: FakeProviderServer, index: int = -1) -> str:
    text = server.requests[index].body["instructions"]
    assert isinstance(text, str)
    return text


def test_evaluate_serves_the_overrides_of_the_apps_tag(
    server: FakeProviderServer, tmp_path: Path
) -> None:
    app = app_of(server, tmp_path, tag="canary")
    assert app.overrides is not None
    app.overrides.set_section_override(PROMPT, tag="canary", path="role", body="Count fast.")
    server.enqueue(Reply.json({"count": 3}))

    response = app.evaluate(PROMPT)

    assert response.output == Count(count=3)
    assert "Count fast." in instructions(server)


def test_a_calls_own_tag_wins_over_the_apps(server: FakeProviderServer, tmp_path: Path) -> None:
    app = app_of(server, tmp_path, tag="canary")
    assert app.overrides is not None
    app.overrides.set_section_override(PROMPT, tag="canary", path="role", body="Count fast.")
    server.enqueue(Reply.json({"count": 3}))

    app.evaluate(PROMPT, overrides_tag="latest")

    assert "You count the stock." in instructions(server)


def test_the_apps_deps_reach_tool_handlers_unless_a_call_passes_its_own(
    server: FakeProviderServer, tmp_path: Path
) -> None:
    app = app_of(server, tmp_path, deps=SHELF)
    server.enqueue(
        Reply.tool_calls(ToolCall("count", {"name": "bolts"})),
        Reply.json({"count": 12}),
        Reply.tool_calls(ToolCall("count", {"name": "bolts"})),
        Reply.json({"count": 5}),
    )

    bound = app.evaluate(PROMPT)
    given = app.evaluate(PROMPT, deps=Shelf({"bolts": 5}))

    assert bound.tool_calls[0].result.message == "12"
    assert given.tool_calls[0].result.message == "5"


def test_the_apps_settings_apply_under_a_calls_own_field_by_field(
    server: FakeProviderServer, tmp_path: Path
) -> None:
    app = app_of(server, tmp_path, settings=ModelSettings(temperature=0.2, max_output_tokens=50))
    server.enqueue(Reply.json({"count": 1}))

    app.evaluate(PROMPT, settings=ModelSettings(max_output_tokens=200))

    body = server.requests[-1].body
    assert (body["temperature"], body["max_output_tokens"]) == (0.2, 200)


def test_the_apps_prices_give_the_cost(server: FakeProviderServer, tmp_path: Path) -> None:
    prices = PriceTable(as_of="2026-01-01", prices={"gpt-4.1-mini": ModelPrice(1.0, 4.0)})
    app = app_of(server, tmp_path, prices=prices)
    usage = Usage(input_tokens=1_000_000, output_tokens=250_000)
    server.enqueue(Reply.json({"count": 1}, usage=usage))

    assert app.evaluate(PROMPT).usage.cost == 2.0


def test_render_applies_the_apps_overrides_and_tag(
    server: FakeProviderServer, tmp_path: Path
) -> None:
    app = app_of(server, tmp_path, tag="canary")
    assert app.overrides is not None
    app.overrides.set_section_override(PROMPT, tag="canary", path="role", body="Count fast.")

    assert "Count fast." in app.render(PROMPT).text
    assert "Count fast." not in app.with_tag("latest").render(PROMPT).text


def test_stream_passes_the_binding_on(server: FakeProviderServer, tmp_path: Path) -> None:
    app = app_of(server, tmp_path, tag="canary")
    assert app.overrides is not None
    app.overrides.set_section_override(PROMPT, tag="canary", path="role", body="Count fast.")
    server.enqueue(Reply.json({"count": 4}))

    events = list(app.stream(PROMPT, session=Session()))

    assert any(isinstance(event, TextDelta) for event in events)
    completed = events[-1]
    assert isinstance(completed, ResponseCompleted)
    assert completed.response.output == Count(count=4)
    assert "Count fast." in instructions(server)


def test_aevaluate_and_astream_pass_the_binding_on(
    server: FakeProviderServer, tmp_path: Path
) -> None:
    store = LocalPromptOverridesStore(tmp_path / "overrides")
    store.set_section_override(PROMPT, tag="canary", path="role", body="Count fast.")
    server.enqueue(Reply.json({"count": 5}), Reply.json({"count": 6}))

    async def run() -> tuple[Count, Count]:
        async with openai.AsyncOpenAI(
            api_key="sk-test-app", base_url=server.openai_base_url, max_retries=0
        ) as client:
            adapter = OpenAIAdapter(model="gpt-4.1-mini", async_client=client)
            app = App(adapter=adapter, overrides=store, tag="canary", deps=SHELF)
            first = await app.aevaluate(PROMPT)
            events = [event async for event in app.astream(PROMPT)]
        last = events[-1]
        assert isinstance(last, ResponseCompleted)
        return first.output, last.response.output

    assert asyncio.run(run()) == (Count(count=5), Count(count=6))
    assert all("Count fast." in instructions(server, index) for index in (0, 1))


def test_an_app_without_a_model_renders_but_a_call_says_how_to_configure_one(
    tmp_path: Path,
) -> None:
    app = App(overrides=LocalPromptOverridesStore(tmp_path / "overrides"), deps=SHELF)

    assert "You count the stock." in app.render(PROMPT).text
    with pytest.raises(ProviderError, match="has no model"):
        app.evaluate(PROMPT)


def test_a_binding_of_the_wrong_type_is_refused_naming_the_field() -> None:
    with pytest.raises(ArgumentTypeError, match=r"App\(overrides=\.\.\.\)"):
        App(overrides="overrides")  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="tag"):
        App(tag="Not A Tag")


def test_replace_changes_one_binding(server: FakeProviderServer, tmp_path: Path) -> None:
    app = app_of(server, tmp_path)

    other = replace(app, tag="canary")

    assert (other.tag, other.adapter, other.overrides) == ("canary", app.adapter, app.overrides)


def test_from_project_binds_what_the_table_configures(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.promptkit]\noverrides = "ops/overrides"\ntag = "prod"\nstate = "ops/state"\n'
        'provider = "openai"\nmodel = "qwen2.5-coder"\nbase_url = "http://127.0.0.1:9/v1"\n',
        encoding="utf-8",
    )

    app = App.from_project(tmp_path, environ={})

    assert isinstance(app.overrides, LocalPromptOverridesStore)
    assert app.overrides.root == tmp_path / "ops" / "overrides"
    assert app.sessions is not None and app.sessions.state_folders == (tmp_path / "ops" / "state",)
    assert app.tag == "prod"
    assert app.adapter is not None
    assert (app.adapter.provider, app.adapter.model) == ("openai", "qwen2.5-coder")


def test_from_project_binds_the_structured_output_mode_of_the_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.promptkit]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "qwen2.5-coder"\n'
        'structured_output = "prompt"\n',
        encoding="utf-8",
    )

    app = App.from_project(tmp_path, environ={})

    assert isinstance(app.adapter, WireAdapter)
    assert not app.adapter.asks_for_schema


def test_from_project_without_a_configured_model_has_none(tmp_path: Path) -> None:
    app = App.from_project(tmp_path, environ={})

    assert app.adapter is None
    assert isinstance(app.overrides, LocalPromptOverridesStore)
    assert app.overrides.root == tmp_path / "overrides"
    assert app.tag == "latest"


def test_from_project_serves_what_an_operator_sets_in_the_projects_folder(
    server: FakeProviderServer, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.promptkit]\noverrides = "ops"\ntag = "prod"\nprovider = "openai"\n'
        f'model = "gpt-4.1-mini"\nbase_url = "{server.openai_base_url}"\n',
        encoding="utf-8",
    )
    app = App.from_project(tmp_path, environ={})
    LocalPromptOverridesStore(tmp_path / "ops").set_section_override(
        PROMPT, tag="prod", path="role", body="Count fast."
    )
    server.enqueue(Reply.json({"count": 1}))

    app.evaluate(PROMPT, deps=Shelf({}))

    assert "Count fast." in str(server.requests[-1].body["messages"][0]["content"])
