"""The asyncio WebSocket server: moves bytes and time into the :class:`Hall`.

One port serves the WebSocket endpoint ``/ws`` and read-only HTTP GET
(``/healthz``, ``/api/rooms``, ``/api/games``, ``/api/games/ID``). Each
connection has an outgoing queue drained by its own writer task, so a slow
client never stalls anybody else; storage runs on one writer thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import http
import json
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import protocol
from protocol.codec import MAX_MESSAGE_BYTES, SUBPROTOCOLS, Codec, codec_for
from protocol.messages import ProtocolError, validate

from .hall import Hall, HallOutbox, Limits
from .storage import Storage

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


class Client:
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
    ) -> None:
        self.storage = storage
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.host = host
        self.port = port
        self.rate_limit = rate_limit or RateLimit()
        self.hall = Hall(storage.load_claims(), limits, room_defaults)
        self.clients: dict[int, Client] = {}
        self._next_id = 0
        self._server: Server | None = None
        self._timer_task: asyncio.Task | None = None
        self._timer_wakeup = asyncio.Event()
        self._timer_until: float | None = None  # the deadline the timer task sleeps until (None: no deadline)
        self._db = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="plyhall-db")
        self._pending: set[asyncio.Future] = set()
        self.started = time.time()
        self.games_recorded = 0
        self.stopping = False

    # Life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen; ``self.port`` is the real port afterwards (useful with port 0)."""
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
        log.info("plyhall %s listening on ws://%s:%d/ws", protocol.__version__, self.host, self.port)

    async def stop(self) -> None:
        """Shut down cleanly: abort and record running games, tell clients, close, flush storage."""
        if self.stopping:
            return
        self.stopping = True
        self._dispatch(self.hall.shutdown(time.monotonic()))
        await asyncio.gather(*(c.drain(1.0) for c in self.clients.values()))
        if self._server is not None:
            self._server.close(close_connections=False)
            for client in list(self.clients.values()):
                client.closing = True
                await client.ws.close(1001, "server shutting down")
            await self._server.wait_closed()
        if self._timer_task is not None:
            self._timer_task.cancel()
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        await asyncio.get_running_loop().run_in_executor(self._db, self.storage.close)
        self._db.shutdown(wait=True)

    # Connections -------------------------------------------------------------------------

    def _select_subprotocol(self, connection: ServerConnection, offered: Any) -> str | None:
        for candidate in SUBPROTOCOLS:
            if candidate in offered:
                return candidate
        return None  # no (known) subprotocol offered: JSON

    async def _connection(self, ws: ServerConnection) -> None:
        self._next_id += 1
        conn_id = self._next_id
        client = Client(conn_id, ws, codec_for(ws.subprotocol), TokenBucket(self.rate_limit, time.monotonic()))
        self.clients[conn_id] = client
        writer = asyncio.create_task(client.writer())
        try:
            async for data in ws:
                if self.stopping:
                    break
                if client.closing:
                    # keep reading (and dropping) until the close handshake is done: a handler that
                    # stopped reading left a flooder's close reply unread until close_timeout
                    continue
                self._receive(client, data)
        except ConnectionClosed:
            pass
        finally:
            self.clients.pop(conn_id, None)
            if not self.stopping:
                self._dispatch(self.hall.disconnect(conn_id, time.monotonic()))
            if client.closing and not self.stopping:
                await client.drain(1.0)
            writer.cancel()

    def _receive(self, client: Client, data: bytes | str) -> None:
        now = time.monotonic()
        if not client.bucket.take(now):
            if client.bucket.strikes >= self.rate_limit.strikes_to_close:
                self._close(client, 1008, "rate limit exceeded")
            elif client.bucket.strikes == 1 or client.bucket.strikes % 10 == 0:
                client.push(ProtocolError("rate_limited", f"more than {self.rate_limit.rate:g} messages a second; "
                                          "messages are being dropped").to_message())
            return
        decoded = client.codec.decode(data)
        if isinstance(decoded, ProtocolError):
            client.push(decoded.to_message())
            return
        msg = validate(decoded)
        if isinstance(msg, ProtocolError):
            client.push(msg.to_message())
            return
        try:
            out = self.hall.handle(client.id, msg, now)
        except Exception:  # a bug must cost one reply, never the server
            log.exception("error handling %s", msg.get("type"))
            client.push(ProtocolError("bad_message", "the server could not handle this message",
                                      msg.get("id")).to_message())
            return
        self._dispatch(out)

    def _close(self, client: Client, code: int, reason: str) -> None:
        if client.closing:
            return
        client.closing = True
        asyncio.create_task(client.ws.close(code, reason))

    def _dispatch(self, out: HallOutbox) -> None:
        for conn_id, msg in out.messages:
            client = self.clients.get(conn_id)
            if client is not None and not client.push(msg):
                self._close(client, 1008, "too slow: too many unsent messages")
        for conn_id, reason in out.close:
            client = self.clients.get(conn_id)
            if client is not None:
                self._close(client, 1000, reason)
        for name, claim in out.claims:
            self._store(self.storage.save_claim, name, claim)
        for record in out.records:
            self.games_recorded += 1
            self._store(self.storage.save_game, record)
        # wake the timer only when a deadline earlier than the one it sleeps until appeared:
        # moves push later deadlines almost always, and a wake-up per message is costly
        deadline = self.hall.next_deadline()
        if deadline is not None and (self._timer_until is None or deadline < self._timer_until):
            self._timer_wakeup.set()

    def _store(self, func: Any, *args: Any) -> None:
        future = asyncio.get_running_loop().run_in_executor(self._db, func, *args)
        self._pending.add(future)
        future.add_done_callback(self._stored)

    def _stored(self, future: asyncio.Future) -> None:
        self._pending.discard(future)
        if future.exception() is not None:
            log.error("storing failed: %s", future.exception())

    async def flush(self) -> None:
        """Wait until every queued storage write has finished."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

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
                self._dispatch_timer()
            except Exception:
                log.exception("timer failed")

    def _dispatch_timer(self) -> None:
        out = self.hall.tick(time.monotonic())
        if out.messages or out.records:
            self._dispatch(out)

    # HTTP --------------------------------------------------------------------------------

    async def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        if url.path == "/ws":
            return None
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return _json_response(404, {"error": "the WebSocket endpoint is /ws"})
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            return await self._http_get(url.path, query)
        except ValueError as exc:
            return _json_response(400, {"error": str(exc)})

    async def _http_get(self, path: str, query: dict[str, str]) -> Response:
        if path == "/healthz":
            return _json_response(200, {
                "ok": not self.stopping, "version": protocol.__version__, "rooms": len(self.hall.rooms),
                "connections": len(self.clients), "uptime": round(time.time() - self.started, 1),
            })
        if path == "/api/rooms":
            return _json_response(200, {"rooms": self.hall.listing(query.get("game"))})
        if path == "/api/games":
            limit = _int_param(query, "limit", 50, 1, 500)
            offset = _int_param(query, "offset", 0, 0, 10**9)
            games = await asyncio.get_running_loop().run_in_executor(
                self._db, lambda: self.storage.list_games(limit, offset, query.get("game"), query.get("player")))
            return _json_response(200, {"games": games, "limit": limit, "offset": offset})
        if path.startswith("/api/games/"):
            game_id = path.removeprefix("/api/games/")
            record = await asyncio.get_running_loop().run_in_executor(self._db, self.storage.get_game, game_id)
            if record is None:
                return _json_response(404, {"error": f"no game with id {game_id[:40]!r}"})
            return _json_response(200, record)
        if path == "/":
            return _text_response(200, INDEX_TEXT.format(version=protocol.__version__, rooms=len(self.hall.rooms)))
        return _json_response(404, {"error": f"no such page {path[:80]!r}; try /healthz, /api/rooms, /api/games"})


INDEX_TEXT = """Plyhall {version}: a tournament server for two-player board-game bots.

WebSocket endpoint: /ws (subprotocols plyhall.v1.msgpack, plyhall.v1.json)
Read-only HTTP: /healthz  /api/rooms  /api/games?limit=&offset=&game=&player=  /api/games/ID
Rooms open now: {rooms}
"""


def _int_param(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    if name not in query:
        return default
    try:
        value = int(query[name])
    except ValueError:
        raise ValueError(f"{name} must be an integer from {low} to {high}") from None
    if not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}")
    return value


def _json_response(status: int, body: Any) -> Response:
    payload = json.dumps(body).encode()
    headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(payload))),
                       ("Cache-Control", "no-store")])
    return Response(status, http.HTTPStatus(status).phrase, headers, payload)


def _text_response(status: int, text: str) -> Response:
    payload = text.encode()
    headers = Headers([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(payload)))])
    return Response(status, http.HTTPStatus(status).phrase, headers, payload)
