"""Log output for applications and the CLI: `configure` sets up structlog once.

Library code only calls `structlog.get_logger("promptkit.<package>")` with an event name and
key/value context; it never prints and never configures logging on import. Applications call
`configure` (or their own structlog setup) to choose JSON lines or readable console output.
Every record passes through secret redaction, so a credential that reaches a log call by
accident is replaced by `[REDACTED:<rule>]` before it is written.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any, Literal, TextIO

import structlog

from promptkit.secrets import redact_secrets

LogFormat = Literal["json", "console"]


def redact_event(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> Mapping[str, Any]:
    """structlog processor: redact credentials from every string value of a record."""
    for key, value in event_dict.items():
        if isinstance(value, str):
            event_dict[key] = redact_secrets(value)
    return event_dict


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
