"""Group commit: one writer thread commits whatever was queued while the last commit ran.

The event loop submits the writes of each outbox and gets a sequence number back; the writer
thread takes every queued write at once, commits them in one transaction and reports the
highest sequence number it committed (on the loop, through ``call_soon_threadsafe``). Writes
arriving in the same instant thus share one transaction, and nothing waits for a commit it
does not need. A failed commit (a database server restarting) is retried with backoff; the
writes stay queued, in order, until it succeeds.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from .records import Write
from .storage import Storage

log = logging.getLogger("plyhall.storage")

MAX_BACKOFF = 5.0


class GroupCommitWriter:
    """Commits submitted writes on a thread of its own, in submission order."""

    def __init__(self, storage: Storage, loop: asyncio.AbstractEventLoop,
                 on_commit: Callable[[int], None]) -> None:
        self.storage = storage
        self.loop = loop
        self.on_commit = on_commit
        self.submitted = 0  # sequence number of the last write submitted
        self.committed = 0  # ... and of the last one committed
        self.healthy = True  # False while commits fail
        self.commits = 0
        self.last_error = ""
        self.commit_seconds: deque[float] = deque(maxlen=10_000)  # latencies of recent commits, for the metrics
        self._queue: list[Write] = []
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="plyhall-writer", daemon=True)
        self._thread.start()

    @property
    def queued(self) -> int:
        """Writes waiting for a commit (the storage write-queue depth)."""
        return self.submitted - self.committed

    def submit(self, writes: Sequence[Write]) -> int:
        """Queue ``writes``; the returned sequence number is committed once ``on_commit`` reports it."""
        with self._cond:
            self._queue.extend(writes)
            self.submitted += len(writes)
            self._cond.notify()
            return self.submitted

    def stop(self, timeout: float = 10.0) -> bool:
        """Commit what is queued and stop the thread; False when it could not finish in ``timeout``."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue, []
                seq = self.submitted
            self._commit(batch)
            self.committed = seq
            try:
                self.loop.call_soon_threadsafe(self.on_commit, seq)
            except RuntimeError:  # the loop is closed: the server is gone, nobody waits any more
                return

    def _commit(self, batch: list[Write]) -> None:
        delay = 0.1
        while True:
            started = time.perf_counter()
            try:
                self.storage.apply(batch)
            except Exception as exc:
                self.healthy = False
                self.last_error = str(exc) or type(exc).__name__
                log.error("storing %d writes failed (%s); retrying in %.1f s", len(batch), self.last_error, delay)
                time.sleep(delay)
                delay = min(MAX_BACKOFF, delay * 2)
                if self._stopping and delay >= MAX_BACKOFF:
                    log.error("giving up on %d writes at shutdown: %s", len(batch), self.last_error)
                    return
                continue
            if not self.healthy:
                log.warning("storage is back: %d writes committed", len(batch))
            self.healthy = True
            self.commits += 1
            self.commit_seconds.append(time.perf_counter() - started)
            return
