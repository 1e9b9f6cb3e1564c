"""Log output for applications and the CLI: `configure` sets up structlog once.

Library code gets its loggers from `get_logger("promptkit.<package>")` and logs an event name
with key/value context. Applications call `configure` (or set up structlog themselves) to choose
JSON lines or readable console output. Until structlog is configured by anyone, promptkit's
records go to stderr at WARNING and above, the way stdlib logging treats an unconfigured
library, rather than to stdout where structlog's own default would mix them into a program's
output.
Every record passes through secret redaction, at any nesting depth (dicts, lists, exceptions),
so a credential that reaches a log call by accident is replaced by `[REDACTED:<rule>]` before it
is written. An exception given as `exc_info` is formatted
here and its traceback text redacted before any renderer sees it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, MutableMapping
from traceback import format_exception
from typing import Any, Literal, TextIO

import structlog

LogFormat = Literal["json", "console"]


def redact_event(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> Mapping[str, Any]:
    """structlog processor: redact credentials from every value of a record, at any depth.

    Strings inside dicts, lists and tuples are redacted; an exception passed as a value becomes
    its redacted `Type: message`, and `exc_info` its redacted traceback (`exception`).
    """
    # Imported here: compiling the secret rules would otherwise cost every `import promptkit.*`.
    from promptkit.secrets import redact_secrets, redact_value

    for key, value in list(event_dict.items()):
        if key == "exc_info":
            # Formatted here, not by the renderer, so the traceback's text is redacted too.
            error = _exception_of(value)
            event_dict[key] = False
            if error is not None:
                event_dict["exception"] = redact_secrets("".join(format_exception(error)))
            continue
        event_dict[key] = redact_value(value)
    return event_dict


def _exception_of(exc_info: Any) -> BaseException | None:
    """The exception structlog's `exc_info` stands for: True (the one being handled), an
    exception, or a `sys.exc_info()` tuple."""
    if isinstance(exc_info, BaseException):
        return exc_info
    if isinstance(exc_info, tuple) and len(exc_info) == 3:
        return exc_info[1] if isinstance(exc_info[1], BaseException) else None
    return sys.exc_info()[1] if exc_info else None


def get_logger(name: str) -> Any:
    """A structlog logger for library code (see the module doc for where records go)."""
    if not structlog.is_configured():
        configure(level="warning")
    return structlog.get_logger(name)


def configure(
    *, format: LogFormat = "console", level: str | int = "info", stream: TextIO | None = None
) -> None:
    """Route promptkit's (and the app's) structlog records to `stream` (stderr by default).

    `format="json"` writes one JSON object per line, for log shippers; `"console"` writes
    aligned, readable lines for people.
    """
    numeric_level = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    if not isinstance(numeric_level, int):
        raise ValueError(f"unknown log level {level!r}: use debug, info, warning or error")
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer(sort_keys=True)
        if format == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact_event,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
