"""Fencing: every beat this node proves it still owns its rooms (its lock's connection answers and its epoch
is current), and stops taking part once deposed."""

from __future__ import annotations

import asyncio

from .base import ALL, BEAT_SECONDS, LinkBase, log


class Fencing(LinkBase):
    """Proves this node's ownership every beat; a node found deposed leaves the cluster."""

    async def _watch_ownership(self) -> None:
        """Every beat, prove that this node still owns its rooms (see the package docstring)."""
        while True:
            await asyncio.sleep(BEAT_SECONDS)
            await self._check_ownership()

    async def _check_ownership(self) -> bool | None:
        """One proof (:meth:`~server.io.ownership.OwnershipProof.check`): True, owned; False, deposed; None, the
        database cannot say now."""
        return await self.proof.check()

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
