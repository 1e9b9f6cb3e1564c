"""`AnthropicAdapter`: prompts on Anthropic's Messages API.

The rendered prompt is the system block, marked `cache_control: ephemeral` so the tools and the
system text (the prompt's stable prefix) are a prompt-caching breakpoint. Structured output uses
the Messages API's native `output_config.format` when the output schema can be shaped into what
Anthropic's constrained decoding accepts (`promptkit.adapters.schema`: an object root, every
object closable, unsupported bounds moved into descriptions, at most 16 union-typed and 24
optional parameters, no recursion); otherwise, or with `structured_output="prompt"` (for models
without structured outputs), the prompt's "Response Format" section alone asks for the JSON.
Either way the reply is validated into the output type.

The `anthropic` package is imported only when a client is built or an error is translated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from promptkit.adapters.base import WireAdapter
from promptkit.adapters.clients import ClientPair
from promptkit.adapters.cost import PriceTable
from promptkit.adapters.local_servers import with_local_server_key, with_schema_hint
from promptkit.adapters.provider_errors import client_secrets, scrub, translate_sdk_error
from promptkit.adapters.request_types import declared_only
from promptkit.adapters.response import TokenUsage
from promptkit.adapters.schema import shape_for_strict
from promptkit.adapters.schema_rules import ANTHROPIC_STRICT, check_tool_names
from promptkit.adapters.settings import ModelSettings
from promptkit.adapters.wire import (
    ModelTurn,
    ReplyShape,
    RequestedToolCall,
    ToolReply,
    WireCodec,
    WireConversation,
    WireReply,
    aparsed_reply,
    normalised_finish_reason,
    parsed_reply,
    timeout_option,
)
from promptkit.clock import SYSTEM_CLOCK, Clock
from promptkit.errors import ArgumentValueError, PromptkitError, ProviderAuthenticationError
from promptkit.prompt import RenderedPrompt, output_schema

if TYPE_CHECKING:
    import anthropic

StructuredOutputMode = Literal["native", "prompt"]

# Stop reasons of a reply that ended before the model finished it.
_CUT_OFF = frozenset({"max_tokens", "model_context_window_exceeded"})


class AnthropicAdapter(WireAdapter):
    """Runs prompts on Anthropic's Messages API.

    `client` is a ready `anthropic.Anthropic` for `evaluate`, `async_client` an
    `anthropic.AsyncAnthropic` for `aevaluate`. When neither is given, clients are built on first
    use as `anthropic.Anthropic(**client_kwargs)`, so `ANTHROPIC_API_KEY` applies; when one is
    given the adapter builds none. `max_tokens` caps each reply.
    """

    def __init__(
        self,
        *,
        model: str,
        client: anthropic.Anthropic | None = None,
        async_client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = 4096,
        client_kwargs: Mapping[str, Any] | None = None,
        structured_output: StructuredOutputMode = "native",
        settings: ModelSettings | None = None,
        prices: PriceTable | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        super().__init__(settings=settings, prices=prices)
        if not isinstance(model, str) or not model.strip():
            raise ArgumentValueError(
                f"AnthropicAdapter: model must be a non-empty string, got {model!r}"
            )
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ArgumentValueError(
                f"AnthropicAdapter: max_tokens must be an int >= 1, got {max_tokens!r}"
            )
        if structured_output not in ("native", "prompt"):
            raise ArgumentValueError(
                "AnthropicAdapter: structured_output must be 'native' or 'prompt',"
                f" got {structured_output!r}"
            )
        self._model = model
        self.clock = clock
        self._max_tokens = max_tokens
        self._structured_output: StructuredOutputMode = structured_output
        self._clients = ClientPair(
            "AnthropicAdapter", client, async_client, client_kwargs, _build_anthropic_client
        )

    @property
    def provider(self) -> str:
        return "anthropic"

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"AnthropicAdapter(model={self._model!r}, max_tokens={self._max_tokens})"

    def wire_codec(self) -> WireCodec:
        return MessagesCodec(
            self._model, self._max_tokens, native_output=self._structured_output == "native"
        )

    def sync_client(self) -> anthropic.Anthropic:
        client: anthropic.Anthropic = self._clients.sync_client()
        return client

    def async_client(self) -> anthropic.AsyncAnthropic:
        client: anthropic.AsyncAnthropic = self._clients.async_client()
        return client

    async def aclose_loop_client(self) -> None:
        await self._clients.aclose_loop_client()

    def translate_error(
        self, error: BaseException, *, client: Any, where: str
    ) -> PromptkitError | None:
        import anthropic

        translated = translate_sdk_error(
            error,
            sdk=anthropic,
            base_error=anthropic.AnthropicError,
            where=where,
            secrets=client_secrets(client),
        )
        asks_for_schema = self._structured_output == "native"
        return with_schema_hint(
            translated, asks_for_schema=asks_for_schema, adapter="AnthropicAdapter"
        )


def _build_anthropic_client(kwargs: Mapping[str, Any], *, sync: bool) -> Any:
    import anthropic

    factory = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
    kwargs = with_local_server_key(
        kwargs, key_variable="ANTHROPIC_API_KEY", url_variable="ANTHROPIC_BASE_URL"
    )
    try:
        return factory(**kwargs)
    except anthropic.AnthropicError as error:
        raise ProviderAuthenticationError(
            f"AnthropicAdapter could not build an Anthropic client: {scrub(str(error), ())}"
            " (set ANTHROPIC_API_KEY, or pass client_kwargs={'api_key': ...} or client=...)"
        ) from None


def output_config(output_type: Any) -> dict[str, Any] | None:
    """`output_config` asking for `output_type`'s schema shaped for Anthropic's constrained
    decoding, or None when it cannot be (the prompt's "Response Format" section asks instead)."""
    name = getattr(output_type, "__name__", None) or "output"
    shaped = shape_for_strict(output_schema(output_type), ANTHROPIC_STRICT, name=name)
    if not shaped.strict:
        return None
    return {"format": {"type": "json_schema", "schema": shaped.schema}}


@dataclass(frozen=True)
class MessagesCodec(WireCodec):
    """Anthropic Messages: a cached system block, `tool_use` and `tool_result` content blocks."""

    model: str
    max_tokens: int
    native_output: bool
    api = "messages"

    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        check_tool_names(tuple(tool.name for tool in rendered.tools), ANTHROPIC_STRICT)
        fixed: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens}
        if rendered.text:
            fixed["system"] = [
                {"type": "text", "text": rendered.text, "cache_control": {"type": "ephemeral"}}
            ]
        if rendered.tools:
            fixed["tools"] = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters_schema,
                }
                for tool in rendered.tools
            ]
        config = (
            output_config(rendered.output_type)
            if self.native_output and rendered.output_type is not None
            else None
        )
        if config is not None:
            fixed["output_config"] = config
        return WireConversation(fixed, "messages", ({"role": "user", "content": user_message},))

    def read(self, response: Any) -> ModelTurn:
        blocks = response.content
        truncated = response.stop_reason in _CUT_OFF
        calls = tuple(
            RequestedToolCall(
                block.id,
                block.name,
                block.input,
                # A reply cut off inside a tool_use block ends with it.
                truncated=truncated and block is blocks[-1],
            )
            for block in blocks
            if block.type == "tool_use"
        )
        text = "".join(block.text for block in blocks if block.type == "text")
        refused = response.stop_reason == "refusal"
        usage = response.usage
        return ModelTurn(
            text=text,
            tool_calls=calls,
            usage=TokenUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cache_read_input_tokens,
                cache_write_tokens=usage.cache_creation_input_tokens,
            ),
            finish_reason=normalised_finish_reason(
                truncated_by="length" if truncated else None,
                refused=refused,
                called_tools=bool(calls),
            ),
            refusal=(text or None) if refused else None,
            model=response.model,
            replay=partial(_replayed_message, blocks),
        )

    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        # Every result of one turn goes back in a single user message, as the API requires.
        return [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": reply.call.call_id,
                        "content": reply.message,
                        "is_error": reply.is_error,
                    }
                    for reply in replies
                ],
            }
        ]

    def send_method(self, client: Any) -> Any:
        return client.messages.with_raw_response.create

    def create(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> WireReply:
        raw = self.send_method(client)(**request, **timeout_option(timeout))
        return parsed_reply(raw, _messages_shape())

    async def acreate(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> WireReply:
        raw = await self.send_method(client)(**request, **timeout_option(timeout))
        return await aparsed_reply(raw, _messages_shape())


def _messages_shape() -> ReplyShape:
    from anthropic.types import Message

    return ReplyShape("messages", Message, ("content",))


def _replayed_message(blocks: Sequence[Any]) -> tuple[Mapping[str, Any], ...]:
    from anthropic.types import ContentBlockParam

    content = [declared_only(block.to_dict(mode="json"), ContentBlockParam) for block in blocks]
    return ({"role": "assistant", "content": content},)
