"""Fencing: every beat this node proves it still owns its rooms (its lock's connection answers and its epoch
is current), and stops taking part once deposed."""

from __future__ import annotations

import asyncio

from ...storage import Deposed, StorageError
from .base import ALL, BEAT_SECONDS, LinkBase, log


class Fencing(LinkBase):
    """Proves this node's ownership every beat; a node found deposed leaves the cluster."""

    async def _watch_ownership(self) -> None:
        """Every beat, prove that this node still owns its rooms (see the package docstring)."""
        while True:
            await asyncio.sleep(BEAT_SECONDS)
            await self._check_ownership()

    async def _check_ownership(self) -> None:
        """One proof, on a thread of its own (a database that hangs holds up nothing else); a check running
        already is waited for rather than doubled."""
        if self._checking is None:
            self._checking = asyncio.get_running_loop().run_in_executor(
                self._fencing, self.server.storage.check_ownership)
            # its outcome is read below; should the waiting task be cancelled first (the node deposed), it is read here
            self._checking.add_done_callback(lambda done: done.cancelled() or done.exception())
        checking = self._checking
        try:
            result = await asyncio.shield(checking)
        except Deposed as exc:
            self.server.depose(str(exc))
            return
        except (StorageError, Exception) as exc:  # the database cannot say now: tried again at the next beat
            if self.lock == "held":
                log.error("cannot prove this node still holds its database lock (%s): its writes wait until it can",
                          exc)
            self.lock = "unverified"
            return
        finally:
            if self._checking is checking:
                self._checking = None
        if result == "retaken":
            self.counts["lock_retaken"] += 1
            log.warning("this node's database lock had been lost (its connection dropped); taken again, before any "
                        "other node adopted its rooms (epoch %s)", self.server.storage.epoch)
        elif self.lock != "held":
            log.warning("this node's database lock is proven held again")
        self.lock = "held"

    def deposed(self) -> None:
        """This node was deposed (``PlyhallServer.depose``): it stops taking part (it says nothing more to the
        other nodes; its lease lapses, and a process started again under its name takes over)."""
        self._outgoing = {}
        self._send(ALL, ["deposed"])  # the others stop counting on it at once, and hold its players' clocks
        self._flush()
        for task in self._tasks:
            task.cancel()
        self._writer.close()
