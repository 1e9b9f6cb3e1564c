"""Python's cyclic garbage collector paused for a block that only builds: `collector_paused`.

A listing of 100,000 files, the scan and the overlay built from it allocate objects by the
hundred thousand and free none. Such a block makes no cycles for the collector to find, yet its
allocations trigger a collection every few hundred objects and full passes over the whole heap
(a process that has imported an SDK holds a million objects): about a seventh of a large
listing's cost. Private to promptkit: its packages use it, users have no need to.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector for the block (which should allocate without making garbage), then
    restore it as it was: a block nested in another paused one leaves it paused."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
