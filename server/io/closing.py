"""A server's stop and its next start: closing every connection in bounded time, keeping what the database
refused in the spill file, and taking it and everything else storage kept back at the next start."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ..core.hall import Hall
from ..storage.base import Storage
from ..storage.records import Write
from ..storage.spill import describe, replay, spill
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
            async with asyncio.timeout(1.0):
                await server.wait_closed()
        except TimeoutError:
            log.warning("some connection handlers were still running at shutdown")


def keep_unsaved(storage: Storage, writes: list[Write]) -> str:
    """The database refused ``writes`` until the end: keep them in the spill file, and say so. Returns what they
    were and where they are now, for the stop's last words ("1 move (kept in F, stored at the next start)", or
    "(lost: ...)" when the spill file could not be written either)."""
    unsaved = describe(writes)
    path = storage.spill_path
    if path is None:
        log.error("the database refused %s: they are lost", unsaved)
        return f"{unsaved} (lost)"
    try:
        spill(path, writes)
    except OSError as exc:
        log.error("could not store %s: the database refused them and the spill file %s could not be "
                  "written either (%s): they are lost", unsaved, path, exc)
        return f"{unsaved} (lost: the spill file {path} could not be written either: {exc.strerror or exc})"
    log.error("the database refused %s; they are kept in %s and stored when the server starts again",
              unsaved, path)
    return f"{unsaved} (kept in {path}, stored at the next start)"


async def take_back(storage: Storage, hall: Hall, reads: Any, now: float) -> tuple[str | None, tuple[int, int]]:
    """At start, on the ``reads`` executor: the spill file of the last stop replayed into storage, then the rooms,
    running games and ratings storage kept given to ``hall``; what the spill file held, and the rooms and games
    taken back."""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(reads, storage.own)
    replayed = await loop.run_in_executor(reads, replay, storage)
    if replayed:
        log.warning("stored %s kept in the spill file of the last stop", replayed)
    restored = hall.restore(await loop.run_in_executor(reads, storage.load), now)
    boards = await loop.run_in_executor(reads, storage.leaderboards)  # the ladder pairs by rating
    hall.seeks.ladder.learn_boards(boards, time.time())
    return replayed, restored
