"""Fixtures for the evaluation tests: a small capital-city prompt with one params type and a
structured variant, an overrides store with a `candidate` tag, and an OpenAI adapter on the
real SDK pointed at the shared FakeProviderServer (`server`)."""

import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, TextSection
from promptkit.adapters import OpenAIAdapter
from promptkit.overrides import LocalPromptOverridesStore
from promptkit.testing import FakeProviderServer

OPENAI_KEY = "sk-test-evals-0123456789abcdefghijklmnop"
CANDIDATE_WORDING = "Reply with the capital city only, in one word."


@dataclass(frozen=True)
class Country:
    name: str
    continent: str = "Europe"


class CapitalAnswer(BaseModel):
    capital: str
    confidence: float


def capital_prompt() -> Prompt[None]:
    return Prompt(
        ns="tests.evals",
        key="capital",
        sections=(
            TextSection(title="Role", key="role", text="You answer geography questions."),
            MarkdownSection(
                title="Question",
                key="question",
                params_type=Country,
                template="What is the capital of {{ name }} ({{ continent }})?",
            ),
        ),
    )


def structured_prompt() -> Prompt[CapitalAnswer]:
    return Prompt(
        ns="tests.evals",
        key="capital-structured",
        sections=(
            MarkdownSection(
                title="Question",
                key="question",
                params_type=Country,
                template="What is the capital of {{ name }}?",
            ),
        ),
        output_type=CapitalAnswer,
    )


CAPITAL_PROMPT = capital_prompt()
STRUCTURED_PROMPT = structured_prompt()


def openai_adapter(server: FakeProviderServer) -> OpenAIAdapter:
    return OpenAIAdapter(
        model="gpt-4.1-mini",
        client_kwargs={
            "api_key": OPENAI_KEY,
            "base_url": server.openai_base_url,
            "max_retries": 0,
            "timeout": 10.0,
        },
    )


@pytest.fixture
def adapter(server: FakeProviderServer) -> Iterator[OpenAIAdapter]:
    yield openai_adapter(server)


@pytest.fixture
def store(tmp_path: Path) -> LocalPromptOverridesStore:
    """An overrides store whose `candidate` tag rewords the role section of CAPITAL_PROMPT."""
    overrides = LocalPromptOverridesStore(tmp_path / "overrides")
    overrides.set_section_override(
        CAPITAL_PROMPT, tag="candidate", path="role", body=CANDIDATE_WORDING
    )
    return overrides


def sigint_as_from_a_terminal() -> None:
    """For a child process (`preexec_fn`) that must take Ctrl-C as a terminal delivers it.

    A test runner started in the background (`make test &`, a CI job under nohup) inherits
    SIGINT ignored, passes that on to its children, and Python then never raises
    KeyboardInterrupt: the child would not see the signal the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def terminal_sigint() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process for the test, whatever the runner
    inherited (see `sigint_as_from_a_terminal`)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
