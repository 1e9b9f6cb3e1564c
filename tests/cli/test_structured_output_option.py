"""Every command that asks a model for structured output can ask in prompt mode, for servers
without JSON-schema output (llama-cpp-python's answers a schema with HTTP 500): with
`--structured-output prompt`, or `structured_output = "prompt"` in `[tool.promptkit]`, no
request carries `response_format` and the command succeeds. Run as real processes against a
fake server that behaves like llama-cpp-python's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from promptkit.testing import FakeProviderServer, RecordedRequest, Reply, ServerProfile

from ..conftest import REPO_FILES, committed_repo, run_promptkit, write_files

PROMPT_MODULE = """
from dataclasses import dataclass

from promptkit import MarkdownSection, Prompt, WorkspaceDigestSection


@dataclass(frozen=True)
class Country:
    name: str


@dataclass(frozen=True)
class Capital:
    capital: str


CAPITAL = Prompt(
    ns="demo",
    key="capital",
    sections=(
        MarkdownSection(
            title="Question",
            key="question",
            params_type=Country,
            template="What is the capital of {{ name }}?",
        ),
    ),
    output_type=Capital,
)


def asker(session, workspace):
    return Prompt(
        ns="demo",
        key="asker",
        sections=(
            MarkdownSection(title="Task", key="task", template="Answer about the project."),
            WorkspaceDigestSection(session=session),
        ),
        output_type=Capital,
    )
"""

GROUNDED_DIGEST = "## Layout\n- `src/demo/`: the package\n\n## Tooling\n- Test: `make test`\n"


def _answer(request: RecordedRequest) -> Reply:
    if "Optimization Goal" in str(request.body.get("messages")):
        return Reply.json({"digest": GROUNDED_DIGEST})
    return Reply.json({"capital": "Paris"})


@pytest.fixture
def llama_cpp_python() -> Iterator[FakeProviderServer]:
    with FakeProviderServer(profile=ServerProfile.llama_cpp_python()) as server:
        server.respond_with(_answer)
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    committed_repo(tmp_path, REPO_FILES)
    write_files(
        tmp_path,
        {
            "demo_prompts.py": PROMPT_MODULE,
            "evals/capital.jsonl": '{"id": "fr", "params": {"name": "France"},'
            ' "expected": {"capital": "Paris"}}\n',
        },
    )
    return tmp_path


def _server_options(server: FakeProviderServer) -> tuple[str, ...]:
    return ("--base-url", server.openai_base_url, "--model", "qwen2.5-coder-0.5b-instruct")


COMMANDS: dict[str, tuple[str, ...]] = {
    "eval": ("eval", "demo_prompts:CAPITAL"),
    "optimize": ("optimize", ".", "--state-dir", "state"),
    "repl": ("repl", ".", "--prompt", "demo_prompts:asker", "--state-dir", "state"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_structured_output_prompt_sends_no_schema_from_the_command_line(
    command: str, project: Path, llama_cpp_python: FakeProviderServer
) -> None:
    words = COMMANDS[command]
    finished = run_promptkit(
        *words,
        *_server_options(llama_cpp_python),
        "--structured-output",
        "prompt",
        cwd=project,
        stdin="ask what is the capital?\n" if command == "repl" else None,
    )

    assert finished.returncode == 0, finished.stderr
    assert llama_cpp_python.request_count >= 1
    assert not any("response_format" in request.body for request in llama_cpp_python.requests)


def test_structured_output_prompt_is_read_from_the_project_table(
    project: Path, llama_cpp_python: FakeProviderServer
) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n\n[tool.promptkit]\nstructured_output = "prompt"\n',
        encoding="utf-8",
    )

    finished = run_promptkit(
        "eval", "demo_prompts:CAPITAL", *_server_options(llama_cpp_python), cwd=project
    )

    assert finished.returncode == 0, finished.stderr
    assert not any("response_format" in request.body for request in llama_cpp_python.requests)


def test_native_mode_falls_back_after_one_refused_request(
    project: Path, llama_cpp_python: FakeProviderServer
) -> None:
    finished = run_promptkit(
        "eval", "demo_prompts:CAPITAL", *_server_options(llama_cpp_python), cwd=project
    )

    assert finished.returncode == 0, finished.stderr
    with_schema = [
        request for request in llama_cpp_python.requests if "response_format" in request.body
    ]
    assert len(with_schema) == 1
    assert "structured_output_fallback" in finished.stderr
