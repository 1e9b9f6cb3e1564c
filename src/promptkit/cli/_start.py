"""A CLI command's start, with Python's cyclic garbage collector out of its way.

A command's start (its imports, the provider SDK's among them, and its set-up) allocates about a
million objects that live as long as the process, and makes next to no garbage. With the
collector running, those allocations pay for hundreds of passes over the young objects and
several over the growing heap: a tenth of a second of CPU before a model-driven `promptkit
optimize` sends its first request. So `command_start()` pauses the collector while a command
starts. When the command says its start is over (`CommandStart.over`), everything allocated so
far moves to the collector's permanent generation (`gc.freeze`: later passes skip it, where
resuming alone would make the next pass go over all of it) and collection resumes. When the
command ends, those objects go back to the oldest generation, so a process that calls the CLI's
`main()` more than once (the tests do) collects them as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class CommandStart:
    """The start of a command under way (see `command_start`)."""

    def __init__(self) -> None:
        self._was_enabled = gc.isenabled()
        # A process that froze objects itself keeps them frozen: only a freeze made here is
        # undone at the end.
        self._may_freeze = gc.get_freeze_count() == 0
        self._froze = False
        self._is_over = False
        gc.disable()

    def over(self) -> None:
        """The start is over: keep what it allocated out of later collections, and resume."""
        if self._is_over:
            return
        self._is_over = True
        if self._may_freeze:
            gc.freeze()
            self._froze = True
        if self._was_enabled:
            gc.enable()

    def end(self) -> None:
        """The command is over: its start's objects are collectable again."""
        if not self._is_over:
            self._is_over = True
            if self._was_enabled:
                gc.enable()
        if self._froze:
            gc.unfreeze()
            self._froze = False


@contextmanager
def command_start() -> Iterator[CommandStart]:
    """Pause the collector for the start of the command run in the block; call `over()` on the
    value when the start is over (else it lasts the whole block)."""
    start = CommandStart()
    try:
        yield start
    finally:
        start.end()
