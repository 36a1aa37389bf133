"""Adoption: taking over the rooms and tournaments of a node whose lease lapsed and whose database lock is
free, and what every node does when a node was adopted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from ...storage import database_error
from .base import ALL, LEASE_SECONDS, PREFIX, LinkBase, log


class Adoption(LinkBase):
    """Takes over dead nodes' rooms, and follows the adoptions other nodes make."""

    async def _adopt(self, dead: str) -> None:
        """Take over ``dead``'s rooms and tournaments, unless its process still runs (then it keeps them)."""
        loop = asyncio.get_running_loop()
        try:
            restored = await loop.run_in_executor(self.server.reads, self.server.storage.adopt, dead)
            if restored is None:
                return  # its process still holds its lock in PostgreSQL (cut off from Redis only), or it is us
            assert self.redis is not None
            await self.redis.srem(f"{PREFIX}members", dead)
            await self.redis.delete(f"{PREFIX}listing:{dead}")
            names: list[str] = []
            if restored.rooms or restored.tournaments:
                out, names = self.hall.adopt(restored, time.monotonic())
                self.server.dispatch(out)
                self._publish_held([*names, *(name for director in self.hall.tournaments.values()
                                              for name in director.entrants)])
                log.warning("adopted %d rooms and %d tournaments of node %s (its lease lapsed, its database lock was "
                            "free)", len(restored.rooms),
                            len(restored.tournaments), dead)
                await self._publish_listing()
            self._send(ALL, ["adopted", dead, names])
            self._adopted(self.node, dead, ())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not database_error(exc):
                log.exception("could not adopt the rooms of node %s", dead)
            elif dead not in self._adoption_waits:  # said once: it is tried again at every beat
                self._adoption_waits.add(dead)
                log.warning("the rooms of node %s wait for the database to adopt them (%s)", dead,
                            " ".join(str(exc).split()))
        else:
            self._adoption_waits.discard(dead)
        finally:
            self._adopting.discard(dead)

    def _adopted(self, adopter: str, dead: str, names: Iterable[str]) -> None:
        """``adopter`` took over ``dead``'s rooms: this node's sessions seated there are attached to it."""
        self._lapsed(dead, time.monotonic() - LEASE_SECONDS)  # (its players' clocks held until they are back)
        self.view.forget(dead)
        self.live.discard(dead)
        self._said_gone.discard(dead)  # adopted: gone for good, nothing more to say of it
        self._answer_unreachable(dead)  # it died before it answered (and, deposed, it can execute nothing now)
        for nodes in self.forwarded.values():
            nodes.discard(dead)
        for key in [key for key in self.stand_ins if key[0] == dead]:  # sessions of the dead node's clients
            stand_in = self.stand_ins.pop(key)
            del self.homes[stand_in]
            self.server.dispatch(self.hall.disconnect(stand_in, time.monotonic()))
        for name in names:
            session = self.hall.by_name.get(name)
            if session is not None and session.conn >= 0:
                self._attach(adopter, session.conn, session)
        for conn, watches in sorted(self._watches.items()):  # tournaments watched there are watched where they went
            for node, request in list(watches.values()):
                if node == dead and conn in self.hall.sessions and not self.forward(conn, request):
                    self._local(conn, request)

    def _on_adopted(self, sender: str, item: list[Any], now: float) -> None:
        if item[1] == self.node:  # this process was taken for dead, or an earlier one of this node was
            self._tasks.append(asyncio.create_task(self._adopted_here(sender)))
            return
        self._adopted(sender, item[1], item[2])

    def _on_deposed(self, sender: str, item: list[Any], now: float) -> None:
        """``sender`` was deposed and stops: it is gone, as if its lease had lapsed now."""
        self._live_now(self.live - {sender})
        self._lapsed(sender, time.monotonic())
