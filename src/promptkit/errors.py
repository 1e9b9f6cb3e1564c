"""Every error promptkit raises, in one hierarchy under `PromptkitError`, in two kinds.

- `UsageError`: the caller used promptkit wrongly (a bad argument, a malformed prompt, an
  invalid name, an override file written by hand with a mistake). Retrying will not help; fix
  the calling code or the file the message names.
- `RunError`: a run failed on something outside the calling code (a provider, the model's
  output, a workspace, a damaged file on disk, a deadline). It may succeed later or elsewhere.

Each error also subclasses the builtin it stands for (`ValueError`, `TypeError`, `OSError`,
`TimeoutError`, `ConnectionError`, `RuntimeError`), so an existing `except ValueError:` keeps
catching what it caught before promptkit named it. Messages say what went wrong, where (section
path, field, file and line) and what to do next; they never carry a credential or an API key.
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


class UsageError(PromptkitError):
    """The caller's mistake: fix the calling code or the file the message names."""


class RunError(PromptkitError):
    """A failure at run time, outside the calling code: provider, model, workspace, disk."""


# -- caller mistakes ---------------------------------------------------------------------------


class ArgumentValueError(UsageError, ValueError):
    """An argument has the right type but a value promptkit cannot use."""


class ArgumentTypeError(UsageError, TypeError):
    """An argument has the wrong type (for instance `clone(session=...)` given no Session)."""


class InvalidStateError(UsageError, RuntimeError):
    """An object was used in a state that does not allow the call (a server started twice)."""


class PromptValidationError(UsageError, ValueError):
    """A prompt, section, tool or params type is malformed; raised when it is built."""


class PromptRenderError(UsageError, ValueError):
    """A prompt could not be rendered with the params it was given."""


class DepsError(UsageError, TypeError):
    """A call passed deps its prompt's tools cannot use: none where a tool needs them, or a
    value of another type than the prompt declares. Raised before anything is sent."""


class SessionError(UsageError, ValueError):
    """A session operation was refused: unknown slice, unserialisable value, bad id."""


class ConfigError(UsageError, ValueError):
    """The project's configuration (`[tool.promptkit]` in pyproject.toml) cannot be used: the
    message names the file and the key."""


class OverridesError(UsageError, ValueError):
    """An override file or request is invalid: bad name, malformed TOML, wrong hash."""


class OptimizationError(UsageError, ValueError):
    """`optimize` refused to run (a prompt without the sections it needs, a scope without its
    store, a clash with an operator's digest); nothing was sent or stored. A digest refused
    after the model answered is a `DigestRejectedError` instead."""


# -- failures at run time ----------------------------------------------------------------------


class OutputParseError(RunError, ValueError):
    """Model output did not parse into the prompt's output type.

    `raw_text` keeps the text exactly as the model produced it, for logging or a retry.
    `response` is set by an adapter's `evaluate` to what the model's answer cost and did (a
    `PromptResponse` with `output` None: tool calls, token usage, model); None elsewhere.
    """

    def __init__(self, message: str, *, raw_text: str) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.response: object | None = None


class ToolValidationError(RunError, ValueError):
    """A tool call's arguments (sent by the model) do not match the tool's params type."""


class ToolLoopLimitError(RunError, RuntimeError):
    """The model kept calling tools past `max_tool_rounds`."""


class SessionCorruptError(RunError, ValueError):
    """A persisted session file has a corrupt record that is not a torn last line: damaged
    JSON, or a record altered, deleted or moved after it was written (its checksum chain
    breaks). The message names the file and line."""


class SessionStaleError(RunError, RuntimeError):
    """The stored session moved past the copy in hand (another process or attachment appended
    to it since this copy was loaded); writing this copy would drop those events."""


class WorkspaceError(RunError, OSError):
    """A workspace could not be read, or a path escapes it."""


class WorkspaceUnavailableError(WorkspaceError):
    """A workspace backend (for instance podman) is not installed or cannot run here."""


class ProviderError(RunError, RuntimeError):
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


class ProviderTimeoutError(ProviderError, TimeoutError):
    """A request or the whole evaluation ran past its timeout or deadline."""


class ProviderBadRequestError(ProviderError, ValueError):
    """The provider rejected the request as malformed (400/404/422)."""


