"""Many requests at once through the async SDK clients: each is answered, and answered right."""

import asyncio

import anthropic
import openai

from promptkit.testing import FakeProviderServer, RecordedRequest, Reply


def _answer_by_question(request: RecordedRequest) -> Reply:
    body = request.body
    question = body["messages"][-1]["content"] if request.endpoint == "messages" else body["input"]
    return Reply.text(f"answer to {question}")


async def _ask_both_apis_at_once(server: FakeProviderServer, count: int) -> list[str]:
    async with (
        openai.AsyncOpenAI(
            api_key="sk-test",
            base_url=server.openai_base_url,
            max_retries=0,
            timeout=10.0,
            _strict_response_validation=True,
        ) as openai_client,
        anthropic.AsyncAnthropic(
            api_key="sk-ant-test",
            base_url=server.anthropic_base_url,
            max_retries=0,
            timeout=10.0,
            _strict_response_validation=True,
        ) as anthropic_client,
    ):

        async def ask_openai(n: int) -> str:
            response = await openai_client.responses.create(
                model="gpt-4.1-mini", input=f"openai question {n}"
            )
            return response.output_text

        async def ask_anthropic(n: int) -> str:
            message = await anthropic_client.messages.create(
                model="claude-haiku-4-5",
                max_tokens=32,
                messages=[{"role": "user", "content": f"anthropic question {n}"}],
            )
            block = message.content[0]
            assert block.type == "text"
            return block.text

        return list(
            await asyncio.gather(
                *(ask_openai(n) for n in range(count)),
                *(ask_anthropic(n) for n in range(count)),
            )
        )


def test_twenty_concurrent_requests_per_async_client_each_get_their_own_answer(
    server: FakeProviderServer,
) -> None:
    server.respond_with(_answer_by_question)

    answers = asyncio.run(_ask_both_apis_at_once(server, 20))

    assert answers == [f"answer to openai question {n}" for n in range(20)] + [
        f"answer to anthropic question {n}" for n in range(20)
    ]
    assert server.request_count == 40


def test_concurrent_requests_take_each_queued_reply_exactly_once(
    server: FakeProviderServer,
) -> None:
    scripted = [f"reply {n}" for n in range(40)]
    server.enqueue(*(Reply.text(text) for text in scripted))

    answers = asyncio.run(_ask_both_apis_at_once(server, 20))

    assert sorted(answers) == sorted(scripted)
    assert server.pending_count == 0
    assert len({r.request_id for r in server.requests}) == 40
