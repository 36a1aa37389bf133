"""One connection to a Plyhall server: :class:`Client`, and the errors a bot can meet connecting.

:class:`Client` connects with a subprotocol (msgpack or JSON), logs in, sends
requests and matches replies to them by id, and keeps every other message (a
push) in order for :meth:`Client.recv` / :meth:`Client.expect`. The server's
tests use it too. :func:`check_url` and :func:`describe_connect_error` turn a
wrong address or a failed connection into one line saying what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
import ssl
from collections import deque
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from protocol.codec import MSGPACK, SERVER_MESSAGE_BYTES, Codec, codec_for

log = logging.getLogger("plyhall.client")

DEFAULT_URL = "ws://127.0.0.1:8765/ws"


class ServerError(Exception):
    """The server answered a request with an ``error`` message."""

    def __init__(self, msg: dict[str, Any]) -> None:
        super().__init__(f"{msg.get('code')}: {msg.get('message')}")
        self.code = msg.get("code", "")
        self.message = msg.get("message", "")
        self.msg = msg


class ServerURLError(ValueError):
    """The server address is not a Plyhall WebSocket address; the message says how to write it."""


class NoServer(ConnectionError):
    """Nothing answered at the address (connection refused, unknown host): no server runs there."""


class TakenOver(ConnectionError):
    """The server closed this connection because the same name logged in from another connection."""


class TryLater(ConnectionError):
    """The server asked to try again later (a login throttled or queued, too many connections from this address):
    the bot reconnects after ``delay`` seconds."""

    def __init__(self, reason: str, delay: float) -> None:
        super().__init__(reason)
        self.delay = delay


TAKEOVER_REASON = "logged in from another connection"


def endpoint_path(path: str) -> str:
    """The WebSocket endpoint's path for an address whose path is ``path``: ``/ws`` beside the page (``/`` ->
    ``/ws``; a proxy's prefix kept: ``/plyhall/`` -> ``/plyhall/ws``), ``path`` itself when it already ends so."""
    if path.rstrip("/").endswith("/ws"):
        return path.rstrip("/")
    folder, _, last = path.rstrip("/").rpartition("/")
    if last.lower().startswith(("ws", "websocket")) or last.lower() == "w":  # a slip for ws itself (/wss, /WS/): ws
        return f"{folder}/ws"
    return path.rstrip("/") + "/ws"


def check_url(url: str) -> str:
    """``url`` if it looks like a Plyhall WebSocket address, else :class:`ServerURLError` saying what to use."""
    if not isinstance(url, str) or not url.strip():
        raise ServerURLError(f"no server address given; use {DEFAULT_URL}")
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        fixed = urlunsplit(("ws" if parts.scheme == "http" else "wss", parts.netloc, endpoint_path(parts.path), "", ""))
        raise ServerURLError(f"{url} is a web address; bots connect to the WebSocket address: use {fixed} "
                             "(ws://HOST:PORT/ws)")
    if parts.scheme not in ("ws", "wss") or not parts.netloc:
        given = urlsplit("ws://" + url.split("://", 1)[-1].lstrip("/"))
        guess = urlunsplit(("ws", given.netloc, endpoint_path(given.path), "", ""))
        raise ServerURLError(f"{url} has no ws:// scheme; use {guess} (ws://HOST:PORT/ws)")
    return url


def describe_connect_error(url: str, exc: BaseException, connected_before: bool) -> tuple[str, bool]:
    """One clear line about why connecting to ``url`` failed, and whether trying again is pointless
    (the address is wrong, not the server away)."""
    parts = urlsplit(url)
    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        if status in (429, 503):
            body = bytes(exc.response.body or b"").decode(errors="replace").strip()
            return f"the server at {url} is busy (HTTP {status}{': ' + body[:160] if body else ''})", False
        # 404 from Plyhall itself; 200 from a proxy that sent the request to the web page (nginx's "location /")
        if status in (200, 404) and not parts.path.rstrip("/").endswith("/ws"):
            path = endpoint_path(parts.path)
            fixed = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
            if path == parts.path.rstrip("/") + "/ws":
                return f"the server at {url} has no WebSocket endpoint there: add /ws ({fixed})", True
            return f"the server at {url} has no WebSocket endpoint there: its endpoint is /ws ({fixed})", True
        return f"the server at {url} refused the WebSocket handshake (HTTP {status})", True
    if parts.scheme == "wss" and not connected_before and isinstance(
            exc, (ssl.SSLError, ConnectionResetError, EOFError, InvalidHandshake)):
        plain = urlunsplit(("ws", parts.netloc, parts.path, parts.query, ""))
        return (f"the TLS handshake with {parts.netloc} failed: wss:// needs a server behind TLS; a plain "
                f"Plyhall server speaks ws://: use {plain}"), True
    if isinstance(exc, (ConnectionRefusedError, socket.gaierror)) or (
            isinstance(exc, OSError) and not isinstance(exc, ConnectionError) and not connected_before):
        what = "unknown host" if isinstance(exc, socket.gaierror) else "connection refused"
        return f"no server at {url} ({what}); start one with `plyhall serve`, or check --url", False
    if isinstance(exc, InvalidHandshake):
        return f"{url} did not answer like a WebSocket server ({exc})", True
    return f"connection lost ({exc or type(exc).__name__})", False


