"""One `evaluate` call from start to finish: render, events, the parsed response, the record.

`Evaluation` holds what one call needs besides the loop itself: its arguments (checked), its
clock and deadline, the tally of requests and tool calls, and the execution record written to
`output_dir` on success or failure. Adapters create one per call and share none.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar

from promptkit.adapters._wire_api import ModelTurn, WireApi
from promptkit.adapters.conversation import (
    Message,
    check_messages,
    conversation_messages,
    keep_messages,
)
from promptkit.adapters.cost import DEFAULT_PRICES, PriceTable
from promptkit.adapters.loop import (
    DEFAULT_USER_MESSAGE,
    Deadline,
    LoopOptions,
    LoopTally,
    Step,
    tool_loop,
)
from promptkit.adapters.record import (
    ExecutionRecord,
    write_failure_record,
    write_manifest,
    write_record_json,
)
from promptkit.adapters.response import PromptResponse, json_ready
from promptkit.adapters.settings import ModelSettings
from promptkit.adapters.tracing import EvaluationTrace
from promptkit.durable import write_atomically
from promptkit.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    ModelOutputError,
    ModelRefusalError,
    OutputParseError,
    OutputTruncatedError,
)
from promptkit.logging import get_logger
from promptkit.prompt import OverridesLookup, Prompt, RenderedPrompt, parse_structured_output
from promptkit.prompt.params import type_adapter
from promptkit.secrets import redact_secrets
from promptkit.session import PromptExecuted, PromptRendered, Session

if TYPE_CHECKING:
    from promptkit.adapters.base import ProviderAdapter

OutputT = TypeVar("OutputT")

_log = get_logger("promptkit.adapters")

RESPONSE_ARTIFACT = "response.json"
RAW_OUTPUT_ARTIFACT = "raw_output.txt"


@dataclass(frozen=True)
class CallOptions:
    """The per-call choices of `evaluate` beyond the prompt and its params: earlier turns
    (`messages`, or the session conversation named `conversation`), the request settings
    (already merged with the adapter's), output retries and the tools' `deps`."""

    messages: Sequence[Message] | None = None
    conversation: str | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)
    output_retries: int = 1
    deps: Any = None
    prices: PriceTable = DEFAULT_PRICES

    def __post_init__(self) -> None:
        if isinstance(self.output_retries, bool) or not isinstance(self.output_retries, int):
            raise ArgumentTypeError(f"output_retries must be an int, got {self.output_retries!r}")
        if self.output_retries < 0:
            raise ArgumentValueError(f"output_retries must be 0 or more, got {self.output_retries}")
        if self.messages is not None and self.conversation is not None:
            raise ArgumentValueError(
                "pass messages= or conversation=, not both: a session conversation already"
                " holds its earlier turns"
            )
        if not isinstance(self.settings, ModelSettings):
            raise ArgumentTypeError(
                f"settings must be a promptkit ModelSettings, got {type(self.settings).__name__}"
            )
        object.__setattr__(self, "messages", check_messages(self.messages))

    def history(self, session: Session) -> tuple[Message, ...]:
        """The earlier turns this call continues."""
        if self.conversation is not None:
            return conversation_messages(session, self.conversation)
        return tuple(self.messages or ())


class CallArgs(TypedDict, total=False):
    """The keyword arguments of `evaluate` besides `session`, for `stream` and `astream`."""

    overrides_store: OverridesLookup | None
    overrides_tag: str
    deadline: float | timedelta | None
    max_tool_rounds: int
    output_dir: str | Path | None
    user_message: str | None
    messages: Sequence[Message] | None
    conversation: str | None
    settings: ModelSettings | None
    output_retries: int
    deps: Any


class Evaluation(Generic[OutputT]):
    """One evaluate call: its arguments, clock, tally and execution record."""

    def __init__(
        self,
        adapter: ProviderAdapter,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: float | timedelta | None,
        max_tool_rounds: int,
        output_dir: str | Path | None,
        user_message: str | None,
        call: CallOptions | None = None,
    ) -> None:
        call = call or CallOptions()
        if isinstance(max_tool_rounds, bool) or not isinstance(max_tool_rounds, int):
            raise ArgumentTypeError(f"max_tool_rounds must be an int, got {max_tool_rounds!r}")
        if max_tool_rounds < 0:
            raise ArgumentValueError(f"max_tool_rounds must be 0 or more, got {max_tool_rounds}")
        if user_message is not None and (not isinstance(user_message, str) or not user_message):
            raise ArgumentValueError(
                "user_message must be a non-empty string (or None for the default)"
            )
        self.adapter = adapter
        self.prompt = prompt
        self.session = session
        self.clock = adapter.clock
        self.deadline = Deadline.within(deadline, self.clock)
        self.max_tool_rounds = max_tool_rounds
        self.output_dir = None if output_dir is None else Path(output_dir)
        self.user_message = user_message or DEFAULT_USER_MESSAGE
        self.call = call
        self.history = call.history(session)
        self.tally = LoopTally()
        self.trace = EvaluationTrace(
            provider=adapter.provider, model=adapter.model, prompt_name=prompt.display_name
        )
        self.started = self.clock.monotonic()
        self.started_at = self.clock.now()
        self.api: str | None = None

    def render(
        self,
        params: tuple[Any, ...],
        overrides_store: OverridesLookup | None,
        overrides_tag: str,
    ) -> RenderedPrompt[OutputT]:
        rendered = self.prompt.render(*params, overrides_store=overrides_store, tag=overrides_tag)
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

    def steps(self, rendered: RenderedPrompt[Any], api: WireApi) -> Generator[Step, Any, ModelTurn]:
        self.api = api.api
        # Raised here, before the loop sends anything, when the API refuses a setting.
        options = api.request_options(self.call.settings, has_tools=bool(rendered.tools))
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
                output_retries=self.call.output_retries,
                deps=self.call.deps,
                settings=self.call.settings.chosen(),
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
            usage=self.call.prices.priced(self.adapter.provider, model, tally.usage),
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
            output_json = type_adapter(rendered.output_type).dump_python(output, mode="json")
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
        if self.call.conversation is not None:
            keep_messages(self.session, self.call.conversation, tally.messages[len(self.history) :])
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
