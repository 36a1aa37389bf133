"""The serving garbage collector (server/io/gc_policy.py): its timed pass collects the cycles made since the
last one and freezes what survived, so the older generations stay empty; stopping it gives the
interpreter its collector back as it was."""

from __future__ import annotations

import gc
import weakref

from server.io.gc_policy import ServingGC
from tests.helpers import wait_until


class Node:
    """An object that can be part of a reference cycle."""

    partner: Node | None = None


async def test_the_timed_pass_collects_new_cycles_and_freezes_survivors() -> None:
    before = gc.get_threshold()
    collector = ServingGC(threshold=10**9, every=0.01)  # no automatic pass: only the timed one can act
    collector.start()
    try:
        cycle = Node()
        cycle.partner = cycle
        gone = weakref.ref(cycle)
        del cycle
        survivors = [Node() for _ in range(100)]
        frozen = gc.get_freeze_count()
        await wait_until(lambda: gone() is None, "a timed pass collected the cycle")
        await wait_until(lambda: gc.get_freeze_count() >= frozen + len(survivors), "the survivors were frozen")
        assert gc.get_count()[1:] == (0, 0)  # nothing waits in the older generations
        assert sum(collector.pauses.counts) >= 1 and collector.longest > 0  # each pass is timed for /metrics
        assert collector.collected >= 1
    finally:
        collector.stop()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
