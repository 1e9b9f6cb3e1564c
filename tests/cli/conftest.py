"""`promptkit.cli.main` runs in this process here: it points logging at the `sys.stderr` of the
moment, which `capsys` closes after the test; logging goes back to the real stderr after each."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def logging_back_on_stderr() -> Iterator[None]:
    yield
    from promptkit.logging import configure

    configure(level="warning")
