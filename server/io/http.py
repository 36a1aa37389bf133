"""Read-only HTTP on the WebSocket port: health, metrics, JSON listings, and the web page.

websockets answers plain HTTP requests from ``process_request``; it cannot read request
bodies, so everything here is a GET (or HEAD); writes go over the WebSocket. Every answer
says ``Connection: close`` (websockets closes the connection after it).
"""

from __future__ import annotations

import gzip
import http
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol.games import GAMES
from protocol.messages import GameStatus

ALLOWED = "GET, HEAD"
GZIP_TYPES = ("text/", "image/svg+xml", "application/json")
GZIP_MIN_BYTES = 512  # smaller answers gain nothing from compression
GZIP_CACHE = 256  # compressed copies kept, by ETag
GAME_STATUSES = (*GameStatus, "all")


class BadRequest(ValueError):
    """A query parameter is wrong; the message says what is accepted."""


Route = Callable[[str, dict[str, str]], Awaitable[Response]]


def json_response(status: int, body: Any) -> Response:
    """A JSON answer."""
    return _response(status, json.dumps(body).encode(), "application/json", no_store=True)


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


def int_param(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within [low, high]; BadRequest naming the range otherwise."""
    if name not in query:
        return default
    text = query[name]
    if not (text.isascii() and text.lstrip("-").isdigit()) or not low <= int(text) <= high:
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

    def __init__(self) -> None:
        self.exact: dict[str, Route] = {}
        self.prefixes: list[tuple[str, Route]] = []
        self.fallback: Route | None = None
        self._gzipped: dict[str, bytes] = {}  # ETag -> the compressed body

    def route(self, path: str, handler: Route) -> None:
        """Serve ``path`` (ending in ``/`` with ``*``: everything below it) with ``handler(path, query)``."""
        if path.endswith("*"):
            self.prefixes.append((path[:-1], handler))
        else:
            self.exact[path] = handler

    async def respond(self, request: Request) -> Response:
        """The answer to one plain HTTP request."""
        if request.method not in ("GET", "HEAD"):
            return _response(405, f"{request.method} is not allowed here; use GET (writes go over the WebSocket "
                             "at /ws)\n".encode(), "text/plain; charset=utf-8", extra=[("Allow", ALLOWED)])
        url = urlsplit(request.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        handler = self.exact.get(url.path)
        if handler is None:
            for prefix, candidate in self.prefixes:
                if url.path.startswith(prefix):
                    handler = candidate
                    break
        if handler is None:
            handler = self.fallback
        try:
            if handler is None:
                response = json_response(404, {"error": f"no such page {url.path[:80]!r}"})
            else:
                response = await handler(url.path, query)
        except BadRequest as exc:
            response = json_response(400, {"error": str(exc)})
        etag = response.headers.get("ETag")
        if response.status_code == 200 and etag is not None and _etags(request.headers) & {etag, "*"}:
            response = not_modified(response)
        elif response.status_code == 200 and etag is not None and _accepts_gzip(request.headers):
            response = self._gzip(response, etag)
        if request.method == "HEAD":
            response = Response(response.status_code, response.reason_phrase, response.headers, b"")
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
