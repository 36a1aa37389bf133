"""Garbage collection for a long-running server: short pauses at any heap size.

CPython's cyclic collector pauses the whole process while it walks the objects of a
generation; a full collection of a server holding 15,000 connections walks millions of
objects (hundreds of milliseconds, every room waiting). The serving path creates no cyclic
garbage (a closed connection's cycles are broken, see ``server.io.transport.release``), so the
collector only has to find the rare cycles made since it last looked:

* every ``every`` seconds (0.1) :class:`ServingGC` collects the youngest generation and freezes
  everything that survived (``gc.freeze()`` links lists: no walking at all), so the older
  generations stay empty however big the heap grows, and a pass walks only the objects made
  since the last one and still alive;
* between two ticks the youngest generation is also collected automatically every ``threshold``
  net new objects. That count alone does not bound a pass: it is *net* (every freed object,
  old or frozen, takes one off), so while old objects are being replaced by new ones (a game's
  state, a room's record) the youngest generation grew to 40,000 objects between two automatic
  passes at 5,000 games, a 40 ms pause. The tick is what bounds it: at 5,000 games a pass
  walks a few thousand objects (a few milliseconds).

A frozen object is still freed by reference counting when its last reference goes; only a
cycle formed among survivors would outlive them, which is why the serving path must not make
any (``tests/test_server_memory.py``).
"""

from __future__ import annotations

import asyncio
import gc
import time

from .metrics import Histogram

GC_THRESHOLD = 5_000  # net new objects between two automatic collections of the youngest generation
EVERY = 0.1  # seconds between two timed passes (collect the youngest generation, freeze survivors)
NEVER = 2**30  # an automatic threshold for the older generations that is never reached
PAUSE_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)


class ServingGC:
    """Owns the process's garbage collector while a server runs (see the module documentation)."""

    def __init__(self, threshold: int = GC_THRESHOLD, every: float = EVERY) -> None:
        self.threshold = threshold
        self.every = every
        self.pauses = Histogram(PAUSE_BUCKETS)
        self.longest = 0.0
        self.collected = 0
        self._started = 0.0
        self._previous: tuple[int, int, int] | None = None
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Collect and freeze what start-up made, set the thresholds, and start the timed passes."""
        gc.collect()
        gc.freeze()
        self._previous = gc.get_threshold()
        gc.set_threshold(self.threshold, NEVER, NEVER)
        gc.callbacks.append(self._timed)
        self._task = asyncio.create_task(self._run())

    def stop(self) -> None:
        """Give the collector back to the interpreter as it was."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._timed in gc.callbacks:
            gc.callbacks.remove(self._timed)
        if self._previous is not None:
            gc.set_threshold(*self._previous)
        gc.unfreeze()

    def _timed(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        pause = time.perf_counter() - self._started
        self.pauses.observe(pause)
        self.longest = max(self.longest, pause)
        self.collected += info.get("collected", 0)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            gc.collect(0)
            gc.freeze()
