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
  peer is found within ``ping_interval + ping_timeout`` (plus up to a tick and a half) of its last pong, as with
  websockets. Only a pong counts as a sign of life: a message proves that the peer writes, not that it reads, and a
  bot that sends moves but reads nothing must be found as a silent one is.
* The server writes its pings straight to the transport, behind whatever waits there to be sent, where websockets'
  ``ping()`` waited for the buffer to drain first: so a pong that is late while the connection's unsent bytes went
  down since the ping (a slow reader, reading) gets another ``ping_timeout``; a peer that reads nothing never
  lowers them.
* A connection that is closing is looked at too: websockets enforces its ``close_deadline`` only inside a send
  context, which the server's writes do not use, so a peer that sent its close and then went silent, or a close
  stuck behind a peer that reads nothing, is aborted a tick after that deadline.
* The first ping comes half an interval to one interval after the connection opened (at random), so that
  connections opened together (a restart's reconnections) do not keep pinging in the same tick.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time

from websockets.protocol import OPEN

from .connections import Connection
from .frames import PING_HEADER
from .transport import DirectConnection, fail_keepalive

log = logging.getLogger("plyhall.server")

MAX_TICK = 1.0  # seconds between two looks at the due slots, at most (less for short intervals: a quarter)


class KeepaliveSweep:
    """Pings the connections given to :meth:`add` whose ping is due, and fails those whose pong is late."""

    def __init__(self, ping_interval: float, ping_timeout: float | None) -> None:
        if not ping_interval > 0 or (ping_timeout is not None and not ping_timeout > 0):
            raise ValueError(f"keepalive pings need a positive interval and timeout (None: none), not "
                             f"{ping_interval!r} and {ping_timeout!r}")
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
            try:
                self.sweep(time.monotonic())
            except Exception:  # a bug must not end keepalive for every connection: say so, and go on next tick
                log.exception("the keepalive sweep failed")
                self._next = max(self._next, math.floor(time.monotonic() / self.tick) + 1)

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
        if ws.protocol.state is not OPEN:
            self._closing(connection, ws, now)
            return
        timeout = self.timeout
        if ws.keepalive_payload is not None and timeout is not None:  # a ping out without its pong
            deadline = ws.keepalive_since + timeout
            if now >= deadline:
                unsent = ws.transport.get_write_buffer_size()
                if unsent < ws.keepalive_unsent:  # still behind the bytes queued before it, which the peer reads
                    ws.keepalive_since, ws.keepalive_unsent = now, unsent
                    self._place(connection, now + timeout)
                    return
                self._fail(ws)
                return
            self._place(connection, deadline)
            return
        alive = ws.keepalive_since  # its last ping (answered, or no timeout), or when the sweep took it
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
        ws.keepalive_unsent = transport.get_write_buffer_size()  # what the peer must read before it sees the ping
        transport.write(PING_HEADER + data)
        self.pings += 1

    def _closing(self, connection: Connection, ws: DirectConnection, now: float) -> None:
        """A connection whose closing handshake began (websockets set its ``close_deadline`` then: a close sent, or
        one received): aborted a tick past that deadline, which websockets enforces only inside a send context, and
        a close sent to a peer that reads nothing waits in its drain before reaching it; looked at again then."""
        transport = ws.transport
        deadline = ws.close_deadline  # on the event loop's clock; None: no close_timeout, none to enforce
        if deadline is None or transport.is_closing():  # (closing transport: connection_lost is on its way)
            return
        left = deadline + self.tick - ws.loop.time()
        if left <= 0:
            transport.abort()  # a peer that sent its close and went silent, or one that reads nothing
            return
        self._place(connection, now + left)

    def _fail(self, ws: DirectConnection) -> None:
        """A pong ``ping_timeout`` late: websockets' own ending (1011, "keepalive ping timeout")."""
        self.timeouts += 1
        log.debug("connection %s: no pong within %gs, closing", ws.id, self.timeout)
        task = asyncio.get_running_loop().create_task(fail_keepalive(ws))
        self._failing.add(task)
        task.add_done_callback(self._failing.discard)

