"""Garbage collection for a long-running server: short pauses at any heap size.

CPython's cyclic collector pauses the whole process while it walks the objects of a
generation; a full collection of a server holding 15,000 connections walks millions of
objects (hundreds of milliseconds, every room waiting). The serving path creates no cyclic
garbage (a closed connection's cycles are broken, see ``server.app.release``), so the
collector only has to find the rare cycles made since it last looked:

* automatic collection is off;
* once a second :class:`ServingGC` collects the objects allocated since the previous second
  (``gc.collect()`` skips frozen objects) and then freezes the survivors (``gc.freeze()``), so the
  next pass again walks one second's worth of allocations, however big the heap has grown.

A frozen object is still freed by reference counting when its last reference goes; only a
cycle formed among frozen objects would outlive them, which is why the serving path must not
make any (``tests/test_server_memory.py``).
"""

from __future__ import annotations

import asyncio
import gc
import time

from .metrics import Histogram

GC_INTERVAL = 1.0  # seconds between two passes
PAUSE_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)


class ServingGC:
    """Owns the process's garbage collector while a server runs (see the module documentation)."""

    def __init__(self, interval: float = GC_INTERVAL) -> None:
        self.interval = interval
        self.pauses = Histogram(PAUSE_BUCKETS)
        self.longest = 0.0
        self.collected = 0
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Collect and freeze what start-up made, turn automatic collection off, and start the passes."""
        gc.collect()
        gc.freeze()
        gc.disable()
        self._task = asyncio.create_task(self._run())

    def stop(self) -> None:
        """Stop the passes and give the collector back to the interpreter."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        gc.unfreeze()
        gc.enable()

    def collect(self) -> float:
        """One pass: collect the unfrozen objects, freeze the survivors; returns the pause in seconds."""
        started = time.perf_counter()
        self.collected += gc.collect()
        gc.freeze()
        pause = time.perf_counter() - started
        self.pauses.observe(pause)
        self.longest = max(self.longest, pause)
        return pause

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.collect()
