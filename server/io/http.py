"""Read-only HTTP on the WebSocket port: health, metrics, JSON listings, and the web page.

websockets answers plain HTTP requests from ``process_request``; it cannot read request
bodies, so everything here is a GET (or HEAD); writes go over the WebSocket. Every answer
says ``Connection: close`` (websockets closes the connection after it).

Requests are limited per address (:class:`HttpQuota`, ``plyhall serve --http-rate``): each answer costs a
token, and one more for every ``BYTES_PER_TOKEN`` bytes of its body, so a client reading the largest pages
runs out soonest; a request past the bucket waits a moment for its turn, then is answered 429 with
``Retry-After``. The web page's files and ``/healthz``
are not counted. The address is the one the server's quotas count by (``--trusted-proxies``), which the server
puts in :data:`CLIENT` before answering. Routes registered with ``cache`` seconds keep each answer that long
(by path and query; a game that ends renews them), so many clients reading one heavy page cost one answer a
period.
"""

from __future__ import annotations

import asyncio
import gzip
import http
import json
import logging
import math
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any
from urllib.parse import parse_qs

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol.games import GAMES
from protocol.messages import GameStatus

from ..storage.base import database_error

log = logging.getLogger("plyhall.server")

ALLOWED = "GET, HEAD"
GZIP_TYPES = ("text/", "image/svg+xml", "application/json")
GZIP_MIN_BYTES = 512  # smaller answers gain nothing from compression
GZIP_CACHE = 256  # compressed copies kept, by ETag
GAME_STATUSES = (*GameStatus, "all")
_INTEGER = re.compile(r"-?[0-9]{1,18}")  # what int_param reads (not str.isdigit: "²" and "--5" pass it)
HTTP_RATE = 20.0
"""Tokens a second one address earns for HTTP requests, by default (``plyhall serve --http-rate``)."""
BURST_SECONDS = 3.0
"""The bucket holds this many seconds' worth of tokens."""
BYTES_PER_TOKEN = 32 * 1024
"""An answer costs one token, and one more for every so many bytes of its body."""
CACHED_ANSWERS = 64  # answers of cached routes kept at once
ENCODE_CHUNK = 25
"""Items of a long list in a JSON answer encoded at once before the interpreter lock is let go (:func:`encode_json`;
25 games of a listing: well under a millisecond)."""
HOLD_SECONDS = 1.0
"""A request past its address's quota waits this long at most for its turn before it is answered 429."""
HELD_PER_ADDRESS = 32
"""Requests of one address that wait for their turn at once; past them, 429 at once."""

CLIENT: ContextVar[str] = ContextVar("plyhall_http_client", default="?")
"""The address of the client whose plain HTTP request is being answered (the server sets it)."""


class BadRequest(ValueError):
    """A query parameter is wrong; the message says what is accepted."""


Route = Callable[[str, dict[str, str]], Awaitable[Response]]


class HttpQuota:
    """A token bucket per address for plain HTTP requests: ``rate`` tokens a second, ``BURST_SECONDS`` of them
    at most; an answer is charged after it is made, by its size (a bucket may go below zero: the next request
    then waits longer)."""

    def __init__(self, rate: float = HTTP_RATE, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = max(1.0, rate * BURST_SECONDS)
        self.clock = clock
        self.buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, as of when)

    def _tokens(self, address: str, now: float) -> float:
        tokens, at = self.buckets.get(address, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self.rate)

    def wait(self, address: str) -> float:
        """Seconds until ``address`` may have an answer (0: now)."""
        tokens = self._tokens(address, self.clock())
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def charge(self, address: str, body_bytes: int) -> None:
        """``address`` got an answer of ``body_bytes`` bytes."""
        now = self.clock()
        self.buckets[address] = (self._tokens(address, now) - 1 - body_bytes / BYTES_PER_TOKEN, now)
        if len(self.buckets) > 10_000:  # forget the addresses whose bucket is full again
            self.buckets = {key: value for key, value in self.buckets.items() if self._tokens(key, now) < self.burst}


