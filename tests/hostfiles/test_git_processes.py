"""Waiting for git (and any child) with a time limit: `exits_within`."""

from __future__ import annotations

import subprocess
import sys

from promptkit.hostfiles._git import exits_within


def _child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL)


def test_a_child_that_exits_is_reaped_with_its_status() -> None:
    child = _child("raise SystemExit(3)")

    assert exits_within(child, 30.0)
    assert child.returncode == 3


def test_a_child_still_running_at_the_limit_is_reported_and_left_running() -> None:
    child = _child("import time; time.sleep(60)")
    try:
        assert not exits_within(child, 0.05)
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_a_child_reaped_before_is_reported_as_exited() -> None:
    child = _child("pass")
    child.wait()

    assert exits_within(child, 30.0)
