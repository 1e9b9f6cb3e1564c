"""choose_adapter's reason shows a base URL without the credentials it may carry, while the SDK
client is given the URL exactly as passed."""

from __future__ import annotations

from promptkit.adapters import AnthropicAdapter, OpenAIAdapter, choose_adapter

URL_KEY = "sk-proj-FakeUrlKey0123456789abcdefGHIJ"
URL_TOKEN = "tok3nV4lueFake99"


def test_reason_shows_a_base_url_without_its_query_and_fragment() -> None:
    base_url = f"http://127.0.0.1:9/v1?key={URL_KEY}#{URL_KEY}"

    choice = choose_adapter(environ={}, model="served-model", base_url=base_url)

    assert URL_KEY not in choice.reason
    assert "at http://127.0.0.1:9/v1 (Chat Completions)" in choice.reason


def test_reason_shows_a_base_url_without_its_user_info() -> None:
    base_url = f"https://user:{URL_TOKEN}@models.test/v1"

    choice = choose_adapter(
        "anthropic", environ={"ANTHROPIC_API_KEY": "x"}, model="served-model", base_url=base_url
    )

    assert URL_TOKEN not in choice.reason
    assert "user" not in choice.reason
    assert choice.reason.endswith("at https://models.test/v1")


def test_reason_redacts_a_key_written_into_the_base_url_path() -> None:
    choice = choose_adapter(
        environ={}, model="served-model", base_url=f"http://127.0.0.1:9/{URL_KEY}/v1"
    )

    assert URL_KEY not in choice.reason
    assert "http://127.0.0.1:9/[REDACTED:openai-project-key]/v1" in choice.reason


def test_sdk_client_gets_the_base_url_with_its_query_unchanged() -> None:
    choice = choose_adapter(
        environ={}, model="served-model", base_url=f"http://127.0.0.1:9/v1?key={URL_KEY}"
    )

    assert isinstance(choice.adapter, OpenAIAdapter)
    assert choice.adapter.sync_client().base_url.query == f"key={URL_KEY}".encode()


def test_sdk_client_gets_the_base_url_with_its_user_info_unchanged() -> None:
    choice = choose_adapter(
        "anthropic",
        environ={"ANTHROPIC_API_KEY": "x"},
        model="served-model",
        base_url=f"https://user:{URL_TOKEN}@models.test/v1",
    )

    assert isinstance(choice.adapter, AnthropicAdapter)
    url = choice.adapter.sync_client().base_url
    assert (url.username, url.password) == ("user", URL_TOKEN)
