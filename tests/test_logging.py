"""Log redaction: credentials are removed from every value of a record, at any depth."""

from __future__ import annotations

import io
import json
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
