"""Log redaction: credentials are removed from every value of a record, at any depth. Loggers
import structlog when first used, and records logged before any set-up go to stderr."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
import structlog

from promptkit.logging import configure, get_logger

from .credentials import PLANTED, leaked_values, planted_file_text


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure(format="json", level="debug", stream=stream)
    yield stream
    structlog.reset_defaults()


def test_credentials_in_nested_values_never_reach_the_log(log_stream: io.StringIO) -> None:
    lines = [planted.line for planted in PLANTED]
    get_logger("promptkit.test").warning(
        "nested",
        config={"deep": {"deeper": [lines, tuple(lines)]}},
        items=lines,
        error=RuntimeError(planted_file_text()),
    )
    assert leaked_values(log_stream.getvalue()) == []
    assert "[REDACTED:" in json.loads(log_stream.getvalue())["config"]["deep"]["deeper"][0][0]


def test_exception_traceback_is_logged_without_its_credentials(log_stream: io.StringIO) -> None:
    try:
        raise ValueError(planted_file_text())
    except ValueError:
        get_logger("promptkit.test").error("failed", exc_info=True)
    record = json.loads(log_stream.getvalue())
    assert "Traceback" in record["exception"]
    assert "ValueError" in record["exception"]
    assert leaked_values(log_stream.getvalue()) == []


# Imports a module that holds a logger, then logs one warning and one info record without any
# set-up, and reports what was imported when.
UNCONFIGURED = """
import json, sys
from promptkit.session import SessionStore
imported_early = "structlog" in sys.modules
from promptkit.logging import get_logger
get_logger("promptkit.test").warning("first_record", where="stderr")
get_logger("promptkit.test").info("below_the_default_level")
print(json.dumps({"structlog_at_import": imported_early}))
"""


def _unconfigured_run() -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [sys.executable, "-c", UNCONFIGURED], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    return completed


def test_importing_a_module_that_holds_a_logger_imports_no_structlog() -> None:
    report = json.loads(_unconfigured_run().stdout)

    assert report["structlog_at_import"] is False


def test_a_record_logged_before_any_set_up_goes_to_stderr_at_warning_and_above() -> None:
    completed = _unconfigured_run()

    assert "first_record" in completed.stderr and "where=stderr" in completed.stderr
    assert "below_the_default_level" not in completed.stderr
    assert "first_record" not in completed.stdout


# Puts a set-up off until the first record, optionally configures structlog itself first, then
# logs one record and reports where it went.
PUT_OFF = """
import io, json, sys
from promptkit.logging import configure, configure_on_first_record, get_logger
stream = io.StringIO()
configure_on_first_record(lambda: configure(format="json", level="info", stream=stream))
imported_before_the_record = "structlog" in sys.modules
if sys.argv[1] == "program-configures":
    import structlog
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))
get_logger("promptkit.test").info("first_record")
print(json.dumps({"imported_before": imported_before_the_record, "put_off": stream.getvalue()}))
"""


def _put_off_run(mode: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, "-c", PUT_OFF, mode], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    report: dict[str, object] = json.loads(completed.stdout)
    return report


def test_a_set_up_put_off_runs_at_the_first_record_and_not_before() -> None:
    report = _put_off_run("only-promptkit")

    assert report["imported_before"] is False
    assert json.loads(str(report["put_off"]))["event"] == "first_record"


def test_a_program_that_configures_structlog_first_keeps_its_set_up() -> None:
    assert _put_off_run("program-configures")["put_off"] == ""
