"""Fixtures for the FakeProviderServer tests: the real SDK clients pointed at the shared running
server (`server`, from tests/conftest.py) with strict response validation, so a reply the SDKs
would not accept fails the test.

Tests use `client.api_key` to know the key; Anthropic tests use claude-haiku-4-5 because the SDK
warns on every call to a model in its deprecated list.
"""

from collections.abc import Iterator

import anthropic
import openai
import pytest

from promptkit.testing import FakeProviderServer

OPENAI_KEY = "sk-test-openai-0123456789"
ANTHROPIC_KEY = "sk-ant-test-0123456789"
# Far above any reply the tests do not delay on purpose, far below pytest's own timeout.
CLIENT_TIMEOUT = 10.0


@pytest.fixture
def openai_client(server: FakeProviderServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        api_key=OPENAI_KEY,
        base_url=server.openai_base_url,
        max_retries=0,
        timeout=CLIENT_TIMEOUT,
        _strict_response_validation=True,
    ) as client:
        yield client


@pytest.fixture
def anthropic_client(server: FakeProviderServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        api_key=ANTHROPIC_KEY,
        base_url=server.anthropic_base_url,
        max_retries=0,
        timeout=CLIENT_TIMEOUT,
        _strict_response_validation=True,
    ) as client:
        yield client
