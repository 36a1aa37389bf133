"""The server's keepalive sweep (server/io/keepalive.py) against a real server with short intervals: a peer that
stops answering pings is failed with 1011 within ``ping_interval + ping_timeout``, a peer that answers them but
sends nothing stays, and a peer that talks is never pinged at all."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN

from server.io.server import PlyhallServer, RateLimit
from server.io.transport import PING_HEADER
from server.storage import SQLiteStorage

INTERVAL = 0.2
TIMEOUT = 0.3


@pytest.fixture
async def quick(db_path: Path) -> AsyncIterator[PlyhallServer]:
    """A server that pings every 0.2 s and waits 0.3 s for the pong."""
    srv = PlyhallServer(SQLiteStorage(db_path), port=0, ping_interval=INTERVAL, ping_timeout=TIMEOUT,
                        rate_limit=RateLimit(rate=2000, burst=4000))
    await srv.start()
    yield srv
    await srv.stop()


async def _raw_handshake(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket opened by hand on a plain socket, which then answers nothing (no pong)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


async def _frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The next (unmasked, small) frame the server sent: its opcode and payload."""
    head = await reader.readexactly(2)
    length = head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", await reader.readexactly(2))[0]
    return head[0] & 0x0F, await reader.readexactly(length)


async def test_a_peer_that_never_answers_a_ping_is_failed_with_1011(quick: PlyhallServer) -> None:
    reader, writer = await _raw_handshake(quick.port)
    opened = time.monotonic()
    try:
        pings = []
        while True:  # nothing is answered; what the server sends is only looked at
            opcode, payload = await asyncio.wait_for(_frame(reader), 10)
            if opcode == 0x9:
                pings.append((time.monotonic(), payload))
                continue
            break
        closed = time.monotonic()
        assert opcode == 0x8, (opcode, payload)
        assert struct.unpack("!H", payload[:2])[0] == 1011 and payload[2:] == b"keepalive ping timeout"
        assert len(pings) == 1, pings  # one ping, never a second while the first waits for its pong
        assert closed - pings[0][0] >= TIMEOUT * 0.9  # the pong was waited for (the sweep's own clock rounds)
        # the first ping comes half an interval to one after the handshake, the close a timeout after it; the slack
        # is for a busy machine (the sweep looks every 0.05 s here)
        assert closed - opened < INTERVAL + TIMEOUT + 2.0, closed - opened
        assert await asyncio.wait_for(reader.read(), 10) == b""  # and the server ended its side (as websockets does)
        assert quick.keepalive is not None and quick.keepalive.timeouts == 1
    finally:
        writer.close()
    for _ in range(200):
        if not quick.connections:
            break
        await asyncio.sleep(0.05)
    assert not quick.connections and len(quick.keepalive) == 0


async def test_a_peer_that_stopped_reading_is_cut_off_after_the_close_timeout(quick: PlyhallServer) -> None:
    # websockets' send context waits for the socket to drain before its close timeout starts: a peer that reads
    # nothing (its transport paused for writing, as when the server's buffer for it is full) would be kept for ever
    reader, writer = await _raw_handshake(quick.port)
    try:
        for _ in range(200):
            if quick.connections:
                break
            await asyncio.sleep(0.01)
        (connection,) = quick.connections.values()
        connection.ws.close_timeout = 0.2
        connection.ws.paused = True  # what pause_writing does
        for _ in range(400):  # a ping within an interval, the timeout, the close timeout and a second: 1.7 s
            if not quick.connections:
                break
            await asyncio.sleep(0.025)
        assert not quick.connections and quick.keepalive is not None and quick.keepalive.timeouts == 1
        assert connection.ws.transport.is_closing()
    finally:
        writer.close()


async def test_a_peer_that_answers_pings_but_sends_nothing_stays(quick: PlyhallServer) -> None:
    async with connect(f"ws://127.0.0.1:{quick.port}/ws", ping_interval=None) as ws:  # websockets answers pings
        await asyncio.sleep(12 * INTERVAL)
        assert ws.state is OPEN
        assert quick.keepalive is not None
        assert quick.keepalive.pings >= 3 and quick.keepalive.timeouts == 0  # pinged (about every interval)
        (connection,) = quick.connections.values()
        assert 0 <= connection.ws.latency < 1  # the pongs were seen
        await ws.send(json.dumps({"type": "ping"}))  # and it is still served
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "pong"


async def test_a_peer_that_talks_is_never_pinged(quick: PlyhallServer) -> None:
    async with connect(f"ws://127.0.0.1:{quick.port}/ws", ping_interval=None) as ws:
        for _ in range(40):  # a message every quarter interval, for ten intervals
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "pong"
            await asyncio.sleep(INTERVAL / 4)
        assert ws.state is OPEN
        assert quick.keepalive is not None and quick.keepalive.pings == 0 and quick.keepalive.timeouts == 0


async def test_pings_off(db_path: Path) -> None:
    srv = PlyhallServer(SQLiteStorage(db_path), port=0, ping_interval=None, ping_timeout=None)
    await srv.start()
    try:
        reader, writer = await _raw_handshake(srv.port)
        with pytest.raises(TimeoutError):  # nothing is sent to a silent peer
            await asyncio.wait_for(reader.read(1), 0.5)
        assert srv.keepalive is None and len(srv.connections) == 1
        writer.close()
    finally:
        await srv.stop()


def test_the_ping_written_is_the_frame_websockets_makes() -> None:
    for payload in (b"\x00\x00\x00\x00", b"\xff\x01\x02\x03"):
        assert PING_HEADER + payload == Frame(Opcode.PING, payload).serialize(mask=False)
