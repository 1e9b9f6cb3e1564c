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

A module holds its logger from import time, but structlog (with asyncio, and rich when it is
installed) is imported, and the default set-up applied, only when a logger is first used: a
program that imports promptkit and logs nothing pays for neither. A program can put its own
set-up off the same way (`configure_on_first_record`, as the `promptkit` command does).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Literal, TextIO

from promptkit.errors import ArgumentValueError

LogFormat = Literal["json", "console"]


def redact_event(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> Mapping[str, Any]:
    """structlog processor: redact credentials from every value of a record, at any depth.

    Strings inside dicts, lists and tuples are redacted; an exception passed as a value becomes
    its redacted `Type: message`, and `exc_info` its redacted traceback (`exception`).
    """
    # Imported here: compiling the secret rules would otherwise cost every `import promptkit.*`.
    from traceback import format_exception

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
    """A structlog logger for library code, looked up when it is first used (see the module doc
    for where records go)."""
    return _Logger(name)


class _Logger:
    """structlog's logger `name`, looked up on first use; every method call goes to it."""

    __slots__ = ("_bound", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._bound: Any = None

    def __getattr__(self, attribute: str) -> Any:
        bound = self._bound
        if bound is None:
            _run_pending_setup()
            import structlog

            if not structlog.is_configured():
                configure(level="warning")
            # structlog's own logger proxy reads the configuration of the moment on each call,
            # so keeping it does not pin today's set-up.
            bound = self._bound = structlog.get_logger(self._name)
        return getattr(bound, attribute)

    def __repr__(self) -> str:
        return f"<promptkit logger {self._name!r}>"


# The set-up `configure_on_first_record` put off, until a promptkit logger is first used; the one
# piece of state here besides structlog's own configuration, which it is waiting to write.
_pending_setup: list[Callable[[], None]] = []


def configure_on_first_record(setup: Callable[[], None]) -> None:
    """Run `setup` (which calls `configure`) when a promptkit logger is first used, rather than
    now: a run that logs nothing then never imports structlog, nor asyncio with it.

    When structlog is already imported, `setup` runs now (it costs nothing more). When the
    program configures structlog itself before the first record, its set-up stands and `setup`
    never runs, as if it had run first. Until then, records of structlog's own loggers (not
    promptkit's) get structlog's defaults.
    """
    _pending_setup.clear()
    if "structlog" in sys.modules:
        setup()
    else:
        _pending_setup.append(setup)


def _run_pending_setup() -> None:
    if not _pending_setup:
        return
    setup = _pending_setup.pop()
    structlog = sys.modules.get("structlog")
    if structlog is None or not structlog.is_configured():
        setup()


def configure(
    *, format: LogFormat = "console", level: str | int = "info", stream: TextIO | None = None
) -> None:
    """Route promptkit's (and the app's) structlog records to `stream` (stderr by default).

    `format="json"` writes one JSON object per line, for log shippers; `"console"` writes
    aligned, readable lines for people.
    """
    import logging

    import structlog

    numeric_level = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    if not isinstance(numeric_level, int):
        raise ArgumentValueError(f"unknown log level {level!r}: use debug, info, warning or error")
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
