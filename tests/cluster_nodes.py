"""One hall on one node or on three: the fixtures that run the protocol suite both ways.

``hall_server`` is the server a test talks to: with ``one node``, a plain server on SQLite; with
``three nodes``, the first of three in-process nodes of a cluster (a throwaway Redis and
PostgreSQL). Its ``url`` is a :class:`NodeUrls`: ``tests.helpers.login`` sends each login to the
next node in turn, so the two players and the spectator of a test sit on three different nodes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from server.io.connections import RateLimit
from server.io.server import PlyhallServer
from server.storage import SQLiteStorage, open_storage

NODES = ["one node", "three nodes"]


class NodeUrls(str):
    """The WebSocket URL of a hall's first node (what it reads as); :meth:`next` gives the nodes in turn."""

    urls: list[str]
    turn: int

    def __new__(cls, urls: list[str]) -> NodeUrls:
        obj = super().__new__(cls, urls[0])
        obj.urls = list(urls)
        obj.turn = 0
        return obj

    def next(self) -> str:
        """The next node's URL (the first, the second, ... and round again)."""
        url = self.urls[self.turn % len(self.urls)]
        self.turn += 1
        return url


def next_url(url: str) -> str:
    """The URL a new client connects to: the next node's, for a hall of several nodes."""
    return url.next() if isinstance(url, NodeUrls) else url


def ws_url(server: PlyhallServer) -> str:
    """The WebSocket URL of one server."""
    return f"ws://127.0.0.1:{server.port}/ws"


@asynccontextmanager
async def cluster(pg_url: str, redis_url: str, count: int = 3, prefix: str = "n",
                  **kwargs: Any) -> AsyncIterator[list[PlyhallServer]]:
    """``count`` running nodes of one cluster, in this process (stopped after)."""
    kwargs.setdefault("rate_limit", RateLimit(rate=2000, burst=4000))
    nodes: list[PlyhallServer] = []
    try:
        for number in range(1, count + 1):
            node = PlyhallServer(open_storage(pg_url, f"{prefix}{number}"), port=0, cluster=redis_url, **kwargs)
            await node.start()
            nodes.append(node)
        yield nodes
    finally:
        for node in reversed(nodes):
            await node.stop()


@asynccontextmanager
async def hall(kind: str, request: pytest.FixtureRequest, db_path: Path, **kwargs: Any) -> AsyncIterator[
        tuple[PlyhallServer, str]]:
    """A server and its URL: one node on SQLite, or the first of three nodes (``kind``, one of NODES)."""
    kwargs.setdefault("rate_limit", RateLimit(rate=2000, burst=4000))
    if kind == "one node":
        server = PlyhallServer(SQLiteStorage(db_path), port=0, **kwargs)
        await server.start()
        try:
            yield server, ws_url(server)
        finally:
            await server.stop()
        return
    async with cluster(request.getfixturevalue("pg_url"), request.getfixturevalue("redis_url"), **kwargs) as nodes:
        server = nodes[0]
        server.peers = nodes  # type: ignore[attr-defined]
        yield server, NodeUrls([ws_url(node) for node in nodes])


@pytest.fixture(params=NODES, name="server")
async def hall_server(request: pytest.FixtureRequest, db_path: Path) -> AsyncIterator[PlyhallServer]:
    """A test module's ``server`` run both ways (``from tests.cluster_nodes import hall_server, hall_url`` makes
    them the module's ``server`` and ``url`` fixtures): one node, and the first of three nodes whose clients
    ``url`` sends to the nodes in turn."""
    async with hall(request.param, request, db_path) as (server, url):
        server.test_url = url  # type: ignore[attr-defined]
        yield server


@pytest.fixture(name="url")
def hall_url(server: PlyhallServer) -> str:
    """The URL of ``server``'s hall (a :class:`NodeUrls` for three nodes)."""
    return server.test_url  # type: ignore[attr-defined]