def too_many_requests(wait: float) -> Response:
    """``429 Too Many Requests`` for a client that must wait ``wait`` seconds."""
    seconds = max(1, math.ceil(wait))
    return json_response(429, {"error": f"too many HTTP requests from your address; try again in {seconds} s",
                               "retry_after": seconds}, [("Retry-After", str(seconds))])


def encode_json(body: Any) -> bytes:
    """``json.dumps(body)``, byte for byte, encoded a piece at a time when ``body`` is a map holding long lists (the
    heavy listings): ``json.dumps`` of a whole 500-game page holds the interpreter lock for tens of milliseconds, in
    which the event loop cannot run; here it is let go every :data:`ENCODE_CHUNK` items (the pages are encoded on
    the ``reads`` threads), so bystanders' pings wait for one chunk at most."""
    if not (isinstance(body, dict) and all(isinstance(k, str) for k in body)
            and any(isinstance(v, list) and len(v) > ENCODE_CHUNK for v in body.values())):
        return json.dumps(body).encode()
    parts = []
    for key, value in body.items():
        if isinstance(value, list) and len(value) > ENCODE_CHUNK:
            items = []
            for start in range(0, len(value), ENCODE_CHUNK):
                items.append(json.dumps(value[start:start + ENCODE_CHUNK])[1:-1])
                time.sleep(0)  # lets go of the interpreter lock: the event loop runs if it is waiting
            encoded = "[" + ", ".join(items) + "]"
        else:
            encoded = json.dumps(value)
        parts.append(f"{json.dumps(key)}: {encoded}")
    return ("{" + ", ".join(parts) + "}").encode()


DATABASE_RETRY = 5
"""Seconds an HTTP client is told to wait (``Retry-After``) when the database does not answer."""


def json_response(status: int, body: Any, headers: list[tuple[str, str]] | None = None) -> Response:
    """A JSON answer (``headers``: more of them, e.g. ``Retry-After``)."""
    return _response(status, encode_json(body), "application/json", no_store=True, extra=headers)


def text_response(status: int, text: str, content_type: str = "text/plain; charset=utf-8") -> Response:
    """A text answer."""
    return _response(status, text.encode(), content_type)


def file_response(body: bytes, content_type: str, headers: list[tuple[str, str]]) -> Response:
    """A file's answer: ``headers`` typically carry its ETag and caching rule (see ``HttpApi.respond``)."""
    return _response(200, body, content_type, extra=headers)


def _response(status: int, payload: bytes, content_type: str, no_store: bool = False,
              extra: list[tuple[str, str]] | None = None) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(payload))),
                       ("Connection", "close")])
    if no_store:
        headers["Cache-Control"] = "no-store"
    for key, value in extra or []:
        headers[key] = value
    return Response(status, http.HTTPStatus(status).phrase, headers, payload)


def _copy(response: Response) -> Response:
    """A kept answer for one more request: its own headers, since websockets adds its ``Server`` header to each
    answer it sends (sending the kept one itself gave it one more ``Server`` line a request)."""
    return Response(response.status_code, response.reason_phrase, Headers(response.headers.raw_items()),
                    response.body)


