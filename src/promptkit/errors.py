"""Every error promptkit raises, in one hierarchy under `PromptkitError`.

Messages say what went wrong, where (section path, field, file and line) and, where it helps,
what to do next. They never carry a credential or an API key.
"""

from __future__ import annotations


class PromptkitError(Exception):
    """Base class of every error raised by promptkit.

    Its message is redacted of credentials when the error is made, so a value quoted in a
    message (a bad name, a file's line) can never carry a key into a log or a terminal.
    """

    def __init__(self, *args: object) -> None:
        # Imported here: compiling the secret rules would otherwise cost every import.
        from promptkit.secrets import redact_secrets

        super().__init__(*(redact_secrets(arg) if isinstance(arg, str) else arg for arg in args))


class PromptValidationError(PromptkitError):
    """A prompt, section, tool or params type is malformed; raised when it is built."""


class PromptRenderError(PromptkitError):
    """A prompt could not be rendered with the params it was given."""


class OutputParseError(PromptkitError):
    """Model output did not parse into the prompt's output type.

    `raw_text` keeps the text exactly as the model produced it, for logging or a retry.
    `response` is set by an adapter's `evaluate` to what the model's answer cost and did (a
    `PromptResponse` with `output` None: tool calls, token usage, model); None elsewhere.
    """

    def __init__(self, message: str, *, raw_text: str) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.response: object | None = None


class ToolValidationError(PromptkitError):
    """A tool call's arguments do not match the tool's params type."""


class SessionError(PromptkitError):
    """A session operation was refused: unknown slice, unserialisable value, bad id."""


class SessionCorruptError(SessionError):
    """A persisted session file has a corrupt record that is not a torn last line: damaged
    JSON, or a record altered, deleted or moved after it was written (its checksum chain
    breaks). The message names the file and line."""


class SessionStaleError(SessionError):
    """The stored session moved past the copy in hand (another process or attachment appended
    to it since this copy was loaded); writing this copy would drop those events."""


class OverridesError(PromptkitError):
    """An override file or request is invalid: bad name, malformed TOML, wrong hash."""


class WorkspaceError(PromptkitError):
    """A workspace could not be read, or a path escapes it."""


class WorkspaceUnavailableError(WorkspaceError):
    """A workspace backend (for instance podman) is not installed or cannot run here."""


class ProviderError(PromptkitError):
    """A model provider call failed.

    `status` is the HTTP status when there was a response, `request_id` the provider's id for
    the request when it sent one; both help when reporting the failure to the provider.
    """

    def __init__(
        self, message: str, *, status: int | None = None, request_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id


class ProviderAuthenticationError(ProviderError):
    """The provider refused the credentials (401/403)."""


class ProviderRateLimitError(ProviderError):
    """The provider kept answering 429 after the configured retries."""


class ProviderTimeoutError(ProviderError):
    """A request or the whole evaluation ran past its timeout or deadline."""


class ProviderBadRequestError(ProviderError):
    """The provider rejected the request as malformed (400/404/422)."""


class ProviderServerError(ProviderError):
    """The provider failed (5xx) after the configured retries."""


class ProviderConnectionError(ProviderError):
    """The provider could not be reached at all."""


class ProviderMalformedReplyError(ProviderError):
    """The provider answered with a body that is not the reply its API promises: not JSON, not
    an object, or missing what every reply carries. `status` and `request_id` are the reply's."""


class ModelOutputError(PromptkitError):
    """The model answered, but not with a complete answer to use.

    `response` is the partial `PromptResponse` (text so far, tool calls, token usage, finish
    reason), so a caller can log what the answer cost and what it said.
    """

    def __init__(self, message: str, *, response: object | None = None) -> None:
        super().__init__(message)
        self.response = response


class OutputTruncatedError(ModelOutputError):
    """The answer was cut off (output token limit, context window, content filter) before the
    structured output was complete; raise the token limit or ask for a shorter answer."""


class ModelRefusalError(ModelOutputError):
    """The model refused to answer; `refusal` is its explanation when it gave one."""

    def __init__(
        self, message: str, *, refusal: str | None = None, response: object | None = None
    ) -> None:
        super().__init__(message, response=response)
        self.refusal = refusal


class ToolLoopLimitError(PromptkitError):
    """The model kept calling tools past `max_tool_rounds`."""


class OptimizationError(PromptkitError):
    """`optimize` refused to run or to store its result; nothing was stored."""


class DatasetError(PromptkitError, ValueError):
    """An evaluation dataset file could not be read as a whole (unreadable, not YAML, not a list
    of cases); the message names the file and line. A single bad case is reported per case."""


class PromotionRefusedError(PromptkitError):
    """`promote_overrides` found the candidate below the threshold or regressing; nothing was
    copied. `regressed` names the cases whose score fell by more than the tolerance."""

    def __init__(self, message: str, *, regressed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.regressed = regressed
