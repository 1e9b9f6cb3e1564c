"""A command's start runs with the cyclic collector paused; what it allocated is frozen when the
start is over, and collectable again when the command ends."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from promptkit.cli._start import command_start


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_paused_while_a_command_starts() -> None:
    gc.enable()
    with command_start():
        assert not gc.isenabled()


def test_the_collector_resumes_with_the_start_frozen_when_the_start_is_over() -> None:
    gc.enable()
    with command_start() as start:
        start.over()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0


def test_the_start_is_collectable_again_when_the_command_ends() -> None:
    gc.enable()
    with command_start() as start:
        start.over()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_command_whose_start_never_ended_resumes_the_collector_when_it_ends() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), command_start():
        raise RuntimeError("the start failed")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_collector_the_caller_had_paused_stays_paused() -> None:
    gc.disable()
    with command_start() as start:
        start.over()
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_objects_the_process_froze_itself_stay_frozen() -> None:
    gc.enable()
    gc.freeze()
    frozen_before = gc.get_freeze_count()
    with command_start() as start:
        start.over()
    assert gc.get_freeze_count() == frozen_before
