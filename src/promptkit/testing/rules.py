"""The request rules `FakeProviderServer` enforces, so a test fails where production would.

`request_problems(endpoint, body)` lists what the real API would refuse with a 400:

- keys the installed SDK's request type (`ResponseCreateParams`, `CompletionCreateParams`,
  `MessageCreateParams`) does not declare, at any depth, and required keys that are missing
  (`promptkit.wire`);
- strict schemas (OpenAI `strict: true` tools and JSON-schema formats, Anthropic
  `output_config.format` and `strict` tools) that break the provider's strict rules
  (`promptkit.wire`, the same rules the adapters shape schemas by);
- tool and format names outside the provider's name pattern;
- tool results that answer no earlier call, and calls left without a result;
- Anthropic error results (`is_error: true`) without content (a request without `max_tokens`
  lacks a required key of its request type);
- with `store: false`, a replayed reasoning item without its `encrypted_content` (the provider
  kept nothing to look its id up in).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptkit.wire import (
    ANTHROPIC_STRICT,
    OPENAI_STRICT,
    StrictDialect,
    request_type_problems,
    strict_schema_problems,
)
from promptkit.testing.wire import Endpoint


def request_problems(endpoint: Endpoint, body: dict[str, Any]) -> list[str]:
    """What the real API would refuse in `body`, each as one sentence naming where."""
    problems = request_type_problems(body, _request_type(endpoint))
    if endpoint == "responses":
        return problems + _responses_problems(body)
    if endpoint == "chat_completions":
        return problems + _chat_problems(body)
    return problems + _messages_problems(body)


def _request_type(endpoint: Endpoint) -> Any:
    """The installed SDK's TypedDict for a non-streaming request to `endpoint`."""
    if endpoint == "responses":
        from openai.types.responses.response_create_params import (
            ResponseCreateParamsNonStreaming,
        )

        return ResponseCreateParamsNonStreaming
    if endpoint == "chat_completions":
        from openai.types.chat.completion_create_params import (
            CompletionCreateParamsNonStreaming,
        )

        return CompletionCreateParamsNonStreaming
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return MessageCreateParamsNonStreaming


# -- OpenAI Responses -------------------------------------------------------------------------


def _responses_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for index, tool in _dicts(body.get("tools")):
        if tool.get("type") == "function":
            problems += _function_problems(f"tools[{index}]", tool, OPENAI_STRICT)
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        problems += _format_problems("text.format", fmt)
    items = list(_dicts(body.get("input")))
    if body.get("previous_response_id") is None:
        called = set()
        for index, item in items:
            if item.get("type") == "function_call":
                called.add(item.get("call_id"))
            elif item.get("type") == "function_call_output" and item.get("call_id") not in called:
                problems.append(
                    f"input[{index}]: no tool call found for function call output with call_id"
                    f" {item.get('call_id')!r}"
                )
    if body.get("store") is False:
        for index, item in items:
            if item.get("type") == "reasoning" and not item.get("encrypted_content"):
                problems.append(
                    f"input[{index}]: item with id {item.get('id')!r} not found; items are not"
                    " persisted when store is false: replay the reasoning item with its"
                    " encrypted_content (include reasoning.encrypted_content)"
                )
    return problems


# -- OpenAI Chat Completions ------------------------------------------------------------------


def _chat_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for index, tool in _dicts(body.get("tools")):
        function = tool.get("function")
        if tool.get("type") == "function" and isinstance(function, dict):
            problems += _function_problems(f"tools[{index}].function", function, OPENAI_STRICT)
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        inner = fmt.get("json_schema")
        if isinstance(inner, dict):
            problems += _format_problems("response_format.json_schema", inner)
    open_calls: set[Any] = set()
    for index, message in _dicts(body.get("messages")):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                problems.append(
                    f"messages[{index}]: messages with role 'tool' must be a response to a"
                    " preceding message with 'tool_calls'"
                )
            open_calls.discard(message.get("tool_call_id"))
            continue
        if open_calls:
            problems.append(
                f"messages[{index}]: an assistant message with 'tool_calls' must be followed by"
                f" tool messages responding to each 'tool_call_id' ({sorted(map(str, open_calls))}"
                " not answered)"
            )
        open_calls = {
            call.get("id") for _, call in _dicts(message.get("tool_calls")) if role == "assistant"
        }
    if open_calls:
        problems.append(
            "messages: the last assistant message's 'tool_calls' were never answered with tool"
            " messages"
        )
    return problems


