"""One call from start to finish, however it runs: render, session events, the parsed response,
the execution record.

`Evaluation` holds what one call needs besides the loop itself: its options (`CallOptions`, read
and checked here, the one place they are used), its clock and deadline, the tally of requests
and tool calls, and the execution record written to `output_dir` on success or failure. Adapters
create one per call and share none.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from promptkit._durable import write_atomically
from promptkit._jsonable import json_ready
from promptkit.adapters._conversation import (
    check_messages,
    conversation_messages,
    keep_messages,
)
from promptkit.adapters._cost import PriceTable
from promptkit.adapters._deadline import Deadline
from promptkit.adapters._local_servers import shown_url
from promptkit.adapters._loop import LoopOptions, LoopTally, Step, tool_loop
from promptkit.adapters._options import (
    CALL_OPTION_NAMES,
    DEFAULT_MAX_TOOL_ROUNDS,
    DEFAULT_OUTPUT_RETRIES,
    DEFAULT_OVERRIDES_TAG,
    DEFAULT_TOOL_CONCURRENCY,
    DEFAULT_USER_MESSAGE,
    CallOptions,
)
from promptkit.adapters._record import (
    ExecutionRecord,
    write_failure_record,
    write_manifest,
    write_record_json,
)
from promptkit.adapters._response import PromptResponse
from promptkit.adapters._settings import ModelSettings
from promptkit.adapters._stream import DEFAULT_STREAM_LIMITS, StreamLimits
from promptkit.adapters._tracing import EvaluationTrace
from promptkit.adapters._transport import Transport
from promptkit.adapters._wire_api import ModelTurn, WireApi
from promptkit.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    ModelOutputError,
    ModelRefusalError,
    OutputParseError,
    OutputTruncatedError,
)
from promptkit.logging import get_logger
from promptkit.prompt import Prompt, RenderedPrompt, parse_structured_output
from promptkit.secrets import redact_secrets
from promptkit.session import PromptExecuted, PromptRendered, Session

if TYPE_CHECKING:
    from promptkit.adapters._wire_adapter import WireAdapter

OutputT = TypeVar("OutputT")

_log = get_logger("promptkit.adapters")

RESPONSE_ARTIFACT = "response.json"
RAW_OUTPUT_ARTIFACT = "raw_output.txt"


def _count_option(options: Mapping[str, object], name: str, default: int, *, least: int) -> int:
    """The count option `name` of a call (`default` when not given): an int of at least `least`."""
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name} must be an int, got {value!r}")
    if value < least:
        raise ArgumentValueError(f"{name} must be {least} or more, got {value}")
    return value


class Evaluation(Generic[OutputT]):
    """One call of `adapter` on `prompt`: its options (checked), clock, deadline, the tally of
    requests and tool calls, its trace and its execution record."""

    def __init__(
        self,
        adapter: WireAdapter,
        prompt: Prompt[OutputT, Any],
        session: Session,
        options: CallOptions[Any],
        *,
        method: str,
    ) -> None:
        unknown = sorted(set(options) - CALL_OPTION_NAMES)
        if unknown:
            raise ArgumentTypeError(
                f"{type(adapter).__name__}.{method}() got an unexpected keyword argument"
                f" {unknown[0]!r}; its options are {', '.join(sorted(CALL_OPTION_NAMES))}"
            )
        settings = options.get("settings")
        if settings is not None and not isinstance(settings, ModelSettings):
            raise ArgumentTypeError(
                f"settings must be a promptkit ModelSettings, got {type(settings).__name__}"
            )
        output_retries = _count_option(options, "output_retries", DEFAULT_OUTPUT_RETRIES, least=0)
        conversation = options.get("conversation")
        if options.get("messages") is not None and conversation is not None:
            raise ArgumentValueError(
                "pass messages= or conversation=, not both: a session conversation already"
                " holds its earlier turns"
            )
        messages = check_messages(options.get("messages"))
        max_tool_rounds = _count_option(
            options, "max_tool_rounds", DEFAULT_MAX_TOOL_ROUNDS, least=0
        )
        user_message = options.get("user_message")
        if user_message is not None and (not isinstance(user_message, str) or not user_message):
            raise ArgumentValueError(
                "user_message must be a non-empty string (or None for the default)"
            )
        tool_concurrency = _count_option(
            options, "tool_concurrency", DEFAULT_TOOL_CONCURRENCY, least=1
        )
        deps = options.get("deps")
        # Before anything is rendered or sent: a tool must never be told to run without them.
        prompt.require_deps(deps)
        output_dir = options.get("output_dir")
        prices = options.get("prices")
        if prices is not None and not isinstance(prices, PriceTable):
            raise ArgumentTypeError(
                f"prices must be a promptkit PriceTable, got {type(prices).__name__}"
            )
        self.prices = adapter.prices if prices is None else prices
        stream_limits = options.get("stream_limits")
        if stream_limits is not None and not isinstance(stream_limits, StreamLimits):
            raise ArgumentTypeError(
                "stream_limits must be a promptkit StreamLimits, got"
                f" {type(stream_limits).__name__}"
            )
        self.stream_limits = stream_limits or DEFAULT_STREAM_LIMITS
        self.adapter = adapter
        self.prompt = prompt
        self.session = session
        self.clock = adapter.clock
        self.deadline = Deadline.within(options.get("deadline"), self.clock)
        self.overrides_store = options.get("overrides_store")
        self.overrides_tag = options.get("overrides_tag", DEFAULT_OVERRIDES_TAG)
        self.max_tool_rounds = max_tool_rounds
        self.output_dir = None if output_dir is None else Path(output_dir)
        self.user_message = user_message or DEFAULT_USER_MESSAGE
        self.settings = adapter.settings.merged(settings)
        self.output_retries = output_retries
        self.deps = deps
        self.tool_concurrency = tool_concurrency
        self.conversation = conversation
        self.history = (
            messages if conversation is None else conversation_messages(session, conversation)
        )
        self.tally = LoopTally()
        self.trace = EvaluationTrace(
            provider=adapter.provider, model=adapter.model, prompt_name=prompt.display_name
        )
        self.started = self.clock.monotonic()
        self.started_at = self.clock.now()
        self.api: str | None = None

    def render(self, params: tuple[Any, ...]) -> RenderedPrompt[OutputT]:
        """The prompt rendered with `params`, recorded as `PromptRendered`."""
        rendered = self.prompt.render(
            *params, overrides_store=self.overrides_store, tag=self.overrides_tag
        )
        # What to advise when the deadline passes depends on whether tool rounds take time.
        self.deadline = replace(self.deadline, uses_tools=bool(rendered.tools))
        self.session.dispatch(
            PromptRendered(
                prompt_ns=rendered.ns,
                prompt_key=rendered.key,
                prompt_name=rendered.name,
                text=rendered.text,
                tool_names=tuple(tool.name for tool in rendered.tools),
                rendered_at=self.clock.now(),
            )
        )
        return rendered

    def transport(self, client: Any) -> Transport:
        """The requests of this call, sent with `client` in the adapter's wire API."""
        adapter = self.adapter
        url = adapter.base_url if adapter.at_custom_server else None
        return Transport(
            adapter.wire_api(),
            client,
            self.deadline,
            adapter.translate_error,
            adapter.provider,
            adapter.model,
            fallback=adapter.schema_fallback(),
            server=shown_url(url) if url else None,
            limits=self.stream_limits,
        )

    def steps(self, rendered: RenderedPrompt[Any], api: WireApi) -> Generator[Step, Any, ModelTurn]:
        """The tool loop of this call, not started."""
        self.api = api.api
        # Raised here, before the loop sends anything, when the API refuses a setting.
        options = api.request_options(self.settings, has_tools=bool(rendered.tools))
        return tool_loop(
            rendered=rendered,
            api=api,
            session=self.session,
            deadline=self.deadline,
            max_tool_rounds=self.max_tool_rounds,
            user_message=self.user_message,
            tally=self.tally,
            options=LoopOptions(
                history=self.history,
                request_options=options,
                output_retries=self.output_retries,
                deps=self.deps,
                tool_concurrency=self.tool_concurrency,
                settings=self.settings.chosen(),
                trace=self.trace,
            ),
        )

    def finish(self, rendered: RenderedPrompt[OutputT], turn: ModelTurn) -> PromptResponse[OutputT]:
        tally = self.tally
        model = tally.reported_model or self.adapter.model
        # `output` stays None until the reply parses: an OutputParseError carries this response.
        response: PromptResponse[Any] = PromptResponse(
            prompt_name=rendered.name,
            text=turn.text,
            output=None,
            tool_calls=tuple(tally.tool_calls),
            usage=self.prices.priced(self.adapter.provider, model, tally.usage, at=self.started_at),
            model=model,
            provider=self.adapter.provider,
            messages=tuple(tally.messages),
            finish_reason=turn.finish_reason,
            refusal=turn.refusal,
        )
        output_json: Any = None
        if rendered.output_type is not None:
            self._refuse_incomplete_output(rendered, response)
            try:
                output = parse_structured_output(turn.text, rendered.output_type)
            except OutputParseError as error:
                # The model did answer: a caller that keeps the text needs its cost and calls too.
                error.response = response
                raise
            output_json = json_ready(output)
            response = replace(response, output=output)
        elif response.is_truncated:
            _log.warning(
                "reply_truncated",
                prompt_ns=rendered.ns,
                prompt_key=rendered.key,
                finish_reason=response.finish_reason,
                output_tokens=tally.usage.output_tokens,
            )
        duration = self.clock.monotonic() - self.started
        if self.conversation is not None:
            kept = tally.messages[len(self.history) :]
            keep_messages(self.session, self.conversation, kept, added_at=self.clock.now())
        self.session.dispatch(
            PromptExecuted(
                prompt_ns=rendered.ns,
                prompt_key=rendered.key,
                prompt_name=rendered.name,
                provider=self.adapter.provider,
                model=model,
                text=turn.text,
                output=output_json,
                input_tokens=tally.usage.input_tokens,
                output_tokens=tally.usage.output_tokens,
                cached_tokens=tally.usage.cached_tokens,
                duration_s=duration,
                executed_at=self.clock.now(),
                cache_write_tokens=tally.usage.cache_write_tokens,
                reasoning_tokens=tally.usage.reasoning_tokens,
                finish_reason=response.finish_reason,
                cost=response.usage.cost,
            )
        )
        return response

    def _refuse_incomplete_output(
        self, rendered: RenderedPrompt[Any], response: PromptResponse[Any]
    ) -> None:
        """Raise when a structured answer was cut off or declined: parsing it would only report
        broken JSON, and its text must not pass for an answer."""
        where = f"prompt {rendered.ns}/{rendered.key} ({self.adapter.provider} {response.model})"
        if response.finish_reason == "refusal":
            said = f": {response.refusal[:300]!r}" if response.refusal else ""
            raise ModelRefusalError(
                f"{where}: the model declined to answer{said}; rephrase the request or"
                " handle the refusal",
                refusal=response.refusal,
                response=response,
            )
        if response.is_truncated:
            cause = (
                "the provider's content filter"
                if response.finish_reason == "content_filter"
                else "the output token limit or the context window"
            )
            raise OutputTruncatedError(
                f"{where}: the structured answer was cut off by {cause} after"
                f" {response.usage.output_tokens} output tokens, so it is incomplete; raise the"
                " adapter's token limit or ask for a shorter answer",
                response=response,
            )

    # -- execution record ---------------------------------------------------------------------

    def record_success(self, response: PromptResponse[Any]) -> None:
        self.trace.succeeded(
            response_model=response.model, usage=response.usage, text=response.text
        )
        if self.output_dir is None:
            return
        document = {
            "prompt_name": response.prompt_name,
            "provider": response.provider,
            "model": response.model,
            "text": response.text,
            "output": json_ready(response.output),
            "tool_calls": [
                {
                    "name": call.name,
                    "call_id": call.call_id,
                    "params": json_ready(call.params),
                    "result": call.result.message,
                    "success": call.success,
                    "duration_s": call.duration.total_seconds(),
                }
                for call in response.tool_calls
            ],
            "usage": response.usage.to_json(),
        }
        write_record_json(self.output_dir / RESPONSE_ARTIFACT, document)
        write_manifest(
            self.output_dir,
            ExecutionRecord(
                status="completed",
                outcome="success",
                duration_s=self.clock.monotonic() - self.started,
                artifacts=(RESPONSE_ARTIFACT,),
                metadata=self._metadata(),
            ),
        )

    def abandon(self) -> None:
        """The caller stopped reading a stream: nothing failed, but the run is over."""
        self.trace.failed(GeneratorExit())

    def record_failure(self, error: BaseException) -> None:
        self.trace.failed(error)
        output_dir = self.output_dir
        if output_dir is None:
            return

        def raw_output() -> tuple[str, ...]:
            if isinstance(error, OutputParseError):
                raw_text = error.raw_text
            elif isinstance(error, ModelOutputError) and isinstance(error.response, PromptResponse):
                raw_text = error.response.text
            else:
                return ()
            write_atomically(output_dir / RAW_OUTPUT_ARTIFACT, redact_secrets(raw_text))
            return (RAW_OUTPUT_ARTIFACT,)

        write_failure_record(
            output_dir,
            error,
            duration_s=self.clock.monotonic() - self.started,
            metadata=self._metadata(),
            write_artifacts=raw_output,
        )

    def _metadata(self) -> dict[str, Any]:
        tally = self.tally
        return {
            "provider": self.adapter.provider,
            "api": self.api,
            "model": self.adapter.model,
            "reported_model": tally.reported_model,
            "prompt_ns": self.prompt.ns,
            "prompt_key": self.prompt.key,
            "prompt_name": self.prompt.display_name,
            "usage": tally.usage.to_json(),
            "requests": tally.requests,
            "tool_calls": len(tally.tool_calls),
            "started_at": self.started_at.isoformat(),
        }
