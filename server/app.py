"""The asyncio WebSocket server: moves bytes and time into the :class:`~server.hall.Hall`.

One port serves the WebSocket endpoint ``/ws`` and read-only HTTP (``server.http``). Each
connection has an outgoing queue drained by its own writer task, so a slow client never
stalls anybody else. Durability is write-ahead: the writes of every hall outbox go to the
group-commit writer, and the outbox's messages are held until those writes are committed
(outboxes are delivered in the order they were produced, so nobody is told anything out of
order). Secrets are checked on a thread pool, never on the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import protocol
from protocol import messages as m
from protocol.codec import MAX_MESSAGE_BYTES, SUBPROTOCOLS, Codec, codec_for
from protocol.messages import ProtocolError, validate

from .env import Env
from .hall import Hall, HallOutbox, Limits
from .http import HttpApi, game_param, int_param, json_response, status_param, text_response
from .identity import SecretCheck
from .storage import Storage
from .web import STATIC_PREFIX, StaticFiles
from .writer import GroupCommitWriter

log = logging.getLogger("plyhall.server")

STRIKE_MEMORY = 10.0  # seconds without a rate-limited message after which strikes are forgotten
MAX_QUEUED = 2000  # outgoing messages waiting for one slow client before it is dropped
MAX_QUEUED_BYTES = 8 * 1024 * 1024  # ... or bytes


@dataclass
class RateLimit:
    """A token bucket: ``rate`` messages a second on average, bursts of ``burst``."""

    rate: float = 50.0
    burst: float = 200.0
    strikes_to_close: int = 50  # rate-limited messages before the connection is closed


class TokenBucket:
    """Per-connection rate limiter driven by the time it is given."""

    def __init__(self, limit: RateLimit, now: float) -> None:
        self.limit = limit
        self.tokens = limit.burst
        self.updated = now
        self.strikes = 0
        self.last_strike = now

    def take(self, now: float) -> bool:
        """Spend a token if there is one; count a strike if not.

        Strikes are forgotten after ``STRIKE_MEMORY`` quiet seconds, so an occasional burst
        never adds up to a disconnection over a long session, while a flood does."""
        self.tokens = min(self.limit.burst, self.tokens + (now - self.updated) * self.limit.rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        if now - self.last_strike > STRIKE_MEMORY:
            self.strikes = 0
        self.strikes += 1
        self.last_strike = now
        return False


class Connection:
    """One WebSocket connection: its codec, outgoing queue and writer task."""

    def __init__(self, conn_id: int, ws: ServerConnection, codec: Codec, bucket: TokenBucket) -> None:
        self.id = conn_id
        self.ws = ws
        self.codec = codec
        self.bucket = bucket
        self.queue: deque[bytes | str] = deque()
        self.queued_bytes = 0
        self.wakeup = asyncio.Event()
        self.closing = False

    def push(self, msg: dict[str, Any]) -> bool:
        """Queue a message; False when the client is too far behind (it will be closed)."""
        if self.closing:
            return True
        if len(self.queue) >= MAX_QUEUED or self.queued_bytes >= MAX_QUEUED_BYTES:
            return False
        try:
            frame = self.codec.encode(msg)
        except (ValueError, TypeError, OverflowError):  # never let one bad value cost the connection
            log.exception("could not encode a %s message", msg.get("type"))
            return True
        self.queue.append(frame)
        self.queued_bytes += len(frame)
        self.wakeup.set()
        return True

    async def writer(self) -> None:
        """Send queued frames in order until the connection closes."""
        try:
            while True:
                await self.wakeup.wait()
                self.wakeup.clear()
                while self.queue:
                    frame = self.queue.popleft()
                    self.queued_bytes -= len(frame)
                    await self.ws.send(frame)
        except ConnectionClosed:
            pass
        except Exception:
            log.exception("writer failed; closing the connection")
            self.closing = True
            await self.ws.close(1011, "internal error")

    async def drain(self, timeout: float) -> None:
        """Wait (briefly) until the queue is sent."""
        deadline = time.monotonic() + timeout
        while self.queue and time.monotonic() < deadline:
            await asyncio.sleep(0.01)


def tune_gc_for_serving() -> None:
    """Make garbage collection cheap for a long-running server process.

    A server holds many long-lived objects (connections, rooms); full collections of
    them stall every room at once. Objects alive at start-up are frozen out of
    collection, and the older generations are collected rarely.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 1000)


