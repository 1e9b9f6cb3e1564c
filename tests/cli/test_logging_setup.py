"""The CLI's logging set-up: made when the first record is written, so a command that logs
nothing never imports structlog; structlog is then imported as if rich were absent (the CLI's
records never use rich's tracebacks), and rich stays importable for what the command imports
later."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ..conftest import REPO_ROOT, run_process

pytest.importorskip("rich")  # without rich installed there is nothing to hide

# Runs a command that logs nothing through `main`, writes a record as a command's first record
# would, then reports what structlog saw and whether rich imports.
PROBE = """
import json, sys
from promptkit.cli import main
from promptkit.logging import get_logger
status = main(sys.argv[1:])
imported_by_the_command = "structlog" in sys.modules
get_logger("promptkit.test").debug("first_record")
import structlog.dev
import rich.console
print(json.dumps({
    "status": status,
    "structlog_imported_by_the_command": imported_by_the_command,
    "structlog_uses_rich": structlog.dev.rich is not None,
    "rich_importable": rich.console.Console is not None,
}))
"""


def _probe(repo: Path) -> dict[str, object]:
    completed = run_process(
        [sys.executable, "-c", PROBE, "digest", "status", str(repo), "--json"], cwd=REPO_ROOT
    )
    assert completed.returncode == 0, completed.stderr
    report: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["status"] == 0
    return report


def test_a_command_that_logs_nothing_never_imports_structlog(repo: Path) -> None:
    assert _probe(repo)["structlog_imported_by_the_command"] is False


def test_the_cli_sets_up_logging_without_structlog_importing_rich(repo: Path) -> None:
    assert _probe(repo)["structlog_uses_rich"] is False


def test_rich_stays_importable_after_the_cli_set_up_logging(repo: Path) -> None:
    assert _probe(repo)["rich_importable"] is True