class StructuredOutputUnsupportedError(ProviderBadRequestError):
    """The server refused the JSON-schema output format the request asked for (a 400, or a
    500 that names the format, as llama-cpp-python's server answers). At a custom base URL the
    adapter falls back once to prompt-mode structured output; the message names the option
    (`structured_output="prompt"`, `--structured-output prompt`) for other cases."""


class ProviderServerError(ProviderError):
    """The provider failed (5xx) after the configured retries."""


class ProviderConnectionError(ProviderError, ConnectionError):
    """The provider could not be reached at all."""


class ProviderStreamCutError(ProviderConnectionError):
    """A streamed reply ended before its finish event: the connection dropped, or the stream
    closed early. What had arrived was not used; retrying the request may succeed."""


class ProviderMalformedReplyError(ProviderError):
    """The provider answered with a body that is not the reply its API promises: not JSON, not
    an object, or missing what every reply carries, or a streamed event that is not JSON or not
    of its type's shape. `status` and `request_id` are the reply's."""


class ProviderReplyTooLargeError(ProviderError):
    """A streamed reply passed the bytes one stream may take (`StreamLimits.max_bytes`); the
    stream was closed and nothing of it was used."""


class McpError(RunError, RuntimeError):
    """An MCP server failed a request: it answered with a protocol error (an unknown method or
    tool, an internal error), or the `mcp` package that speaks to it is not installed. A tool's
    own failed result (`isError`) is not an error: it goes to the model like any tool result."""


class McpConnectionError(McpError, ConnectionError):
    """An MCP server could not be started, reached or initialised, or it went away (exited,
    closed its pipe or its HTTP stream) while a request was under way."""


class McpTimeoutError(McpError, TimeoutError):
    """An MCP server did not answer a tool call in time; the call was cancelled."""


class ModelOutputError(RunError, ValueError):
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


class DigestRejectedError(ModelOutputError):
    """The optimizer answered, but its digest was refused before anything was stored: empty,
    holding what looks like a credential, cut off at the reply cap, or not a digest of the
    workspace by the digest gate (JSON, a schema, the prompt's own text, over the budget, or not
    grounded in the workspace). The message says why.

    `response` is the optimizer's `PromptResponse`, and None for a digest refused for a
    credential, so the error never carries it. `grounding` is the gate's
    `promptkit.optimize.Grounding` of the refused digest (None when the gate did not judge it).
    """

    def __init__(
        self, message: str, *, response: object | None = None, grounding: object | None = None
    ) -> None:
        super().__init__(message, response=response)
        self.grounding = grounding


class InputFileError(UsageError, OSError):
    """A file named as input (a dataset, a reply script) is not a regular file (a FIFO, a
    device), cannot be opened, or is larger than what is read of it; nothing was used."""


class DatasetError(UsageError, ValueError):
    """An evaluation dataset file could not be read as a whole (unreadable, not YAML, not a list
    of cases); the message names the file and line. A single bad case is reported per case."""


class CallAbandonedError(RunError, TimeoutError):
    """promptkit stopped waiting for a blocking call (a tool handler, an evaluator) when its time
    was up; the call was left running on its own thread and whatever it returns is dropped."""


class OverridesConflictError(RunError, RuntimeError):
    """A write that names the entries it replaces found them changed by another writer since
    they were read; nothing was written. `changes` names each entry that differs."""

    def __init__(self, message: str, *, changes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.changes = changes


class DatabaseError(RunError, RuntimeError):
    """A database behind a store failed. `database` names it as `postgresql://user@host:port/name`
    (never with its password), so an operator knows which server to look at."""

    def __init__(self, message: str, *, database: str) -> None:
        super().__init__(message)
        self.database = database


class DatabaseUnavailableError(DatabaseError, ConnectionError):
    """The database could not be reached, or the connection broke and the bounded retries did not
    bring it back; nothing was written (a write is either committed whole or not at all)."""


class DatabaseBusyError(DatabaseError, TimeoutError):
    """Every connection of the store's pool stayed in use past its `pool_timeout`; nothing was
    written. Raise the pool's `max_size`, or shorten what holds connections."""


class DatabaseSchemaError(DatabaseError):
    """The database's promptkit tables are missing, older than this promptkit needs (run
    `promptkit db upgrade`), or newer than it knows (upgrade promptkit); nothing was read or
    written."""


class PromotionRefusedError(RunError, RuntimeError):
    """`promote_overrides` found the candidate below the threshold or regressing; nothing was
    copied. `regressed` names the cases whose score fell by more than the tolerance."""

    def __init__(self, message: str, *, regressed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.regressed = regressed
