"""Keepalive pings for every WebSocket connection of the server, by one task instead of one a connection.

websockets runs a task a connection that sleeps ``ping_interval``, sends a ping, and waits for its pong under
``asyncio.timeout(ping_timeout)``: at 15,000 connections and 20 s that is 750 sleeps, pings, futures and timeouts a
second, about 23,000 instructions a move at 4,800 moves a second (docs/SCALING.md, "Fifth round: the keepalive
sweep"). :class:`KeepaliveSweep` does the same work from one timer: connections sit in slots of ``tick`` seconds by
the time they next need looking at, and every tick the sweep looks at the slots that are due.

What it keeps of websockets' semantics:

* A connection is pinged once ``ping_interval`` seconds have passed since it was last known to be alive, and is
  failed with 1011 "keepalive ping timeout" (websockets' own ``protocol.fail``, its close handshake bounded by
  ``close_timeout``) when the pong has not come ``ping_timeout`` seconds after the ping. A ping may go up to half a
  tick early (the slot nearest its time), a close never comes early (the first slot after the deadline). A dead
  peer is found within ``ping_interval + ping_timeout`` (plus up to a tick and a half) of the last thing it sent, as
  with websockets.
* What it changes: a connection that sent a message within the last ``ping_interval`` is alive by the evidence of
  that message, and is not pinged. Its last message's time is what its rate limiter already keeps
  (``TokenBucket.updated``, set by every message the connection reads), so the hot path pays nothing for it. A
  player in a game is never pinged; a spectator that only listens is pinged every ``ping_interval``, as before.
  Proxies (nginx's ``proxy_read_timeout``) reset their idle timer on traffic either way.
* The first ping of a silent connection comes half an interval to one interval after it opened (at random), so
  that connections opened together (a restart's reconnections) do not keep pinging in the same tick.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time

from websockets.protocol import OPEN

from .connections import Connection
from .transport import PING_HEADER, DirectConnection, fail_keepalive

log = logging.getLogger("plyhall.server")

MAX_TICK = 1.0  # seconds between two looks at the due slots, at most (less for short intervals: a quarter)


class KeepaliveSweep:
    """Pings the connections given to :meth:`add` whose ping is due, and fails those whose pong is late."""

    def __init__(self, ping_interval: float, ping_timeout: float | None) -> None:
        self.interval = ping_interval
        self.timeout = ping_timeout
        self.tick = max(0.005, min(MAX_TICK, ping_interval / 4,
                                   MAX_TICK if ping_timeout is None else ping_timeout / 4))
        self._slots: dict[int, dict[Connection, None]] = {}  # slot number (a time / tick) -> its connections
        self._slot_of: dict[Connection, int] = {}  # where each connection waits (it is in exactly one slot)
        self._next = math.ceil(time.monotonic() / self.tick)  # the first slot not looked at yet
        self._payload = random.getrandbits(32)  # the next ping's payload (a counter: one ping out at a time)
        self.pings = 0  # pings sent
        self.looks = 0  # connections looked at (pinged or not)
        self.timeouts = 0  # connections failed for a late pong
        self._failing: set[asyncio.Task] = set()  # their close handshakes (kept: the loop keeps only weak references)

    def add(self, connection: Connection, now: float) -> None:
        """Start keeping ``connection`` alive (once its handshake is done)."""
        ws: DirectConnection = connection.ws  # type: ignore[assignment]
        since = now - self.interval * 0.5 * random.random()  # the first ping half an interval to one after now
        ws.keepalive_since = since
        bucket = connection.bucket
        if bucket.updated > since and bucket.tokens >= bucket.limit.burst:  # made with the connection: no message yet
            bucket.updated = since  # the stagger holds; the limiter is unchanged (its tokens are capped at the burst)
        self._place(connection, since + self.interval, nearest=True)

    def discard(self, connection: Connection) -> None:
        """Forget ``connection`` (it closed)."""
        slot = self._slot_of.pop(connection, None)
        if slot is not None:
            waiting = self._slots[slot]
            del waiting[connection]
            if not waiting:
                del self._slots[slot]

    def __len__(self) -> int:
        return len(self._slot_of)

    def _place(self, connection: Connection, due: float, nearest: bool = False) -> None:
        """Put ``connection`` in the slot of ``due``: the first at or after it (a pong's deadline: never early), or
        with ``nearest`` the nearest (a ping: up to half a tick early, so that pings keep their interval, not one a
        tick longer); never a slot already looked at."""
        slot = math.floor(due / self.tick + 0.5) if nearest else math.ceil(due / self.tick)
        if slot < self._next:
            slot = self._next
        self._slot_of[connection] = slot
        waiting = self._slots.get(slot)
        if waiting is None:
            self._slots[slot] = {connection: None}
        else:
            waiting[connection] = None

    async def run(self) -> None:
        """Look at the due slots every tick, for ever (cancel the task to stop)."""
        self._next = max(self._next, math.floor(time.monotonic() / self.tick))  # no empty slots since it was made
        while True:
            await asyncio.sleep(max(0.0, self._next * self.tick - time.monotonic()))
            self.sweep(time.monotonic())

    def sweep(self, now: float) -> None:
        """Look at every connection of the slots due by ``now``."""
        last = math.floor(now / self.tick)
        slots, slot_of = self._slots, self._slot_of
        while self._next <= last:
            waiting = slots.pop(self._next, None)
            self._next += 1
            if waiting:
                for connection in waiting:
                    del slot_of[connection]
                    try:
                        self._look(connection, now)
                    except Exception:  # a bug must not lose the slot's other connections, nor this one
                        log.exception("the keepalive sweep failed on a connection")
                        if connection not in slot_of:
                            self._place(connection, now + self.interval)

    def _look(self, connection: Connection, now: float) -> None:
        self.looks += 1
        ws: DirectConnection = connection.ws  # type: ignore[assignment]
        if ws.protocol.state is not OPEN:  # closing: websockets' close handshake has its own timeout
            return
        timeout = self.timeout
        if ws.keepalive_payload is not None and timeout is not None:  # a ping out without its pong
            deadline = ws.keepalive_since + timeout
            if now >= deadline:
                self._fail(ws)
                return
            self._place(connection, deadline)
            return
        alive = connection.bucket.updated  # the connection's last message
        if alive < ws.keepalive_since:  # its last ping (answered, or no timeout), or when the sweep took it
            alive = ws.keepalive_since
        if now - alive < self.interval - self.tick / 2:  # its slot is the one nearest its due time
            self._place(connection, alive + self.interval, nearest=True)
            return
        self._ping(ws, now)
        if timeout is None or timeout > self.interval:  # the next ping is due before the pong's deadline
            self._place(connection, now + self.interval, nearest=True)
        else:
            self._place(connection, now + timeout)

    def _ping(self, ws: DirectConnection, now: float) -> None:
        """Send a keepalive ping: the frame websockets' ``protocol.send_ping`` makes (a server's frames are not
        masked, and extensions leave control frames alone), written straight to the transport as the server writes its
        messages; no future: the pong is seen by ``DirectConnection.acknowledge_pings``."""
        transport = ws.transport
        if transport.is_closing():  # lost: connection_lost is on its way
            return
        self._payload = payload = (self._payload + 1) & 0xFFFFFFFF
        data = payload.to_bytes(4, "big")
        ws.keepalive_payload = data
        ws.keepalive_since = now
        transport.write(PING_HEADER + data)
        self.pings += 1

    def _fail(self, ws: DirectConnection) -> None:
        """A pong ``ping_timeout`` late: websockets' own ending (1011, "keepalive ping timeout")."""
        self.timeouts += 1
        log.debug("connection %s: no pong within %gs, closing", ws.id, self.timeout)
        task = asyncio.get_running_loop().create_task(fail_keepalive(ws))
        self._failing.add(task)
        task.add_done_callback(self._failing.discard)

