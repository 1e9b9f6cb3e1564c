"""`OpenAIAdapter`: prompts on OpenAI through the Responses API, or through Chat Completions for
OpenAI-compatible servers (vLLM, Ollama, llama.cpp server).

The rendered prompt is the system text (Responses `instructions`, a Chat `system` message). Tools
and the output type travel as JSON schemas, shaped for strict mode where they can be
(`promptkit.adapters.schema`: closed objects, `$ref` siblings inlined, unsupported formats and
bounds moved into descriptions) and sent non-strict otherwise, so an optional field is never
silently turned into a required nullable one. An output type whose schema
root is not an object (a list) cannot use the native format and relies on the prompt's
"Response Format" section, as does `structured_output="prompt"`.

The `openai` package is imported only when a client is built or an error is translated.
"""

from __future__ import annotations

import re
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
from promptkit.adapters.schema_rules import OPENAI_STRICT, check_tool_names
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
from promptkit.errors import (
    ArgumentValueError,
    PromptkitError,
    ProviderAuthenticationError,
    ProviderError,
    ProviderServerError,
)
from promptkit.prompt import RenderedPrompt, Tool, output_schema

if TYPE_CHECKING:
    import openai

OpenAIApi = Literal["responses", "chat"]
StructuredOutputMode = Literal["native", "prompt"]

_FORMAT_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


class OpenAIAdapter(WireAdapter):
    """Runs prompts on OpenAI (`api="responses"`) or an OpenAI-compatible server (`api="chat"`).

    `client` is a ready `openai.OpenAI` for `evaluate` and `async_client` an `openai.AsyncOpenAI`
    for `aevaluate`. When neither is given, clients are built on first use as
    `openai.OpenAI(**client_kwargs)` (and `AsyncOpenAI`), so `OPENAI_API_KEY` and
    `OPENAI_BASE_URL` apply. When one is given, the adapter builds none: pass both to use both
    `evaluate` and `aevaluate`. Retries and timeouts are the client's (`max_retries`, `timeout`).
    `store=False` (Responses, for organisations with zero data retention) asks the provider to
    keep nothing, and for the encrypted reasoning content that is then replayed instead of ids.
    """

    def __init__(
        self,
        *,
        model: str,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
        api: OpenAIApi = "responses",
        client_kwargs: Mapping[str, Any] | None = None,
        structured_output: StructuredOutputMode = "native",
        store: bool | None = None,
        settings: ModelSettings | None = None,
        prices: PriceTable | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        super().__init__(settings=settings, prices=prices)
        if not isinstance(model, str) or not model.strip():
            raise ArgumentValueError(
                f"OpenAIAdapter: model must be a non-empty string, got {model!r}"
            )
        if store is not None and not isinstance(store, bool):
            raise ArgumentValueError(
                f"OpenAIAdapter: store must be True, False or None, got {store!r}"
            )
        if api not in ("responses", "chat"):
            raise ArgumentValueError(
                f"OpenAIAdapter: api must be 'responses' or 'chat', got {api!r}"
            )
        if structured_output not in ("native", "prompt"):
            raise ArgumentValueError(
                "OpenAIAdapter: structured_output must be 'native' or 'prompt',"
                f" got {structured_output!r}"
            )
        self._model = model
        self.clock = clock
        self._api: OpenAIApi = api
        self._structured_output: StructuredOutputMode = structured_output
        self._store = store
        self._clients = ClientPair(
            "OpenAIAdapter", client, async_client, client_kwargs, _build_openai_client
        )

    @property
    def provider(self) -> str:
        return "openai"

    @property
    def model(self) -> str:
        return self._model

    @property
    def api(self) -> OpenAIApi:
        """The wire API in use: `responses` or `chat`."""
        return self._api

    def __repr__(self) -> str:
        return f"OpenAIAdapter(model={self._model!r}, api={self._api!r})"

    def wire_codec(self) -> WireCodec:
        native = self._structured_output == "native"
        if self._api == "chat":
            return ChatCompletionsCodec(self._model, native)
        return ResponsesCodec(self._model, native, store=self._store)

    def sync_client(self) -> openai.OpenAI:
        client: openai.OpenAI = self._clients.sync_client()
        return client

    def async_client(self) -> openai.AsyncOpenAI:
        client: openai.AsyncOpenAI = self._clients.async_client()
        return client

    async def aclose_loop_client(self) -> None:
        await self._clients.aclose_loop_client()

    def translate_error(
        self, error: BaseException, *, client: Any, where: str
    ) -> PromptkitError | None:
        import openai

        translated = translate_sdk_error(
            error,
            sdk=openai,
            base_error=openai.OpenAIError,
            where=where,
            secrets=client_secrets(client),
        )
        asks_for_schema = self._structured_output == "native"
        return with_schema_hint(
            translated, asks_for_schema=asks_for_schema, adapter="OpenAIAdapter"
        )


def _build_openai_client(kwargs: Mapping[str, Any], *, sync: bool) -> Any:
    import openai

    factory = openai.OpenAI if sync else openai.AsyncOpenAI
    kwargs = with_local_server_key(
        kwargs, key_variable="OPENAI_API_KEY", url_variable="OPENAI_BASE_URL"
    )
    try:
        return factory(**kwargs)
    except openai.OpenAIError as error:
        raise ProviderAuthenticationError(
            f"OpenAIAdapter could not build an OpenAI client: {scrub(str(error), ())}"
            " (set OPENAI_API_KEY, or pass client_kwargs={'api_key': ...} or client=...)"
        ) from None


# -- wire codecs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class JsonSchemaFormat:
    """A schema as OpenAI's structured output takes it: a name, the schema, and `strict`."""

    name: str
    schema: dict[str, Any]
    strict: bool

    def to_json(self) -> dict[str, Any]:
        """The fields both APIs send, each inside its own envelope."""
        return {"name": self.name, "schema": self.schema, "strict": self.strict}


def output_format(output_type: Any) -> JsonSchemaFormat | None:
    """The native format for `output_type`, or None when the schema root is not an object."""
    schema = output_schema(output_type)
    if schema.get("type") != "object":
        return None
    name = _format_name(output_type)
    shaped = shape_for_strict(schema, OPENAI_STRICT, name=name)
    return JsonSchemaFormat(name, shaped.schema, strict=shaped.strict)


def native_output_format(
    rendered: RenderedPrompt[Any], native_output: bool
) -> JsonSchemaFormat | None:
    """The format to ask for natively: None in prompt mode, without an output type, or when
    the schema does not fit."""
    if not native_output or rendered.output_type is None:
        return None
    return output_format(rendered.output_type)


def function_definition(tool: Tool[Any]) -> dict[str, Any]:
    """A tool as both APIs define a function: name, description, parameters schema and whether
    the schema could be shaped for `strict`."""
    shaped = shape_for_strict(tool.parameters_schema, OPENAI_STRICT, name=tool.name)
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": shaped.schema,
        "strict": shaped.strict,
    }