class Client:
    """One connection to a Plyhall server.

    Messages that are not a reply to a pending request are kept in order and
    read with :meth:`recv` / :meth:`expect`.
    """

    def __init__(self, url: str = DEFAULT_URL, subprotocol: str | None = MSGPACK) -> None:
        self.url = url
        self.subprotocol = subprotocol
        self.ws: ClientConnection | None = None
        self.codec: Codec = codec_for(subprotocol)
        self.name: str | None = None
        self.coords = "algebraic"
        self.welcome: dict[str, Any] = {}
        self.resume: str | None = None  # the token of the latest welcome: proves this identity next time
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future] = {}
        self._inbox: deque[dict[str, Any]] = deque()
        self._arrivals: deque[float] = deque()  # when each message of the inbox arrived, on the event loop's clock
        self.received_at = 0.0  # when the message :meth:`recv` gave last arrived, on the event loop's clock
        self._arrived = asyncio.Event()
        self.kept = 0  # pushed messages kept so far (for :meth:`news`)
        self._news = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self.closed = asyncio.Event()

    async def connect(self, **kwargs: Any) -> Client:
        """Open the WebSocket (kwargs go to ``websockets.connect``)."""
        protocols = [self.subprotocol] if self.subprotocol else None
        self.ws = await connect(self.url, subprotocols=protocols, compression=None, max_size=SERVER_MESSAGE_BYTES,
                                 **kwargs)
        self.codec = codec_for(self.ws.subprotocol)
        self._reader = asyncio.create_task(self._read())
        return self

    @property
    def taken_over(self) -> bool:
        """True when the server closed this connection because the name logged in elsewhere."""
        return self.ws is not None and self.ws.close_reason == TAKEOVER_REASON

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for data in self.ws:
                msg = self.codec.decode(data, limit=SERVER_MESSAGE_BYTES)
                if not isinstance(msg, dict):
                    log.warning("undecodable message from server: %r", msg)
                    continue
                future = self._pending.pop(msg.get("id"), None) if "id" in msg else None
                if future is not None and not future.done():
                    future.set_result(msg)
                    if msg.get("type") not in ("error", "pong", "rooms", "room", "legal_moves", "welcome",
                                               "seeking", "seek_cancelled"):
                        self._keep(msg)  # replies that are also events stay visible to the reader
                    continue
                self._keep(msg)
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            self._arrived.set()
            self._news.set()
            error = TakenOver(TAKEOVER_REASON) if self.taken_over else ConnectionError("connection closed")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)

    def _keep(self, msg: dict[str, Any]) -> None:
        """Keep a pushed message for :meth:`recv`, with the time it arrived."""
        self._inbox.append(msg)
        self._arrivals.append(asyncio.get_running_loop().time())
        self._arrived.set()
        self.kept += 1
        self._news.set()

    async def news(self, since: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a pushed message after the first ``since`` (:attr:`kept` when the wait
        began), or for the connection to close: True if one came. Nothing is taken from the inbox: a wait that must
        not hold up what the server pushes meanwhile (a game that starts) ends as soon as something arrives."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while self.kept == since and not self.closed.is_set():
                    self._news.clear()
                    await self._news.wait()
        return self.kept != since

    async def send(self, msg: dict[str, Any]) -> None:
        """Send one message as is."""
        if self.ws is None:
            raise ConnectionError("not connected")
        await self.ws.send(self.codec.encode(msg))

    async def request(self, msg: dict[str, Any], timeout: float = 10.0, check: bool = True) -> dict[str, Any]:
        """Send ``msg`` with a fresh id and wait for the reply; raises ServerError on an error reply."""
        msg = dict(msg)
        msg["id"] = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[msg["id"]] = future
        try:
            await self.send(msg)
            async with asyncio.timeout(timeout):  # not wait_for: on 3.11 it loses a cancel that meets the reply
                reply = await future
        finally:  # a send that failed leaves no future behind for the reader to fail unseen when the connection ends
            self._pending.pop(msg["id"], None)
            if future.done() and not future.cancelled():
                future.exception()  # failed by the reader while the send waited: the send's own error is raised
        if check and reply.get("type") == "error":
            raise ServerError(reply)
        return reply

    async def recv(self, timeout: float | None = 10.0) -> dict[str, Any]:
        """The next pushed message; ConnectionError (TakenOver after a takeover) once closed and drained."""
        while not self._inbox:
            if self.closed.is_set():
                raise TakenOver(TAKEOVER_REASON) if self.taken_over else ConnectionError("connection closed")
            self._arrived.clear()
            async with asyncio.timeout(timeout):  # not wait_for: on 3.11 a Ctrl-C that met a message was lost
                await self._arrived.wait()
        self.received_at = self._arrivals.popleft()
        return self._inbox.popleft()

    def unread(self, room: str) -> list[dict[str, Any]]:
        """The pushed messages about ``room`` that have arrived and that :meth:`recv` has not given yet, in order."""
        return [msg for msg in self._inbox if msg.get("room") == room]

    async def expect(self, kind: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """Skip pushed messages until one of type ``kind`` (with fields equal to ``match``) arrives."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            msg = await self.recv(max(0.001, deadline - loop.time()))
            if msg.get("type") == kind and all(msg.get(k) == v for k, v in match.items()):
                return msg

    async def login(self, name: str, secret: str | None = None, coords: str = "algebraic",
                    resume: str | None = None, **extra: Any) -> dict[str, Any]:
        """Log in; returns the ``welcome`` message (its ``resume`` token is kept in :attr:`resume`)."""
        msg: dict[str, Any] = {"type": "login", "name": name, "coords": coords, "client": "plyhall-sdk", **extra}
        if secret is not None:
            msg["secret"] = secret
        if resume is not None:
            msg["resume"] = resume
        self.welcome = await self.request(msg)
        self.name = name
        self.coords = coords
        self.resume = self.welcome.get("resume")
        return self.welcome

    async def close(self) -> None:
        """Close the connection."""
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
