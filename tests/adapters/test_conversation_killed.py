"""A conversation turn is saved whole or not at all: a child process evaluates with a session
conversation, its tool calls and their results, attached to a SessionStore, and kills itself
(SIGKILL) right after its Nth session event is recorded, for every N until the evaluation
completes. Each time the stored session loads with the turn whole or absent, never an
assistant message whose tool calls lack results, and the next turn is accepted by the fake
server, which refuses unanswered calls as the real APIs do."""

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import openai

from promptkit.adapters import Message, OpenAIAdapter, conversation_messages
from promptkit.session import SessionStore
from promptkit.testing import FakeProviderServer, RecordedRequest, Reply, ToolCall

CITIES = ("Oslo", "Rome", "Lima")

CHILD = """
import os
import signal
import sys
from pathlib import Path

import openai
from pydantic import BaseModel

from promptkit import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from promptkit.adapters import OpenAIAdapter
from promptkit.session import Session, SessionStore


class City(BaseModel):
    city: str


def weather(params: City, context: ToolContext) -> ToolResult:
    return ToolResult(message=f"sunny in {params.city}")


PROMPT = Prompt(
    ns="tests/killed",
    key="chat",
    sections=(
        MarkdownSection(
            title="Task",
            key="task",
            template="Answer questions about the weather.",
            tools=(
                Tool(name="weather", description="Weather.", params_type=City, handler=weather),
            ),
        ),
    ),
)


def main(base_url, state, workspace, kill_at):
    recorded = 0

    def count(event):
        nonlocal recorded
        recorded += 1
        if recorded == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    adapter = OpenAIAdapter(model="gpt-4.1-mini", client=client, api="chat")
    with SessionStore(state_root=state) as store:
        session = Session(session_id="killed")
        store.attach(session, workspace)
        session.subscribe(count)
        adapter.evaluate(
            PROMPT, session=session, user_message="Weather in three cities?", conversation="chat"
        )
    print(f"done after {recorded} events", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
"""
MAX_EVENTS = 40


def _reply(request: RecordedRequest) -> Reply:
    """Tool calls first, then the answer once their results came back; then the next turn's."""
    messages = request.body.get("messages", [])
    if any(message.get("content") == "And tomorrow?" for message in messages):
        return Reply.text("Sunny again.")
    if any(message.get("role") == "tool" for message in messages):
        return Reply.text("Sunny everywhere.")
    return Reply.tool_calls(*(ToolCall("weather", {"city": city}) for city in CITIES))


def test_a_conversation_killed_while_it_is_saved_loads_without_dangling_tool_calls(
    tmp_path: Path, server: FakeProviderServer
) -> None:
    script = tmp_path / "conversation_child.py"
    script.write_text(CHILD, encoding="utf-8")
    prompt = _child_module(script).PROMPT
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    server.respond_with(_reply)
    outcomes: list[int] = []

    for kill_at in range(1, MAX_EVENTS + 1):
        state = tmp_path / f"state-{kill_at}"
        ran = subprocess.run(
            [
                sys.executable,
                str(script),
                server.openai_base_url,
                str(state),
                str(workspace),
                str(kill_at),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        with SessionStore(state_root=state) as store:
            session = store.load(workspace, "killed")
            kept = conversation_messages(session, "chat")
            assert [message.role for message in kept] in (
                [],
                ["user", "assistant", *["tool"] * len(CITIES), "assistant"],
            ), kill_at
            outcomes.append(len(kept))
            client = openai.OpenAI(api_key="sk-test", base_url=server.openai_base_url)
            with client:
                adapter = OpenAIAdapter(model="gpt-4.1-mini", client=client, api="chat")
                answer = adapter.evaluate(
                    prompt, session=session, user_message="And tomorrow?", conversation="chat"
                )
            assert answer.messages[-1] == Message.assistant("Sunny again.")
        if ran.returncode == 0:
            assert ran.stdout.startswith("done after"), ran.stderr
            break
        assert ran.returncode == -9, ran.stderr
    else:
        raise AssertionError(f"the evaluation did not complete within {MAX_EVENTS} events")

    # Killed before the turn's one event: nothing of it; after: all of it.
    assert 0 in outcomes and len(CITIES) + 3 in outcomes
    assert outcomes == sorted(outcomes)


def _child_module(script: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("conversation_child", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
