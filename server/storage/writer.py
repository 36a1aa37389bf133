"""Group commit: whatever was submitted while the last commit ran goes into the next transaction.

The event loop submits the writes of each outbox and gets a sequence number back; the writer
commits every queued write at once and reports the highest sequence number it committed
(``on_commit``). Writes arriving in the same instant thus share one transaction, and nothing waits
for a commit it does not need. A failed commit (a database server restarting) is retried with
backoff; the writes stay queued, in order, until it succeeds. Closing is bounded: :meth:`Writer.aclose`
tries for a given time and then hands back what it could not commit (:meth:`Writer.unsaved`), which
the server keeps in a spill file for the next start. A commit refused because this server was deposed
(:class:`~server.storage.base.Deposed`: another server owns its rooms now) is never retried nor kept:
its writes are dropped, the messages waiting for them are never sent, and ``on_deposed`` tells the
server. Two writers share that contract:

* :class:`LoopWriter` commits on the event loop itself, once per turn of the loop: for SQLite,
  whose commit in WAL mode is a write to the page cache (tens of microseconds), handing the work
  to a thread would cost more in waiting for the interpreter lock than the commit itself. Its
  commits are spaced :data:`COMMIT_SPACING` apart at the least: a write that comes sooner after
  a commit waits for the rest of that time (its announcement with it; a lone game of two fast
  bots is held so at each move, at most 500 moves a second), so that on a busy server a commit
  carries more moves and its fixed cost and its pages, written once for all the moves on them,
  are shared by more of them;
* :class:`GroupCommitWriter` commits on a thread of its own: for a database server, where a
  commit waits for the network.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence

from .base import Deposed, Storage
from .records import Write

log = logging.getLogger("plyhall.storage")

MAX_BACKOFF = 5.0
COMMIT_SPACING = 0.002  # seconds from the end of one commit on the loop to the start of the next, at the least


def _ignored(seconds: float) -> None:
    """What a writer does with a commit's seconds when nobody keeps them."""


class Writer:
    """What both writers keep: sequence numbers, health, and figures for the metrics."""

    def __init__(self, storage: Storage, loop: asyncio.AbstractEventLoop,
                 on_commit: Callable[[int], None], on_deposed: Callable[[str], None] | None = None) -> None:
        self.storage = storage
        self.loop = loop
        self.on_commit = on_commit
        self.on_deposed = on_deposed
        self.deposed: str | None = None  # why the database refuses this server's writes, once it does
        self.submitted = 0  # sequence number of the last write submitted
        self.committed = 0  # ... and of the last one committed
        self.healthy = True  # False while commits fail
        self.commits = 0
        self.last_error = ""
        self.observe: Callable[[float], None] = _ignored  # each commit's seconds, to the metrics (their histogram;
        # a list of 10,000 read at each scrape dropped the oldest between two scrapes far apart)
        self._queue: list[Write] = []

    @property
    def queued(self) -> int:
        """Writes waiting for a commit (the storage write-queue depth)."""
        return self.submitted - self.committed

    def submit(self, writes: Sequence[Write]) -> int:
        """Queue ``writes``; the returned sequence number is committed once ``on_commit`` reports it."""
        raise NotImplementedError

    async def aclose(self, timeout: float) -> bool:
        """Commit what is queued, trying for at most ``timeout`` seconds, and stop; False when writes are left
        (:meth:`unsaved` lists them)."""
        raise NotImplementedError

    def unsaved(self) -> list[Write]:
        """The writes not known to be committed, in order (after :meth:`aclose`)."""
        return list(self._queue)

    def _refused(self, exc: Deposed, count: int) -> None:
        """The database refused a commit because another server owns this one's rooms now: everything queued is
        dropped (never committed, so never announced) and the server is told, on its event loop."""
        self.deposed = str(exc)
        self._queue = []
        log.error("the database refused %d writes: %s", count, self.deposed)
        if self.on_deposed is not None:
            try:
                self.loop.call_soon_threadsafe(self.on_deposed, self.deposed)
            except RuntimeError:  # the loop is closed: nobody to tell
                pass

    def _failed(self, exc: Exception, count: int, delay: float) -> None:
        self.healthy = False
        self.last_error = str(exc) or type(exc).__name__
        log.error("storing %d writes failed (%s); retrying in %.1f s", count, self.last_error, delay)

    def _succeeded(self, count: int, started: float) -> None:
        if not self.healthy:
            log.warning("storage is back: %d writes committed", count)
        self.healthy = True
        self.commits += 1
        self.observe(time.perf_counter() - started)


