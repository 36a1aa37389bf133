"""Time nobody could play is charged to nobody: a stall of this node, Redis away, another node's lease lapsed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ...core.cluster import credit_wait
from .base import AWAKE_SECONDS, REATTACH_SECONDS, STALL_SECONDS, LinkBase, log


class Outages(LinkBase):
    """Gives the clocks of players to move back the time of an outage they had no part in."""

    async def _watch_stalls(self) -> None:
        """A stall of this process (stopped, swapped out, a paused VM) is an outage: the players to move could not
        have their moves taken meanwhile, so the time is given back to their clocks."""
        while True:
            self.awake()
            await asyncio.sleep(AWAKE_SECONDS)

    def awake(self) -> None:
        """The event loop runs: when it had not for more than STALL_SECONDS (this process was stopped), the players
        to move get that time back, before any message that waited meanwhile is handled (the server calls this
        first for every message of a client; the Redis listener, for every message of another node)."""
        now = time.monotonic()
        stalled, self._awake_at = now - self._awake_at - AWAKE_SECONDS, now
        if stalled > STALL_SECONDS:
            log.warning("this node stalled for %.1f s: the players to move in its rooms get that time back", stalled)
            self._give_back(stalled, lambda name, session: True)
            self._await_attachments()  # the other nodes still take it for lapsed: their players cannot move yet

    def _give_back(self, seconds: float, whose: Callable[[str, Any], bool]) -> None:
        """Give ``seconds`` back to the running clock of every room of this node whose player to move ``whose``
        (its name, and its session here or None) says had no part in them."""
        now = time.monotonic()
        for room in list(self.hall.registry.rooms.values()):
            clocks = room.clocks
            if clocks is None or clocks.running is None or len(room.players) != 2:
                continue
            name = room.players[clocks.running]
            if whose(name, self.hall.by_name.get(name)):
                credit_wait(room, seconds, now)

    def _lapsed(self, node: str, since: float) -> None:
        """``node`` stopped renewing its lease about ``since``: the players to move in this node's rooms who are
        connected through it are noted, for their clocks to be held until they are back (:meth:`_hold_gone_clocks`)."""
        if node in self._gone_since:
            return
        self._gone_since[node] = since
        names = self._gone_names.setdefault(node, set())
        for room in self.hall.registry.rooms.values():
            clocks = room.clocks
            if clocks is not None and clocks.running is not None and len(room.players) == 2:
                session = self.hall.by_name.get(room.players[clocks.running])
                if session is not None and session.conn < 0 and self.homes.get(session.conn, ("",))[0] == node:
                    names.add(session.name)

    def _hold_gone_clocks(self, node: str, back: bool = False) -> None:
        """While ``node``'s lease has lapsed (stalled, or dying), its players to move in this node's rooms cannot
        move, nor hear they should: every beat, and when it lives again (``back``), the time since the last is
        given back to them, until each is connected again (through that node or another)."""
        since = self._gone_since.get(node)
        if since is None:
            return
        now = time.monotonic()
        names = self._gone_names.get(node, set())

        def away(session: Any) -> bool:
            return session.conn < 0 and self.homes.get(session.conn, ("",))[0] == node

        self._give_back(now - since, lambda name, session: name in names and (session is None or away(session)))
        names.difference_update({name for name in names if (session := self.hall.by_name.get(name)) is not None
                                 and not away(session)})
        if back:  # a player whose seat here it dropped meanwhile (the node was adopted) is held until it comes back
            del self._gone_since[node]
            for name in self._gone_names.pop(node, set()):
                if self.hall.by_name.get(name) is None:
                    self._unreached.setdefault(name, now)
                    self._unreached_until = max(self._unreached_until, now + REATTACH_SECONDS)
        else:
            self._gone_since[node] = now

    def _returned(self, node: str) -> None:
        """``node`` lives again after its lease lapsed."""
        self._hold_gone_clocks(node, back=True)

    def _hold_remote_clocks(self) -> None:
        """While Redis is away, the clock of a player of another node whose turn it is does not run (what this
        node sends that player is lost meanwhile, and its moves cannot arrive): every beat, and when Redis is
        back, the time since the last is given back to it."""
        if self._lost_at is None:
            return
        now = time.monotonic()
        seconds, self._lost_at = now - self._lost_at, (None if self.up else now)
        # a stand-in: the player is on another node
        self._give_back(seconds, lambda name, session: session is not None and session.conn < 0)

    def _await_attachments(self) -> None:
        """Redis is back, or this node woke from a stall: a player of another node whose turn it is in this node's
        rooms can move only once its node attaches it here again (after Redis was away: this node then resends the
        state, what it sent meanwhile was lost) or knows this node lives again (after a stall: its moves were
        answered cluster_unavailable meanwhile). Its clock is held until then (:meth:`_reached`: its node attaches
        it, or sends a request of it), for REATTACH_SECONDS at most."""
        now = time.monotonic()
        for room in self.hall.registry.rooms.values():
            clocks = room.clocks
            if clocks is not None and clocks.running is not None and clocks.final is None and len(room.players) == 2:
                session = self.hall.by_name.get(room.players[clocks.running])
                if session is not None and session.conn < 0:
                    self._unreached.setdefault(session.name, now)
        self._unreached_until = max(self._unreached_until, now + REATTACH_SECONDS)

    def _hold_unreached(self) -> None:
        """Every beat: the time since the last is given back to the players not attached again yet (and none once
        REATTACH_SECONDS have passed)."""
        if not self._unreached:
            return
        now = time.monotonic()
        for name in list(self._unreached):
            self._reached(name, now, still=now < self._unreached_until)

    def _reached(self, name: str, now: float, still: bool = False) -> None:
        """``name``'s node attached it again, or sent a request of it: the time its clock was held since the last
        beat is given back, and it is held no more (unless ``still``)."""
        since = self._unreached.pop(name, None)
        if since is None:
            return
        for room_name in self.hall.seat_holders.get(name, ()):
            room = self.hall.registry.rooms.get(room_name)
            clocks = room.clocks if room is not None else None
            if room is not None and clocks is not None and clocks.running is not None and len(room.players) == 2 \
                    and room.players[clocks.running] == name:
                credit_wait(room, now - since, now)
        if still:
            self._unreached[name] = now