def int_param(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within [low, high]; BadRequest naming the range otherwise."""
    if name not in query:
        return default
    text = query[name]
    if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
        raise BadRequest(f"{name} must be an integer from {low} to {high}")
    return int(text)


def game_param(query: dict[str, str]) -> str | None:
    """The ``game`` filter: a game id, or BadRequest listing them."""
    game = query.get("game")
    if game is not None and game not in GAMES:
        raise BadRequest(f"unknown game {game[:40]!r}; games: {', '.join(GAMES)}")
    return game


def status_param(query: dict[str, str]) -> str | None:
    """The ``status`` filter of game listings."""
    status = query.get("status")
    if status is not None and status not in GAME_STATUSES:
        raise BadRequest(f"status must be one of {', '.join(GAME_STATUSES)}")
    return status


def _etags(headers: Headers) -> set[str]:
    """The entity tags an ``If-None-Match`` request header lists (weak ones compared as strong)."""
    tags = set()
    for value in headers.get_all("If-None-Match"):
        tags.update(tag.strip().removeprefix("W/") for tag in value.split(","))
    return tags


def not_modified(response: Response) -> Response:
    """``304 Not Modified`` for a cached copy of ``response``: its validators, no body."""
    headers = Headers([("Connection", "close")])
    for key in ("ETag", "Cache-Control"):
        if key in response.headers:
            headers[key] = response.headers[key]
    return Response(304, "Not Modified", headers, b"")


def _accepts_gzip(headers: Headers) -> bool:
    """Whether ``Accept-Encoding`` allows gzip: ``gzip`` or ``*``, unless with ``q=0``."""
    for value in headers.get_all("Accept-Encoding"):
        for part in value.split(","):
            coding, *params = (piece.strip().lower() for piece in part.split(";"))
            if coding not in ("gzip", "*"):
                continue
            refused = False
            for param in params:
                name, _, number = param.partition("=")
                try:
                    refused |= name.strip() == "q" and float(number) == 0
                except ValueError:
                    pass
            if not refused:
                return True
    return False


class HttpApi:
    """Routes GET paths to handlers; answers HEAD like GET without the body, and other methods with 405."""

    def __init__(self, quota: HttpQuota | None = None) -> None:
        self.exact: dict[str, Route] = {}
        self.prefixes: list[tuple[str, Route]] = []
        self.fallback: Route | None = None
        self.quota = quota or HttpQuota(0.0)  # no limit, unless given one (plyhall serve --http-rate gives one)
        self._held: dict[str, int] = {}  # address -> its requests waiting for their turn
        self.free: set[Route] = set()  # handlers whose answers the quota does not count
        self.cached: dict[Route, tuple[float, Callable[[dict[str, str]], bool] | None]] = {}  # handler -> (seconds
        # its answers are kept, which queries ask for live figures and are never kept)
        self._answers: OrderedDict[str, tuple[int, float, Response]] = OrderedDict()  # path?query -> kept answer
        self.version: Callable[[], int] = lambda: 0  # changes with what answers read (the server: games ended)
        self._gzipped: dict[str, bytes] = {}  # ETag -> the compressed body

    def route(self, path: str, handler: Route, free: bool = False, cache: float = 0.0,
              live: Callable[[dict[str, str]], bool] | None = None) -> None:
        """Serve ``path`` (ending in ``/`` with ``*``: everything below it) with ``handler(path, query)``;
        ``free``: not counted by the per-address quota; ``cache``: seconds each answer is kept (while ``version``
        stays the same), unless ``live(query)`` says the query asks for figures that change all the time."""
        if path.endswith("*"):
            self.prefixes.append((path[:-1], handler))
        else:
            self.exact[path] = handler
        if free:
            self.free.add(handler)
        if cache:
            self.cached[handler] = (cache, live)

    async def _turn(self, address: str) -> float:
        """Wait (up to ``HOLD_SECONDS``, for ``HELD_PER_ADDRESS`` requests of an address at once) until ``address``
        may have an answer: 0 then, else the seconds it must still wait. A client that asks too fast is slowed
        down, at no cost to the event loop, instead of being answered 429 as fast as it can ask."""
        wait = self.quota.wait(address)
        if wait <= 0 or self._held.get(address, 0) >= HELD_PER_ADDRESS:
            return wait
        self._held[address] = self._held.get(address, 0) + 1
        try:
            await asyncio.sleep(min(wait, HOLD_SECONDS))
        finally:
            self._held[address] -= 1
            if not self._held[address]:
                del self._held[address]
        return self.quota.wait(address)

    def _handler(self, path: str) -> Route | None:
        handler = self.exact.get(path)
        if handler is None:
            for prefix, candidate in self.prefixes:
                if path.startswith(prefix):
                    return candidate
        return handler or self.fallback

    async def respond(self, request: Request) -> Response:
        """The answer to one plain HTTP request."""
        if request.method not in ("GET", "HEAD"):
            return _response(405, f"{request.method} is not allowed here; use GET (writes go over the WebSocket "
                             "at /ws)\n".encode(), "text/plain; charset=utf-8", extra=[("Allow", ALLOWED)])
        path, _, raw_query = request.path.partition("?")  # not urlsplit: it takes //api/games for a host's address
        query = {k: v[-1] for k, v in parse_qs(raw_query).items()}
        handler = self._handler(path)
        counted = handler not in self.free and self.quota.rate > 0
        if counted:
            wait = await self._turn(CLIENT.get())
            if wait > 0:
                return too_many_requests(wait)
        try:
            if handler is None:
                response = json_response(404, {"error": f"no such page {path[:80]!r}"})
            else:
                response = await self._answer(handler, path, raw_query, query)
        except BadRequest as exc:
            response = json_response(400, {"error": str(exc)})
        except Exception as exc:
            if database_error(exc):
                log.warning("answering %s: the database is not answering (%s)", path[:80], " ".join(str(exc).split()))
                response = json_response(503, {"error": "the database is not answering; try again in a moment"},
                                         [("Retry-After", str(DATABASE_RETRY))])
            else:  # a bug: one answer lost, charged as any other, never websockets' "Failed to open a WebSocket"
                log.exception("answering %s", path[:80])
                response = json_response(500, {"error": "the server could not answer this request"})
        if counted:
            self.quota.charge(CLIENT.get(), len(response.body))
        etag = response.headers.get("ETag")
        if response.status_code == 200 and etag is not None and _etags(request.headers) & {etag, "*"}:
            response = not_modified(response)
        elif response.status_code == 200 and etag is not None and _accepts_gzip(request.headers):
            response = self._gzip(response, etag)
        if request.method == "HEAD":
            response = Response(response.status_code, response.reason_phrase, response.headers, b"")
        return response

    async def _answer(self, handler: Route, path: str, raw_query: str, query: dict[str, str]) -> Response:
        """``handler``'s answer, or the one it gave lately when its answers are kept (``cache``)."""
        seconds, live = self.cached.get(handler, (0.0, None))
        if not seconds or (live is not None and live(query)):
            return await handler(path, query)
        key = f"{path}?{raw_query}"
        now, version = time.monotonic(), self.version()
        kept = self._answers.get(key)
        if kept is not None and kept[0] == version and kept[1] > now:
            return _copy(kept[2])
        response = await handler(path, query)
        if response.status_code == 200:
            self._answers[key] = (version, now + seconds, response)
            self._answers.move_to_end(key)
            while len(self._answers) > CACHED_ANSWERS:
                self._answers.popitem(last=False)
            return _copy(response)
        return response

    def _gzip(self, response: Response, etag: str) -> Response:
        """``response`` (a file: it has an ETag) compressed once and kept; its ETag turns weak, as the bytes differ."""
        content_type = response.headers.get("Content-Type", "")
        if len(response.body) < GZIP_MIN_BYTES or not content_type.startswith(GZIP_TYPES) or etag.startswith("W/"):
            return response
        body = self._gzipped.get(etag)
        if body is None:
            body = gzip.compress(response.body, compresslevel=6, mtime=0)
            if len(self._gzipped) >= GZIP_CACHE:
                self._gzipped.pop(next(iter(self._gzipped)))
            self._gzipped[etag] = body
        headers = Headers([(key, value) for key, value in response.headers.raw_items()
                           if key.lower() not in ("content-length", "etag")])
        headers["Content-Length"] = str(len(body))
        headers["Content-Encoding"] = "gzip"
        headers["ETag"] = "W/" + etag
        return Response(response.status_code, response.reason_phrase, headers, body)
