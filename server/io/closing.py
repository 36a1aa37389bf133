"""The last steps of a server's stop: closing every connection in bounded time, and keeping what the database
refused in the spill file for the next start."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..storage.base import Storage
from ..storage.records import Write
from ..storage.spill import describe, spill
from .connections import Connection

log = logging.getLogger("plyhall.server")


async def close_all(connections: list[Connection], server: Any, timeout: float) -> None:
    """Close every connection at once with 1001; whoever has not answered the close in ``timeout`` seconds
    (a client that stopped reading) is cut off. ``server``: the websockets server, whose handlers are waited for."""
    for connection in connections:
        connection.closing = True
    closing = [asyncio.ensure_future(c.ws.close(1001, "server shutting down")) for c in connections]
    if closing:
        await asyncio.wait(closing, timeout=timeout)
    for connection, task in zip(connections, closing, strict=True):
        if not task.done():  # the close handshake still waits for the client's answer: end it now
            task.cancel()
            if connection.ws.transport is not None:
                connection.ws.transport.abort()
    if server is not None:
        try:
            await asyncio.wait_for(server.wait_closed(), 1.0)
        except TimeoutError:
            log.warning("some connection handlers were still running at shutdown")


def keep_unsaved(storage: Storage, writes: list[Write]) -> str:
    """The database refused ``writes`` until the end: keep them in the spill file, and say so. Returns what they
    were (for the stop's last words)."""
    unsaved = describe(writes)
    path = storage.spill_path
    if path is not None:
        try:
            spill(path, writes)
        except OSError as exc:
            log.error("could not store %s: the database refused them and the spill file %s could not be "
                      "written either (%s): they are lost", unsaved, path, exc)
            return unsaved
        log.error("the database refused %s; they are kept in %s and stored when the server starts again",
                  unsaved, path)
    else:
        log.error("the database refused %s: they are lost", unsaved)
    return unsaved