class PlyhallServer:
    """A running Plyhall server on one host and port."""

    def __init__(
        self,
        storage: Storage,
        host: str = "127.0.0.1",
        port: int = 8765,
        limits: Limits | None = None,
        rate_limit: RateLimit | None = None,
        room_defaults: dict[str, Any] | None = None,
        ping_interval: float = 20.0,
        ping_timeout: float = 20.0,
        env: Env | None = None,
        organiser_secret: str | None = None,
    ) -> None:
        self.storage = storage
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.host = host
        self.port = port
        self.rate_limit = rate_limit or RateLimit()
        self.hall = Hall(env, limits, room_defaults, organiser_secret)
        self.connections: dict[int, Connection] = {}
        self.restored = (0, 0)  # rooms and running games taken back from storage at start
        self._next_id = 0
        self._server: Server | None = None
        self._writer: GroupCommitWriter | None = None
        self._held: deque[tuple[int, HallOutbox]] = deque()  # outboxes waiting for their writes' commit
        self._timer_task: asyncio.Task | None = None
        self._timer_wakeup = asyncio.Event()
        self._timer_until: float | None = None  # the deadline the timer task sleeps until (None: no deadline)
        self._reads = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="plyhall-read")
        self._hashing = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="plyhall-hash")
        self.http = HttpApi()
        self.web = StaticFiles()
        self._routes()
        self.started = time.time()
        self.games_recorded = 0
        self.stopping = False

    # Life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Take back what storage kept, then listen; ``self.port`` is the real port afterwards (port 0)."""
        loop = asyncio.get_running_loop()
        restored = await loop.run_in_executor(self._reads, self.storage.load)
        self.restored = self.hall.restore(restored, time.monotonic())
        self._writer = GroupCommitWriter(self.storage, loop, self._committed)
        self._server = await serve(
            self._connection,
            self.host,
            self.port,
            subprotocols=list(SUBPROTOCOLS),
            select_subprotocol=self._select_subprotocol,
            process_request=self._process_request,
            compression=None,
            max_size=MAX_MESSAGE_BYTES,
            max_queue=64,
            ping_interval=self.ping_interval,
            ping_timeout=self.ping_timeout,
            logger=logging.getLogger("plyhall.websockets"),
        )
        sockets = list(self._server.sockets)
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self._timer_task = asyncio.create_task(self._timer())
        self._timer_wakeup.set()  # restored rooms have grace deadlines
        log.info("plyhall %s listening on ws://%s:%d/ws", protocol.__version__, self.host, self.port)

    async def stop(self) -> None:
        """Shut down cleanly: tell clients, close, commit what is queued. Running games stay stored and
        continue when a server starts again on the same database."""
        if self.stopping:
            return
        self.stopping = True
        self._dispatch(self.hall.shutdown(time.monotonic()))
        await self.flush()
        await asyncio.gather(*(c.drain(1.0) for c in self.connections.values()))
        if self._server is not None:
            self._server.close(close_connections=False)
            for connection in list(self.connections.values()):
                connection.closing = True
                await connection.ws.close(1001, "server shutting down")
            await self._server.wait_closed()
        if self._timer_task is not None:
            self._timer_task.cancel()
        if self._writer is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._writer.stop)
        self._hashing.shutdown(wait=True)
        await asyncio.get_running_loop().run_in_executor(self._reads, self.storage.close)
        self._reads.shutdown(wait=True)

    async def flush(self) -> None:
        """Wait until every write submitted so far is committed and its messages are sent."""
        while self._held or (self._writer is not None and self._writer.committed < self._writer.submitted):
            await asyncio.sleep(0.005)

    # Connections -------------------------------------------------------------------------

    def _select_subprotocol(self, connection: ServerConnection, offered: Any) -> str | None:
        for candidate in SUBPROTOCOLS:
            if candidate in offered:
                return candidate
        return None  # nothing offered: JSON (an offer of only unknown ones is refused in _process_request)

    async def _connection(self, ws: ServerConnection) -> None:
        self._next_id += 1
        conn_id = self._next_id
        connection = Connection(conn_id, ws, codec_for(ws.subprotocol), TokenBucket(self.rate_limit,
                                                                                    time.monotonic()))
        self.connections[conn_id] = connection
        address = ws.remote_address[0] if ws.remote_address else "?"
        self.hall.connect(conn_id, address)
        log.debug("connection %d from %s (%s)", conn_id, address, ws.subprotocol or "json")
        writer = asyncio.create_task(connection.writer())
        try:
            async for data in ws:
                if connection.closing:
                    # keep reading (and dropping) until the close handshake is done: a handler that
                    # stopped reading left a flooder's close reply unread until close_timeout
                    continue
                if self.stopping:
                    self._refuse_while_stopping(connection, data)
                    continue
                self._receive(connection, data)
        except ConnectionClosed:
            pass
        finally:
            self.connections.pop(conn_id, None)
            if not self.stopping:
                self._dispatch(self.hall.disconnect(conn_id, time.monotonic()))
            if connection.closing and not self.stopping:
                await connection.drain(1.0)
            writer.cancel()
            log.debug("connection %d closed", conn_id)

    def _refuse_while_stopping(self, connection: Connection, data: bytes | str) -> None:
        decoded = connection.codec.decode(data)
        msg_id = decoded.get("id") if isinstance(decoded, dict) else None
        error = m.error("server_shutdown", "the server is shutting down; log in again when it is back")
        if isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool):
            error["id"] = msg_id
        connection.push(error)

    def _receive(self, connection: Connection, data: bytes | str) -> None:
        now = time.monotonic()
        if not connection.bucket.take(now):
            if connection.bucket.strikes >= self.rate_limit.strikes_to_close:
                self._close(connection, 1008, "rate limit exceeded")
            elif connection.bucket.strikes == 1 or connection.bucket.strikes % 10 == 0:
                connection.push(ProtocolError("rate_limited", f"more than {self.rate_limit.rate:g} messages a "
                                              "second; messages are being dropped").to_message())
            return
        decoded = connection.codec.decode(data)
        if isinstance(decoded, ProtocolError):
            connection.push(decoded.to_message())
            return
        msg = validate(decoded)
        if isinstance(msg, ProtocolError):
            connection.push(msg.to_message())
            return
        try:
            out = self.hall.handle(connection.id, msg, now)
        except Exception:  # a bug must cost one reply, never the server
            log.exception("error handling %s", msg.get("type"))
            connection.push(ProtocolError("bad_message", "the server could not handle this message",
                                          msg.get("id")).to_message())
            return
        self._dispatch(out)

    def _close(self, connection: Connection, code: int, reason: str) -> None:
        if connection.closing:
            return
        connection.closing = True
        asyncio.create_task(connection.ws.close(code, reason))

    def _dispatch(self, out: HallOutbox) -> None:
        """Send ``out`` once its writes are committed (at once when it has none and nothing waits)."""
        for check in out.checks:
            self._run_check(check)
        if out.ended:
            self.games_recorded += len(out.ended)
        if out.writes and self._writer is not None:
            seq = self._writer.submit(out.writes)
        elif self._held:
            seq = self._held[-1][0]
        else:
            self._deliver(out)
            return
        self._held.append((seq, out))

    def _committed(self, seq: int) -> None:
        while self._held and self._held[0][0] <= seq:
            self._deliver(self._held.popleft()[1])

    def _deliver(self, out: HallOutbox) -> None:
        for conn_id, msg in out.messages:
            connection = self.connections.get(conn_id)
            if connection is not None and not connection.push(msg):
                self._close(connection, 1008, "too slow: too many unsent messages")
        for conn_id, reason in out.close:
            connection = self.connections.get(conn_id)
            if connection is not None:
                self._close(connection, 1000, reason)
        # wake the timer only when a deadline earlier than the one it sleeps until appeared:
        # moves push later deadlines almost always, and a wake-up per message is costly
        deadline = self.hall.next_deadline()
        if deadline is not None and (self._timer_until is None or deadline < self._timer_until):
            self._timer_wakeup.set()

    def _run_check(self, check: SecretCheck) -> None:
        future = asyncio.get_running_loop().run_in_executor(self._hashing, check.run)

        def done(result: asyncio.Future) -> None:
            if self.stopping or result.cancelled():
                return
            try:
                answer = result.result()
            except Exception:
                log.exception("checking a secret failed")
                answer = False
            self._dispatch(self.hall.secret_checked(check, answer, time.monotonic()))

        future.add_done_callback(done)

    async def _timer(self) -> None:
        while True:
            deadline = self.hall.next_deadline()
            self._timer_until = deadline
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._timer_wakeup.clear()
            try:
                await asyncio.wait_for(self._timer_wakeup.wait(), timeout)
            except TimeoutError:
                pass
            try:
                out = self.hall.tick(time.monotonic())
                if out.messages or out.writes or out.close:
                    self._dispatch(out)
            except Exception:
                log.exception("timer failed")

    # HTTP --------------------------------------------------------------------------------

    async def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?", 1)[0] == "/ws":
            offered = [p.strip() for value in request.headers.get_all("Sec-WebSocket-Protocol")
                       for p in value.split(",") if p.strip()]
            if offered and not set(offered) & set(SUBPROTOCOLS):
                return text_response(400, f"none of the offered subprotocols ({', '.join(offered)[:200]}) is "
                                     f"supported; offer {' or '.join(SUBPROTOCOLS)} (or none, for JSON)\n")
            return None
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return json_response(404, {"error": "the WebSocket endpoint is /ws"})
        return await self.http.respond(request)

    def _routes(self) -> None:
        self.http.route("/healthz", self._healthz)
        self.http.route("/api/rooms", self._api_rooms)
        self.http.route("/api/games", self._api_games)
        self.http.route("/api/games/*", self._api_game)
        self.http.route("/", self.web.index)
        self.http.route(STATIC_PREFIX + "*", self.web.file)

    async def _read(self, func: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._reads, func, *args)

    async def _healthz(self, path: str, query: dict[str, str]) -> Response:
        writer = self._writer
        database = {"ok": writer is None or writer.healthy, "queued": writer.queued if writer else 0}
        if writer is not None and not writer.healthy:
            database["error"] = writer.last_error
        return json_response(200 if database["ok"] and not self.stopping else 503, {
            "ok": not self.stopping and bool(database["ok"]), "version": protocol.__version__,
            "rooms": len(self.hall.rooms), "connections": len(self.connections),
            "uptime": round(time.time() - self.started, 1), "database": database,
        })

    async def _api_rooms(self, path: str, query: dict[str, str]) -> Response:
        return json_response(200, {"rooms": self.hall.listing(game_param(query))})

    async def _api_games(self, path: str, query: dict[str, str]) -> Response:
        limit = int_param(query, "limit", 50, 1, 500)
        offset = int_param(query, "offset", 0, 0, 10**9)
        game, status = game_param(query), status_param(query)
        games = await self._read(lambda: self.storage.list_games(limit, offset, game, query.get("player"), status,
                                                                 query.get("tournament")))
        return json_response(200, {"games": games, "limit": limit, "offset": offset})

    async def _api_game(self, path: str, query: dict[str, str]) -> Response:
        game_id = path.removeprefix("/api/games/")
        record = await self._read(self.storage.get_game, game_id)
        if record is None:
            return json_response(404, {"error": f"no game with id {game_id[:40]!r}"})
        return json_response(200, record)
