"""OpenTelemetry spans of an evaluation, following the GenAI semantic conventions.

One `invoke_agent {prompt}` span per evaluation (under an `optimize {prompt}` span when it
writes a workspace digest), a `chat {model}` span per provider request
(model asked for and answering, token usage, finish reason) and an `execute_tool {name}` span
per tool call, children of the evaluation's. Only `opentelemetry-api` is used, imported when an
evaluation starts: until the application installs a tracer provider (an SDK) no span is made,
since the API's would record nothing; without the package at all, tracing is off. Nor is the
API imported (a fiftieth of a second before a command's first request) while no provider can be
installed: the application has not imported it and names no provider in the environment. Spans
are never made "current" (an evaluation may run inside a generator or on worker threads), so
parents are passed explicitly.

Message content (the user turn, the answer, tool arguments and results) is recorded only when
the application opts in with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, and it
passes through secret redaction first.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from promptkit._jsonable import json_ready
from promptkit.secrets import redact_secrets, redact_value

CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_TRACER_NAME = "promptkit"
# The variable naming a tracer provider that the API loads on first use (an entry point).
_PROVIDER_VARIABLE = "OTEL_PYTHON_TRACER_PROVIDER"

_SETTING_ATTRIBUTES = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "stop_sequences": "gen_ai.request.stop_sequences",
    "seed": "gen_ai.request.seed",
}


def captures_content() -> bool:
    """Whether the application asked for message content in spans."""
    return os.environ.get(CAPTURE_CONTENT_VARIABLE, "").strip().lower() in ("1", "true")


def _tracing_api() -> Any:
    """`opentelemetry.trace`, or None when tracing is off: the package is missing, or no tracer
    provider can have been installed, since nothing imported the API and the environment names
    no provider for it to load (`OTEL_PYTHON_TRACER_PROVIDER`)."""
    if "opentelemetry.trace" not in sys.modules and _PROVIDER_VARIABLE not in os.environ:
        return None
    try:
        from opentelemetry import trace
    except ImportError:  # the API is a dependency, but an application may have removed it
        return None
    return trace


class EvaluationTrace:
    """The spans of one evaluation. Every method is safe to call when tracing is off."""

    def __init__(
        self, *, provider: str, model: str, prompt_name: str, enabled: bool = True
    ) -> None:
        self._provider = provider
        self._model = model
        self._content = False
        self._trace: Any = None
        self._span: Any = None
        trace = _tracing_api() if enabled else None
        if trace is None:
            return
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            # No SDK installed yet: its spans would record nothing, so none are made (an
            # evaluation is often one of thousands in a run). The next one checks again.
            return
        self._content = captures_content()
        self._trace = trace
        tracer = trace.get_tracer(_TRACER_NAME)
        self._span = tracer.start_span(
            f"invoke_agent {prompt_name}",
            kind=trace.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": prompt_name,
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
            },
        )
        self._tracer = tracer

    def user_turn(self, text: str) -> None:
        """Record the user turn (with content capture on)."""
        if self._span is not None and self._content:
            message = [{"role": "user", "parts": [{"type": "text", "content": text}]}]
            self._span.set_attribute("gen_ai.input.messages", _redacted_json(message))

    @contextmanager
    def request(self, settings: Mapping[str, Any]) -> Iterator[RequestSpan]:
        """A span around one provider request; ended with an error when the request fails."""
        span = self._child(
            f"chat {self._model}",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": self._provider,
                "gen_ai.request.model": self._model,
                **{
                    _SETTING_ATTRIBUTES[name]: value
                    for name, value in settings.items()
                    if name in _SETTING_ATTRIBUTES
                },
            },
            client=True,
        )
        recorder = RequestSpan(span)
        try:
            yield recorder
        except BaseException as error:
            _fail(self._trace, span, error)
            raise
        finally:
            if span is not None:
                span.end()

    @contextmanager
    def tool_call(self, name: str, call_id: str, arguments: Any) -> Iterator[ToolSpan]:
        """A span around one tool call."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        }
        if self._content:
            attributes["gen_ai.tool.call.arguments"] = _redacted_json(arguments)
        span = self._child(f"execute_tool {name}", attributes, client=False)
        recorder = ToolSpan(span, self._trace, self._content)
        try:
            yield recorder
        except BaseException as error:
            _fail(self._trace, span, error)
            raise
        finally:
            if span is not None:
                span.end()

    def succeeded(self, *, response_model: str, usage: Any, text: str) -> None:
        """End the evaluation's span with its totals."""
        span = self._span
        if span is None:
            return
        span.set_attribute("gen_ai.response.model", response_model)
        _set_usage(span, usage)
        if self._content:
            message = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
            span.set_attribute("gen_ai.output.messages", _redacted_json(message))
        span.end()
        self._span = None

    def failed(self, error: BaseException) -> None:
        """End the evaluation's span as failed with `error`."""
        if self._span is not None:
            _fail(self._trace, self._span, error)
            self._span.end()
            self._span = None

    def _child(self, name: str, attributes: dict[str, Any], *, client: bool) -> Any:
        if self._span is None:
            return None
        trace = self._trace
        kind = trace.SpanKind.CLIENT if client else trace.SpanKind.INTERNAL
        parent = trace.set_span_in_context(self._span)
        return self._tracer.start_span(name, context=parent, kind=kind, attributes=attributes)


