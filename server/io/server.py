"""The asyncio WebSocket server: moves bytes and time into the :class:`~server.core.hall.Hall`.

One port serves the WebSocket endpoint ``/ws`` and read-only HTTP (``server.io.http``). Messages
are written into each connection's transport at once; a slow client's unsent data stays in its
own buffer (and costs it the connection past a limit), so it never stalls anybody else.
Durability is write-ahead: the writes of every hall outbox go to the group-commit writer, and
the outbox's messages are held until those writes are committed (outboxes are delivered in the
order they were produced, so nobody is told anything out of order). Secrets are checked on a
thread pool, never on the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections import deque
from functools import partial
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import protocol
from protocol.codec import MAX_MESSAGE_BYTES, SUBPROTOCOLS, codec_for

from ..core.env import Env
from ..core.hall import Hall, HallOutbox, LadderConfig, Limits
from ..storage import Storage
from ..storage.records import AnalysisSaved
from ..storage.writer import GroupCommitWriter, LoopWriter, Writer
from .analysis import AnalysisQueue
from .api import Api
from .checks import Checks
from .closing import close_all, keep_unsaved, take_back
from .cluster import ClusterLink
from .connections import Connection, ConnectionQuota, OpeningQuota, RateLimit, TokenBucket
from .delivery import Delivery
from .gc_policy import ServingGC
from .http import CLIENT, text_response
from .keepalive import KeepaliveSweep
from .metrics import Metrics
from .ownership import LONE_EVERY, OwnershipProof
from .supervisor import HouseBots
from .transport import (
    DirectConnection,
    Network,
    answer_pipelined,
    client_address,
    endpoint_misuse,
    is_upgrade,
    release,
    select_subprotocol,
    subprotocol_refusal,
    within,
)

log = logging.getLogger("plyhall.server")

SHUTDOWN_SECONDS = 10.0  # the longest a stop takes, whatever the clients and the database do


class PlyhallServer(Delivery):
    """A running Plyhall server on one host and port."""

    def __init__(
        self,
        storage: Storage,
        host: str = "127.0.0.1",
        port: int = 8765,
        limits: Limits | None = None,
        rate_limit: RateLimit | None = None,
        room_defaults: dict[str, Any] | None = None,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        env: Env | None = None,
        organiser_secret: str | None = None,
        house_bots: int = 0,
        serving_gc: bool = False,
        trusted_proxies: list[Network] | None = None,
        analysis: dict[str, Any] | None = None,
        ladder: LadderConfig | None = None,
        cluster: str | None = None,
        reuse_port: bool = False,
    ) -> None:
        self.storage = storage
        self.deposed: str | None = None  # why this node no longer owns its rooms (a cluster node fenced off)
        self.deposed_event = asyncio.Event()
        self.trusted_proxies = trusted_proxies or []  # peers whose X-Forwarded-For names the real client
        self.ping_interval = ping_interval  # None: no keepalive pings
        self.ping_timeout = ping_timeout  # None: pings, but no connection is closed for a late pong
        # one task pings every connection (websockets' own keepalive, a task a connection, is off)
        self.keepalive = KeepaliveSweep(ping_interval, ping_timeout) if ping_interval is not None else None
        self._keepalive_task: asyncio.Task | None = None
        self.host = host
        self.port = port
        self.rate_limit = rate_limit or RateLimit()
        self.large_answers = {}
        self.reuse_port = reuse_port  # several servers share the port (plyhall serve --workers)
        self.cluster_url = cluster  # redis://...: this server is a node of a cluster (server.io.cluster)
        self.cluster: ClusterLink | None = None
        self.hall = Hall(env, limits, room_defaults, organiser_secret, house_bots, storage.shared, ladder=ladder)
        self.hall.logins.look_up_claims = True  # plyhall names add may register names while the server runs
        self.house: HouseBots | None = None
        self._house_task: asyncio.Task | None = None
        self.connections: dict[int, Connection] = {}
        self.restored = (0, 0)  # rooms and running games taken back from storage at start
        self._next_id = 0
        self._server: Server | None = None
        self.writer: Writer | None = None
        # outboxes waiting for their writes' commit, with when they were made
        self._held: deque[tuple[int, HallOutbox, float]] = deque()
        self._timer_task: asyncio.Task | None = None
        self._timer_wakeup = asyncio.Event()
        self._timer_until: float | None = None  # the deadline the timer task sleeps until (None: no deadline)
        self.reads = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="plyhall-read")
        self.checks = Checks(self)
        self.api = Api(self)
        self.gc = ServingGC() if serving_gc else None  # `plyhall serve` owns its process's collector
        self.metrics = Metrics(self.api.gauges)
        self.quota = ConnectionQuota(self.hall.limits, self.metrics.refusals)
        self.opening = OpeningQuota(self.hall.limits, self.metrics.refusals, self._peer_counts_as)
        self._lag_task: asyncio.Task | None = None
        self._ownership: OwnershipProof | None = None  # a lone server's proof that it still holds its database lock
        self._ownership_task: asyncio.Task | None = None
        self.started = time.time()
        self.games_recorded = 0
        self.stopping = False
        self.replayed: str | None = None  # what the spill file of an earlier stop held (replayed at start)
        self.unsaved: str | None = None  # what this stop could not store in the database
        self.stuck = False  # a thread of the database's was still busy when the stop's time was up
        analysis = dict(analysis or {})  # workers, nodes, finished (analyse every game that ends), command
        self.analyse_finished = bool(analysis.pop("finished", False))
        self.analysis = AnalysisQueue(storage.get_game, self.reads, lambda game_id, data: self.dispatch(
            HallOutbox(writes=[AnalysisSaved(game_id, data)])), **analysis)

    # Life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Take back what storage kept, then listen; ``self.port`` is the real port afterwards (port 0)."""
        loop = asyncio.get_running_loop()
        self.replayed, self.restored = await take_back(self.storage, self.hall, self.reads, time.monotonic())
        if self.storage.commits_inline:
            self.storage.checkpoint_in_background()
            self.writer = LoopWriter(self.storage, loop, self._committed, self.depose)
        else:
            self.writer = GroupCommitWriter(self.storage, loop, self._committed, self.depose)
        self.writer.observe = self.metrics.commit.observe  # (one thread commits: the only one that counts)
        if self.hall.restored_writes:
            restored_writes, self.hall.restored_writes = self.hall.restored_writes, []
            self.dispatch(HallOutbox(writes=restored_writes))
        if self.cluster_url:
            self.cluster = ClusterLink(self, self.cluster_url, self.storage.node)
            await self.cluster.start()
        elif self.storage.shared:  # a lone server on PostgreSQL: its lock taken again after a database restart
            self._ownership = OwnershipProof(self)
            self._ownership_task = asyncio.create_task(self._ownership.every(LONE_EVERY))
        self._server = await serve(
            self._connection,
            self.host,
            self.port,
            subprotocols=list(SUBPROTOCOLS),
            select_subprotocol=select_subprotocol,
            process_request=self._process_request,
            compression=None,
            create_connection=partial(DirectConnection, opening=self.opening),  # type: ignore[arg-type]
            max_size=MAX_MESSAGE_BYTES,
            max_queue=64,
            reuse_port=self.reuse_port,
            ping_interval=None,  # self.keepalive instead
            ping_timeout=None,
            logger=logging.getLogger("plyhall.websockets"),
        )
        sockets = list(self._server.sockets)
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self._timer_task = asyncio.create_task(self._timer())
        self._timer_wakeup.set()  # restored rooms have grace deadlines
        self._lag_task = asyncio.create_task(self.metrics.watch_loop())
        if self.keepalive is not None:
            self._keepalive_task = asyncio.create_task(self.keepalive.run())
        self.analysis.start()
        if self.gc is not None:
            self.gc.start()
        if self.hall.house.limit:
            host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::", "localhost") else self.host
            self.house = HouseBots(f"ws://{host}:{self.port}/ws", self.hall.house_secret, self._house_exited)
            self._house_task = asyncio.create_task(self.house.reap_forever())
            restarted, self.hall.restarted_house = self.hall.restarted_house, []
            self.dispatch(HallOutbox(house=restarted))
        self.dispatch(self.hall.resume_tournaments(time.monotonic()))
        log.info("plyhall %s listening on ws://%s:%d/ws", protocol.__version__, self.host, self.port)

    async def stop(self, timeout: float = SHUTDOWN_SECONDS) -> None:
        """Shut down within ``timeout`` seconds, whatever the clients and the database do: tell the clients,
        commit what is queued while the database lets us, close every connection at once (code 1001), and
        keep what could not be committed in the spill file for the next start (``self.unsaved`` says what).
        Running games stay stored and continue when a server starts again on the same database."""
        if self.stopping:
            return
        self.stopping = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        goodbye = self.hall.shutdown(time.monotonic())
        goodbye.messages = [(conn, msg) for conn, msg in goodbye.messages if conn >= 0]  # not other nodes' clients
        self.dispatch(goodbye)
        if self._server is not None:
            self._server.close(close_connections=False)  # no new connections from here on
        # what is committed reaches its clients before they are closed (a failing database gets its retries below)
        healthy = self.writer is None or self.writer.healthy
        await self.flush(timeout=timeout * (0.3 if healthy else 0.05))
        await asyncio.gather(*(c.drain(0.5) for c in self.connections.values()))
        await close_all(list(self.connections.values()), self._server, max(0.5, min(2.0, deadline - loop.time() - 4.0)))
        if self.cluster is not None:
            await self.cluster.stop()
        for task in (self._timer_task, self._lag_task, self._house_task, self._keepalive_task, self._ownership_task):
            if task is not None:
                task.cancel()
        if self._ownership is not None:
            self._ownership.close()
        if self.gc is not None:
            self.gc.stop()
        if self.house is not None:
            await loop.run_in_executor(None, self.house.stop_all, 1.0)
        await self.analysis.stop()  # before the writer's last commit: an analysis saved meanwhile is in it
        if self.writer is not None and not await self.writer.aclose(max(0.5, deadline - loop.time() - 2.0)):
            self.unsaved = keep_unsaved(self.storage, self.writer.unsaved())
        self.checks.close()
        try:
            async with asyncio.timeout(max(0.5, deadline - loop.time())):
                await loop.run_in_executor(self.reads, self.storage.close)
        except TimeoutError:
            log.error("the database did not close in time; stopping anyway")
            self.stuck = True
        self.reads.shutdown(wait=False, cancel_futures=True)

    def depose(self, reason: str) -> None:
        """Another node owns this node's rooms now (the database refused a write, the lock was lost to another
        server, a node adopted this one): stop serving at once. Nothing more is sent or stored, no new connection
        is taken, and every client is closed (1012) to reconnect and resync wherever its rooms are now;
        ``deposed_event`` tells whoever runs this server (``plyhall serve`` exits, to be started again)."""
        if self.deposed is not None:
            return
        self.deposed = reason
        log.error("this node is deposed and stops serving: %s", reason)
        self._held.clear()  # waiting for writes the database refuses: never sent
        if self._server is not None:
            self._server.close(close_connections=False)
        for connection in list(self.connections.values()):
            self.close_connection(connection, 1012, "this node lost its rooms to another: reconnect to resync")
        if self.cluster is not None:
            self.cluster.deposed()
        self.deposed_event.set()

    async def flush(self, timeout: float | None = None) -> bool:
        """Wait until every write submitted so far is committed and its messages are sent (at most ``timeout``
        seconds; False when that time ran out first)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.deposed and (self._held or (self.writer is not None and
                                                   self.writer.committed < self.writer.submitted)):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.005)
        return True

    # Connections -------------------------------------------------------------------------

    def _address(self, connection: ServerConnection) -> str:
        """What a connection's quotas and back-off count by (see ``transport.client_address``)."""
        peer = connection.remote_address[0] if connection.remote_address else "?"
        headers = connection.request.headers if connection.request is not None else Headers()
        return client_address(peer, headers, self.trusted_proxies)

    def _peer_counts_as(self, peer: str) -> str | None:
        """The address a connection from ``peer`` counts as while it opens; None for a trusted proxy."""
        if self.trusted_proxies and within(peer, self.trusted_proxies):
            return None
        return client_address(peer, Headers(), ())

    async def _connection(self, ws: DirectConnection) -> None:
        address = self._address(ws)
        if self.quota.full(address):  # handshakes that raced past the check in _process_request
            await ws.close(1008, "too many connections from your address")
            release(ws)
            return
        self.quota.open[address] += 1
        try:
            await self._serve_connection(ws, address)
        finally:
            self.quota.closed(address)

    async def _serve_connection(self, ws: DirectConnection, address: str) -> None:
        self._next_id += 1
        conn_id = self._next_id
        connection = Connection(conn_id, ws, codec_for(ws.subprotocol), TokenBucket(self.rate_limit,
                                                                                    time.monotonic()))
        self.connections[conn_id] = connection
        self.hall.connect(conn_id, address)
        log.debug("connection %d from %s (%s)", conn_id, address, ws.subprotocol or "json")
        ws.on_message = partial(self._receive, connection)  # no Python frame of its own, as a lambda has
        ws.charge = connection.bucket.spend  # pings and fragments count against the rate limit too
        ws.read_buffered()
        try:
            if self.keepalive is not None:
                self.keepalive.add(connection, time.monotonic())
            # whole messages arrive through on_message; only fragmented ones (rare) come this way
            async for data in ws:
                self._receive(connection, data)
        except ConnectionClosed:
            pass
        finally:
            self.connections.pop(conn_id, None)
            if self.keepalive is not None:
                self.keepalive.discard(connection)
            if self.cluster is not None:
                self.cluster.disconnected(conn_id)
            if not self.stopping:
                self.dispatch(self.hall.disconnect(conn_id, time.monotonic()))
            if connection.closing and not self.stopping:
                await connection.drain(1.0)
            log.debug("connection %d closed", conn_id)
            await ws.wait_closed()
            release(ws)

    async def _timer(self) -> None:
        while True:
            deadline = self.hall.next_deadline()
            self._timer_until = deadline
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._timer_wakeup.clear()
            try:  # not wait_for, which on 3.11 loses a cancel that meets a wake-up: the task would run on
                async with asyncio.timeout(timeout):
                    await self._timer_wakeup.wait()
            except TimeoutError:
                pass
            try:
                now = time.monotonic()
                self.credit_held(now)  # a turn not announced yet (its commit waits) does not run out
                out = self.hall.tick(now)
                if out.messages or out.writes or out.close:
                    self.dispatch(out)
            except Exception:
                log.exception("timer failed")

    # HTTP --------------------------------------------------------------------------------

    async def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if is_upgrade(request):
            address = self._address(connection)
            if self.quota.full(address):
                return text_response(429, self.quota.refusal(address))
            return subprotocol_refusal(request)
        CLIENT.set(self._address(connection))  # what the HTTP quota and the analysis queue count by
        return await answer_pipelined(connection, await self._plain(request), self._plain)

    async def _plain(self, request: Request) -> Response:
        """The answer to a plain HTTP request."""
        return endpoint_misuse(request) or await self.api.http.respond(request)