# -- Anthropic Messages -----------------------------------------------------------------------


def _messages_problems(body: dict[str, Any]) -> list[str]:
    # A missing `max_tokens` is a missing required key of `MessageCreateParams`, found above.
    problems: list[str] = []
    for index, tool in _dicts(body.get("tools")):
        name = tool.get("name")
        if isinstance(name, str) and ANTHROPIC_STRICT.tool_name_pattern.fullmatch(name) is None:
            problems.append(
                f"tools.{index}.custom.name: String should match pattern"
                f" '^{ANTHROPIC_STRICT.tool_name_pattern.pattern}$'"
            )
        if tool.get("strict") is True:
            problems += _schema_problems(
                f"tools.{index}.input_schema", tool.get("input_schema"), ANTHROPIC_STRICT
            )
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        problems += _schema_problems(
            "output_config.format.schema", fmt.get("schema"), ANTHROPIC_STRICT
        )
    pending: set[Any] = set()
    for index, message in _dicts(body.get("messages")):
        blocks = [block for _, block in _dicts(message.get("content"))]
        results = {
            block.get("tool_use_id") for block in blocks if block.get("type") == "tool_result"
        }
        if message.get("role") == "user":
            for stray in results - pending:
                problems.append(
                    f"messages.{index}.content: unexpected tool_use_id found in tool_result"
                    f" blocks: {stray}. Each tool_result block must have a corresponding"
                    " tool_use block in the previous message."
                )
        if pending - results:
            problems.append(
                f"messages.{index}: tool_use ids were found without tool_result blocks"
                f" immediately after: {', '.join(sorted(map(str, pending - results)))}"
            )
        pending = {block.get("id") for block in blocks if block.get("type") == "tool_use"}
        for block_index, block in enumerate(blocks):
            is_error_result = block.get("type") == "tool_result" and block.get("is_error") is True
            if is_error_result and not block.get("content"):
                problems.append(
                    f"messages.{index}.content.{block_index}: content cannot be empty if"
                    " `is_error` is true"
                )
    return problems


# -- shared ------------------------------------------------------------------------------------


def _function_problems(where: str, function: dict[str, Any], dialect: StrictDialect) -> list[str]:
    problems: list[str] = []
    name = function.get("name")
    if isinstance(name, str) and dialect.tool_name_pattern.fullmatch(name) is None:
        problems.append(
            f"Invalid '{where}.name': string does not match pattern. Expected a string that"
            f" matches the pattern '^{dialect.tool_name_pattern.pattern}$'."
        )
    if function.get("strict") is True:
        problems += _schema_problems(f"{where}.parameters", function.get("parameters"), dialect)
    return problems


def _format_problems(where: str, fmt: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    name = fmt.get("name")
    if isinstance(name, str) and OPENAI_STRICT.tool_name_pattern.fullmatch(name) is None:
        problems.append(f"Invalid '{where}.name': string does not match pattern.")
    if fmt.get("strict") is True:
        problems += _schema_problems(f"{where}.schema", fmt.get("schema"), OPENAI_STRICT)
    return problems


def _schema_problems(where: str, schema: Any, dialect: StrictDialect) -> list[str]:
    return [
        f"Invalid schema for '{where}': {problem}"
        for problem in strict_schema_problems(schema, dialect)
    ]


def _dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON list with their indexes; anything else has none."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item
