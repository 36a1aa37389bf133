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

    async def _check_ownership(self) -> bool | None:
        """One proof, on a thread of its own (a database that hangs holds up nothing else); a check running
        already is waited for rather than doubled. True: this process owns its node; False: it is deposed (and
        stops); None: the database cannot say now."""
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
            return False
        except (StorageError, Exception) as exc:  # the database cannot say now: tried again at the next beat
            if self.lock == "held":
                log.error("cannot prove this node still holds its database lock (%s): its writes wait until it can",
                          exc)
            self.lock = "unverified"
            return None
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
        return True

    async def _adopted_here(self, adopter: str) -> None:
        """``adopter`` says it adopted this node's rooms: this process was taken for dead (stalled past its lease,
        its lock lost) and stops, unless the database proves it owns the node still. That is so when it was
        started again after an earlier process of the node died, and the adoption of that one's rooms was done
        before it took the node's lock (its epoch is newer than the adoption's): what it owns was never adopted,
        and stopping it would leave the node's clients with no server. When the database cannot say, the
        adopter's word stands."""
        proven = await self._check_ownership()
        if proven is None:
            self.server.depose(f"node {adopter} adopted this node's rooms")
        elif proven:
            log.warning("node %s adopted the rooms of an earlier process of this node, before this one took the node "
                        "over (epoch %s): this one serves on", adopter, self.server.storage.epoch)

    def deposed(self) -> None:
        """This node was deposed (``PlyhallServer.depose``): it stops taking part (it says nothing more to the
        other nodes; its lease lapses, and a process started again under its name takes over)."""
        self._outgoing = {}
        self._send(ALL, ["deposed"])  # the others stop counting on it at once, and hold its players' clocks
        self._flush()
        for task in self._tasks:
            task.cancel()
        self._writer.close()
