"""How adapters get their SDK clients: built lazily from the environment, or given; and the
package imports no SDK until one is needed.
"""

import json
import subprocess
import sys

import openai
import pytest

from promptkit import MarkdownSection, Prompt
from promptkit.adapters import AnthropicAdapter, OpenAIAdapter
from promptkit.errors import ProviderAuthenticationError
from promptkit.session import Session
from promptkit.testing import FakeProviderServer, Reply

PROMPT: Prompt[None] = Prompt(
    ns="tests/adapters",
    key="clients",
    sections=(MarkdownSection(title="Task", key="task", template="Say hello."),),
)


def test_importing_the_adapters_imports_no_provider_sdk() -> None:
    code = (
        "import json, sys\nimport promptkit.adapters\n"
        "print(json.dumps(sorted(m for m in ('openai', 'anthropic') if m in sys.modules)))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )

    assert json.loads(completed.stdout) == []


def test_openai_client_is_built_from_the_environment_on_first_use(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-from-environment-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    server.enqueue(Reply.text("hello"))
    adapter = OpenAIAdapter(
        model="gpt-4.1-mini", client_kwargs={"max_retries": 0, "_strict_response_validation": True}
    )

    response = adapter.evaluate(PROMPT, session=Session())

    assert response.text == "hello"
    assert server.requests[0].sent_api_key("sk-test-from-environment-0123456789")


def test_anthropic_client_is_built_from_client_kwargs_on_first_use(
    server: FakeProviderServer,
) -> None:
    server.enqueue(Reply.text("hello"))
    adapter = AnthropicAdapter(
        model="claude-haiku-4-5",
        client_kwargs={
            "api_key": "sk-ant-test-from-kwargs-0123456789",
            "base_url": server.anthropic_base_url,
            "max_retries": 0,
            "_strict_response_validation": True,
        },
    )

    response = adapter.evaluate(PROMPT, session=Session())

    assert response.text == "hello"


def test_missing_openai_key_raises_authentication_error_before_any_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(ProviderAuthenticationError, match="OPENAI_API_KEY"):
        OpenAIAdapter(model="gpt-4.1-mini").evaluate(PROMPT, session=Session(), output_dir=tmp_path)

    assert "ProviderAuthenticationError" in (tmp_path / "manifest.json").read_text()


def test_client_kwargs_with_a_given_client_is_refused(server: FakeProviderServer) -> None:
    client = openai.OpenAI(api_key="sk-test-x", base_url=server.openai_base_url)

    with client, pytest.raises(ValueError, match="pass one or the other"):
        OpenAIAdapter(model="gpt-4.1-mini", client=client, client_kwargs={"timeout": 1})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": ""}, "model must be a non-empty string"),
        ({"model": "m", "api": "completions"}, "api must be 'responses' or 'chat'"),
        ({"model": "m", "structured_output": "tools"}, "structured_output must be"),
    ],
)
def test_openai_adapter_options_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OpenAIAdapter(**options)  # type: ignore[arg-type]


def test_a_client_prepared_ahead_is_the_one_the_first_request_uses(
    server: FakeProviderServer,
) -> None:
    server.enqueue(Reply.text("hello"))
    adapter = OpenAIAdapter(
        model="gpt-4.1-mini",
        client_kwargs={
            "api_key": "sk-test-prepared-ahead-0123456789",
            "base_url": server.openai_base_url,
            "max_retries": 0,
        },
    )

    adapter.prepare_client()
    prepared = adapter.sync_client()
    response = adapter.evaluate(PROMPT, session=Session())

    assert response.text == "hello"
    assert adapter.sync_client() is prepared


def test_preparing_a_client_without_a_key_raises_what_evaluate_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(ProviderAuthenticationError, match="OPENAI_API_KEY"):
        OpenAIAdapter(model="gpt-4.1-mini").prepare_client()
