"""Starting and stopping FakeProviderServer: no thread, socket or delayed reply outlives stop()."""

import subprocess
import sys
import textwrap
import threading
import time

import openai
import pytest

from promptkit.testing import FakeProviderServer, Reply


def _wait_for_requests(server: FakeProviderServer, count: int) -> None:
    deadline = time.monotonic() + 10
    while server.request_count < count:
        assert time.monotonic() < deadline, f"the server never received {count} request(s)"
        time.sleep(0.005)


def test_stop_joins_every_server_thread_despite_idle_keepalive_connections() -> None:
    threads_before = set(threading.enumerate())
    server = FakeProviderServer().start()
    server.enqueue(*(Reply.text("ok") for _ in range(3)))
    with openai.OpenAI(api_key="sk-test", base_url=server.openai_base_url, max_retries=0) as client:
        for _ in range(3):
            client.responses.create(model="gpt-4.1-mini", input="x")

        # The client still holds its pooled keep-alive connection open here.
        server.stop()

        assert set(threading.enumerate()) - threads_before == set()


def test_stop_cuts_short_a_reply_that_is_still_delayed() -> None:
    server = FakeProviderServer().start()
    server.enqueue(Reply.delay(600.0, Reply.text("never sent")))
    outcome: list[BaseException] = []

    def call() -> None:
        with openai.OpenAI(
            api_key="sk-test", base_url=server.openai_base_url, max_retries=0, timeout=60.0
        ) as client:
            try:
                client.responses.create(model="gpt-4.1-mini", input="x")
            except openai.APIConnectionError as exc:
                outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    _wait_for_requests(server, 1)

    stopper = threading.Thread(target=server.stop)
    stopper.start()
    stopper.join(timeout=30)
    caller.join(timeout=30)

    assert not stopper.is_alive()
    assert not caller.is_alive()
    assert len(outcome) == 1


def test_shutdown_leaves_no_resource_warning_and_no_thread(tmp_path: object) -> None:
    script = textwrap.dedent(
        """
        import asyncio, threading
        import anthropic, openai
        from promptkit.testing import FakeProviderServer, Reply

        async def main(server):
            async with openai.AsyncOpenAI(
                api_key="sk-test", base_url=server.openai_base_url, max_retries=0
            ) as client:
                await asyncio.gather(
                    *(client.responses.create(model="gpt-4.1-mini", input="x") for _ in range(5))
                )

        with FakeProviderServer() as server:
            server.enqueue(*(Reply.text("ok") for _ in range(6)))
            server.enqueue(Reply.delay(30.0, Reply.text("late")))
            asyncio.run(main(server))
            with anthropic.Anthropic(
                api_key="sk-ant", base_url=server.anthropic_base_url, max_retries=0, timeout=0.1
            ) as client:
                client.messages.create(
                    model="claude-haiku-4-5", max_tokens=8,
                    messages=[{"role": "user", "content": "x"}],
                )
                try:
                    client.messages.create(
                        model="claude-haiku-4-5", max_tokens=8,
                        messages=[{"role": "user", "content": "x"}],
                    )
                except anthropic.APITimeoutError:
                    pass
        assert threading.active_count() == 1, threading.enumerate()
        print("clean")
        """
    )

    finished = subprocess.run(
        [sys.executable, "-W", "error", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert (finished.returncode, finished.stdout, finished.stderr) == (0, "clean\n", "")


def test_url_of_a_server_that_is_not_running_is_refused() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = FakeProviderServer().openai_base_url


def test_stopped_server_cannot_be_started_again() -> None:
    server = FakeProviderServer().start()
    server.stop()

    with pytest.raises(RuntimeError, match="create a new FakeProviderServer"):
        server.start()


def test_stopping_twice_is_harmless() -> None:
    server = FakeProviderServer().start()

    server.stop()
    server.stop()

    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url