class LoopWriter(Writer):
    """Commits on the event loop, once per turn of it: everything submitted in one turn, one transaction."""

    def __init__(self, storage: Storage, loop: asyncio.AbstractEventLoop,
                 on_commit: Callable[[int], None], on_deposed: Callable[[str], None] | None = None) -> None:
        super().__init__(storage, loop, on_commit, on_deposed)
        self._scheduled = False
        self._closing = False
        self._delay = 0.1
        self._last = float("-inf")  # when the last commit ended, by the loop's clock

    def submit(self, writes: Sequence[Write]) -> int:
        """Queue ``writes`` for the commit at the end of this turn of the loop, or, within
        :data:`COMMIT_SPACING` of the last commit, for the commit that spacing after it (a busy server's commit
        then carries more moves, each for less)."""
        if self.deposed is not None:  # refused anyway: never committed, never announced
            return self.submitted
        self._queue.extend(writes)
        self.submitted += len(writes)
        if not self._scheduled:
            self._scheduled = True
            wait = self._last + COMMIT_SPACING - self.loop.time()
            if wait > 0:
                self.loop.call_later(wait, self._commit)
            else:
                self.loop.call_soon(self._commit)
        return self.submitted

    def _commit(self) -> None:
        self._scheduled = False
        if self._closing:
            return
        if not self._commit_now():  # the disk is full, the file gone: keep the writes, try again later
            self._scheduled = True
            self.loop.call_later(self._delay, self._commit)
            self._delay = min(MAX_BACKOFF, self._delay * 2)

    def _commit_now(self) -> bool:
        """One commit of everything queued; False when it failed (the writes stay queued)."""
        if not self._queue:
            return True
        batch, seq = self._queue, self.submitted
        started = time.perf_counter()
        try:
            self.storage.apply(batch)
        except Deposed as exc:
            self._refused(exc, len(batch))
            return True
        except Exception as exc:
            self._failed(exc, len(batch), self._delay)
            return False
        self._queue = []
        self._delay = 0.1
        self._succeeded(len(batch), started)
        self.committed = seq
        self._last = self.loop.time()  # before the outboxes are released: what they submit waits for its spacing
        self.on_commit(seq)
        return True

    async def aclose(self, timeout: float) -> bool:
        """Commit what is left, retrying (without blocking the loop) until ``timeout``."""
        deadline = time.monotonic() + timeout
        self._delay = 0.1  # (the retries' own pace from here: the log's "retrying in" says it)
        self._closing = True  # a timed retry of _commit left behind does nothing from now on
        while self._queue:
            self._commit_now()
            if not self._queue or time.monotonic() + self._delay > deadline:
                break
            await asyncio.sleep(self._delay)
            self._delay = min(MAX_BACKOFF, self._delay * 2)
        return not self._queue


class GroupCommitWriter(Writer):
    """Commits submitted writes on a thread of its own, in submission order."""

    def __init__(self, storage: Storage, loop: asyncio.AbstractEventLoop,
                 on_commit: Callable[[int], None], on_deposed: Callable[[str], None] | None = None) -> None:
        super().__init__(storage, loop, on_commit, on_deposed)
        self._cond = threading.Condition()
        self._stopping = False
        self._give_up_at = float("inf")
        self._inflight: list[Write] = []  # the batch being committed (retried while the database is down)
        self._thread = threading.Thread(target=self._run, name="plyhall-writer", daemon=True)
        self._thread.start()

    def submit(self, writes: Sequence[Write]) -> int:
        """Queue ``writes``; the returned sequence number is committed once ``on_commit`` reports it."""
        with self._cond:
            if self.deposed is not None:  # refused anyway: never committed, never announced
                return self.submitted
            self._queue.extend(writes)
            self.submitted += len(writes)
            self._cond.notify()
            return self.submitted

    async def aclose(self, timeout: float) -> bool:
        """Commit what is queued (retrying for at most ``timeout`` seconds) and stop the thread."""
        with self._cond:
            self._stopping = True
            self._give_up_at = time.monotonic() + timeout
            self._cond.notify()
        await self.loop.run_in_executor(None, self._thread.join, timeout + 1.0)
        return not self._thread.is_alive() and not self._queue and not self._inflight

    def unsaved(self) -> list[Write]:
        """The batch being retried, if any, and everything queued after it."""
        with self._cond:
            return [*self._inflight, *self._queue]

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue, []
                self._inflight = batch
                seq = self.submitted
            if not self._commit(batch):
                return  # giving up at shutdown (the batch and the queue stay for unsaved()), or deposed
            with self._cond:
                self._inflight = []
            self.committed = seq
            try:
                self.loop.call_soon_threadsafe(self.on_commit, seq)
            except RuntimeError:  # the loop is closed: the server is gone, nobody waits any more
                return

    def _commit(self, batch: list[Write]) -> bool:
        delay = 0.1
        while True:
            started = time.perf_counter()
            try:
                self.storage.apply(batch)
            except Deposed as exc:
                with self._cond:
                    self._inflight = []
                    self._refused(exc, len(batch))
                return False
            except Exception as exc:
                self._failed(exc, len(batch), delay)
                if self._stopping and time.monotonic() + delay > self._give_up_at:
                    log.error("giving up on %d writes at shutdown: %s", len(batch), self.last_error)
                    return False
                time.sleep(delay)
                delay = min(MAX_BACKOFF, delay * 2)
                continue
            self._succeeded(len(batch), started)
            return True