class RequestSpan:
    """What a request span learns from the reply."""

    def __init__(self, span: Any) -> None:
        self._span = span

    def replied(self, *, model: str | None, usage: Any, finish_reason: str) -> None:
        if self._span is None:
            return
        if model:
            self._span.set_attribute("gen_ai.response.model", model)
        _set_usage(self._span, usage)
        self._span.set_attribute("gen_ai.response.finish_reasons", (finish_reason,))


class ToolSpan:
    """What a tool span learns from the call."""

    def __init__(self, span: Any, trace: Any, content: bool) -> None:
        self._span, self._trace, self._content = span, trace, content

    def finished(self, *, result: str, success: bool) -> None:
        if self._span is None:
            return
        if self._content:
            self._span.set_attribute("gen_ai.tool.call.result", redact_secrets(result))
        if not success:
            self._span.set_attribute("error.type", "tool_error")
            self._span.set_status(self._trace.Status(self._trace.StatusCode.ERROR))


class OptimizeTrace:
    """The `optimize {prompt}` span around one optimization. It is the current span while the
    optimization runs (a plain call on one thread), so the evaluation that writes the digest
    nests under it."""

    def __init__(self, *, provider: str, model: str, prompt_name: str) -> None:
        self._span: Any = None
        self._token: Any = None
        trace = _tracing_api()
        if trace is None:
            # With no tracer provider the API's span would be its invalid one, which is also
            # what the current span is when none is attached: leaving it out changes nothing.
            return
        from opentelemetry import context

        self._trace, self._context = trace, context
        self._span = trace.get_tracer(_TRACER_NAME).start_span(
            f"optimize {prompt_name}",
            attributes={
                "gen_ai.operation.name": "optimize",
                "gen_ai.agent.name": prompt_name,
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
            },
        )
        self._token = context.attach(trace.set_span_in_context(self._span))

    def end(self, error: BaseException | None = None) -> None:
        """End the span, as failed with `error` when given."""
        if self._span is None:
            return
        if error is not None:
            _fail(self._trace, self._span, error)
        self._context.detach(self._token)
        self._span.end()
        self._span = None


def _set_usage(span: Any, usage: Any) -> None:
    if usage.input_tokens is not None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    if usage.output_tokens is not None:
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)


def _fail(trace: Any, span: Any, error: BaseException) -> None:
    if span is None:
        return
    kind = "cancelled" if isinstance(error, GeneratorExit) else type(error).__qualname__
    span.set_attribute("error.type", kind)
    # The message can carry what a provider echoed; it is redacted like every other sink.
    span.set_status(trace.Status(trace.StatusCode.ERROR, redact_secrets(str(error))[:300]))


def _redacted_json(value: Any) -> str:
    """`value` as JSON text, each string redacted before it is encoded: in encoded text an
    escaped quote or newline would hide the name or the end of a credential from the rules.
    Tool arguments that arrive as JSON text are decoded first, for the same reason."""
    # Text that is not JSON (or nests past what can be decoded) is recorded as the string it is.
    if isinstance(value, str):
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(value)
    return json.dumps(redact_value(json_ready(value)), ensure_ascii=False)