def _format_name(output_type: Any) -> str:
    name = getattr(output_type, "__name__", None) or "output"
    return _FORMAT_NAME_CHARS.sub("_", name)[:64] or "output"


@dataclass(frozen=True)
class ResponsesCodec(WireCodec):
    """OpenAI Responses: `instructions`, `input` items, function calls and their outputs."""

    model: str
    native_output: bool
    store: bool | None = None
    api = "responses"

    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        check_tool_names(tuple(tool.name for tool in rendered.tools), OPENAI_STRICT)
        fixed: dict[str, Any] = {"model": self.model}
        if self.store is not None:
            fixed["store"] = self.store
        if self.store is False:
            # Nothing is kept server-side, so reasoning items can only be replayed whole.
            fixed["include"] = ["reasoning.encrypted_content"]
        if rendered.text:
            fixed["instructions"] = rendered.text
        if rendered.tools:
            fixed["tools"] = [
                {"type": "function", **function_definition(tool)} for tool in rendered.tools
            ]
        schema_format = native_output_format(rendered, self.native_output)
        if schema_format is not None:
            fixed["text"] = {"format": {"type": "json_schema", **schema_format.to_json()}}
        return WireConversation(
            fixed, "input", ({"role": "user", "content": user_message},), takes_lone_text=True
        )

    def read(self, response: Any) -> ModelTurn:
        failure = response.error
        if response.status == "failed" and failure is not None:
            raise ProviderServerError(
                f"the response {response.id!r} failed: {failure.code}: {failure.message}",
                request_id=getattr(response, "_request_id", None),
            )
        incomplete = response.status == "incomplete"
        function_calls = [item for item in response.output if item.type == "function_call"]
        calls = tuple(
            RequestedToolCall(
                item.call_id,
                item.name,
                item.arguments,
                # An incomplete response ends inside its last item.
                truncated=incomplete
                and (item.status == "incomplete" or item is function_calls[-1]),
            )
            for item in function_calls
        )
        refusal = "".join(
            part.refusal
            for item in response.output
            if item.type == "message"
            for part in item.content
            if part.type == "refusal"
        )
        reason = response.incomplete_details.reason if response.incomplete_details else None
        return ModelTurn(
            text=response.output_text,
            tool_calls=calls,
            usage=responses_usage(response.usage),
            finish_reason=normalised_finish_reason(
                truncated_by=("content_filter" if reason == "content_filter" else "length")
                if incomplete
                else None,
                refused=bool(refusal),
                called_tools=bool(calls),
            ),
            refusal=refusal or None,
            model=response.model,
            replay=partial(_replayed_items, response.output),
        )

    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        return [
            {"type": "function_call_output", "call_id": reply.call.call_id, "output": reply.message}
            for reply in replies
        ]

    def send_method(self, client: Any) -> Any:
        return client.responses.with_raw_response.create

    def create(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> WireReply:
        raw = self.send_method(client)(**request, **timeout_option(timeout))
        return parsed_reply(raw, _responses_shape())

    async def acreate(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> WireReply:
        raw = await self.send_method(client)(**request, **timeout_option(timeout))
        return await aparsed_reply(raw, _responses_shape())


@dataclass(frozen=True)
class ChatCompletionsCodec(WireCodec):
    """OpenAI Chat Completions: system and user messages, `tool_calls`, `tool` messages."""

    model: str
    native_output: bool
    api = "chat"

    def start(self, rendered: RenderedPrompt[Any], user_message: str) -> WireConversation:
        check_tool_names(tuple(tool.name for tool in rendered.tools), OPENAI_STRICT)
        fixed: dict[str, Any] = {"model": self.model}
        if rendered.tools:
            fixed["tools"] = [
                {"type": "function", "function": function_definition(tool)}
                for tool in rendered.tools
            ]
        schema_format = native_output_format(rendered, self.native_output)
        if schema_format is not None:
            fixed["response_format"] = {
                "type": "json_schema",
                "json_schema": schema_format.to_json(),
            }
        messages: list[Mapping[str, Any]] = []
        if rendered.text:
            messages.append({"role": "system", "content": rendered.text})
        messages.append({"role": "user", "content": user_message})
        return WireConversation(fixed, "messages", tuple(messages))

    def read(self, response: Any) -> ModelTurn:
        if not response.choices:
            raise ProviderError(
                f"the chat completion {response.id!r} has no choices; the server answered"
                " without a message"
            )
        choice = response.choices[0]
        message = choice.message
        function_calls = [call for call in message.tool_calls or () if call.type == "function"]
        truncated = choice.finish_reason in ("length", "content_filter")
        calls = tuple(
            RequestedToolCall(
                call.id,
                call.function.name,
                call.function.arguments,
                truncated=truncated and call is function_calls[-1],
            )
            for call in function_calls
        )
        replayed: dict[str, Any] = {"role": "assistant", "content": message.content}
        if function_calls:
            replayed["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
                for call in function_calls
            ]
        return ModelTurn(
            text=message.content or "",
            tool_calls=calls,
            usage=chat_usage(response.usage),
            model=response.model,
            replay=lambda: (replayed,),
            finish_reason=normalised_finish_reason(
                truncated_by=choice.finish_reason if truncated else None,
                refused=bool(message.refusal),
                called_tools=bool(calls),
            ),
            refusal=message.refusal or None,
        )

    def tool_results(self, replies: Sequence[ToolReply]) -> list[Mapping[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": reply.call.call_id, "content": reply.message}
            for reply in replies
        ]

    def send_method(self, client: Any) -> Any:
        return client.chat.completions.with_raw_response.create

    def create(self, client: Any, request: Mapping[str, Any], timeout: float | None) -> WireReply:
        raw = self.send_method(client)(**request, **timeout_option(timeout))
        return parsed_reply(raw, _chat_shape())

    async def acreate(
        self, client: Any, request: Mapping[str, Any], timeout: float | None
    ) -> WireReply:
        raw = await self.send_method(client)(**request, **timeout_option(timeout))
        return await aparsed_reply(raw, _chat_shape())


def responses_usage(usage: Any) -> TokenUsage:
    """A Responses `usage` object as `TokenUsage` (all None when the reply carried none)."""
    return _usage(usage, "input", "output")


def chat_usage(usage: Any) -> TokenUsage:
    """A Chat Completions `usage` object as `TokenUsage`."""
    return _usage(usage, "prompt", "completion")


def _usage(usage: Any, sent: str, received: str) -> TokenUsage:
    # The two APIs report the same counts under `input`/`output` and `prompt`/`completion`.
    if usage is None:
        return TokenUsage()
    cached = getattr(usage, f"{sent}_tokens_details", None)
    reasoning = getattr(usage, f"{received}_tokens_details", None)
    return TokenUsage(
        input_tokens=getattr(usage, f"{sent}_tokens"),
        output_tokens=getattr(usage, f"{received}_tokens"),
        cached_tokens=getattr(cached, "cached_tokens", None),
        cache_write_tokens=getattr(cached, "cache_write_tokens", None),
        reasoning_tokens=getattr(reasoning, "reasoning_tokens", None),
    )


def _responses_shape() -> ReplyShape:
    from openai.types.responses import Response

    return ReplyShape("responses", Response, ("output",))


def _chat_shape() -> ReplyShape:
    from openai.types.chat import ChatCompletion

    return ReplyShape("chat", ChatCompletion, ("choices",))


def _replayed_items(output: Sequence[Any]) -> tuple[Mapping[str, Any], ...]:
    # The documented way to continue without server-side state: send the output back, as the
    # request declares input items (a response item may carry more).
    from openai.types.responses import ResponseInputItemParam

    return tuple(
        declared_only(item.to_dict(mode="json"), ResponseInputItemParam) for item in output
    )
