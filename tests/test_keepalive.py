"""The server's keepalive sweep (server/io/keepalive.py) against a real server with short intervals: a peer that
stops answering pings is failed with 1011 within ``ping_interval + ping_timeout``, a peer that answers them stays
whether it talks or not, one that talks but reads nothing is failed, and closes that websockets would leave waiting
for ever are cut off."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN

from server.io.connections import Connection
from server.io.frames import PING_HEADER
from server.io.keepalive import KeepaliveSweep
from server.io.server import PlyhallServer, RateLimit
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


async def test_a_peer_that_talks_is_pinged_too_and_stays(quick: PlyhallServer) -> None:
    async with connect(f"ws://127.0.0.1:{quick.port}/ws", ping_interval=None) as ws:
        for _ in range(40):  # a message every quarter interval, for ten intervals (websockets answers the pings)
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "pong"
            await asyncio.sleep(INTERVAL / 4)
        assert ws.state is OPEN
        assert quick.keepalive is not None and quick.keepalive.pings >= 3 and quick.keepalive.timeouts == 0


async def _only_connection(server: PlyhallServer) -> Connection:
    for _ in range(400):
        if server.connections:
            (connection,) = server.connections.values()
            return connection
        await asyncio.sleep(0.01)
    raise AssertionError("the connection never reached the server")


async def _gone(server: PlyhallServer, seconds: float) -> float:
    """How long until the server holds no connection (AssertionError after ``seconds``)."""
    started = time.monotonic()
    while server.connections:
        assert time.monotonic() - started < seconds, "the connection is still held"
        await asyncio.sleep(0.02)
    return time.monotonic() - started


def _masked(opcode: int, payload: bytes) -> bytes:
    """A client's (masked, small) frame."""
    mask = os.urandom(4)
    return bytes((0x80 | opcode, 0x80 | len(payload))) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_a_peer_that_talks_but_never_reads_is_failed(quick: PlyhallServer) -> None:
    """A message proves the peer writes, not that it reads: a bot that sends moves and reads nothing (here a message
    every 50 ms, each answered, none read) is failed like a silent one, within an interval and a timeout."""
    reader, writer = await _raw_handshake(quick.port)
    connection = await _only_connection(quick)
    connection.ws.close_timeout = 0.3

    async def talk() -> None:
        while True:
            writer.write(_masked(0x1, b'{"type":"ping"}'))
            await asyncio.sleep(0.05)

    talking = asyncio.create_task(talk())
    try:
        assert await _gone(quick, INTERVAL + TIMEOUT + 0.3 + 2.0) > TIMEOUT * 0.9
        assert quick.keepalive is not None and quick.keepalive.timeouts == 1
    finally:
        talking.cancel()
        writer.close()


async def test_a_peer_that_sends_its_close_and_goes_silent_is_cut_off(quick: PlyhallServer) -> None:
    """websockets enforces the close timeout only inside a send context, which the server's own writes do not use:
    the sweep aborts a connection whose peer sent a close frame and then neither read nor closed its side."""
    reader, writer = await _raw_handshake(quick.port)
    connection = await _only_connection(quick)
    connection.ws.close_timeout = 0.3
    writer.write(_masked(0x8, struct.pack("!H", 1000) + b"bye"))
    try:
        assert await _gone(quick, 0.3 + 2.0) >= 0.25
        assert connection.ws.transport.is_closing()
    finally:
        writer.close()


async def test_a_close_stuck_behind_a_peer_that_reads_nothing_is_cut_off(quick: PlyhallServer) -> None:
    """The server drops a client that is too slow (1008): websockets' close waits for the socket to drain first, for
    ever with a peer that reads nothing; a tick past the close deadline the sweep aborts it."""
    reader, writer = await _raw_handshake(quick.port)
    connection = await _only_connection(quick)
    connection.ws.close_timeout = 0.3
    connection.ws.paused = True  # the server's buffer for it is full (what pause_writing does)
    quick.close_connection(connection, 1008, "too slow: too many unsent messages")
    try:
        await asyncio.sleep(0.1)
        assert connection.ws.protocol.state is not OPEN and connection.ws.close_deadline is not None
        assert await _gone(quick, 0.3 + 2.0) > 0.1
        assert connection.ws.transport.is_closing()
    finally:
        writer.close()


async def test_a_slow_reader_gets_its_pong_time_after_the_bytes_before_the_ping(quick: PlyhallServer) -> None:
    """The ping is written behind what waits to be sent: a late pong while those bytes went down (the peer reads,
    slowly) gets another timeout; once nothing more is read, the peer is failed."""
    reader, writer = await _raw_handshake(quick.port)
    connection = await _only_connection(quick)
    ws = connection.ws
    sweep = quick.keepalive
    assert sweep is not None
    sweep.discard(connection)  # looked at by hand below, the clock given
    ws.keepalive_payload, ws.keepalive_since, ws.keepalive_unsent = b"\x00\x00\x00\x01", 100.0, 5000
    sizes = iter([4000, 3000, 3000])
    ws.transport = _Sized(ws.transport, sizes)
    try:
        sweep._look(connection, 100.0 + TIMEOUT)  # 4,000 bytes left of 5,000: read, another timeout
        assert sweep.timeouts == 0 and ws.keepalive_since == 100.0 + TIMEOUT and ws.keepalive_unsent == 4000
        sweep._look(connection, 100.0 + 2 * TIMEOUT)  # 3,000: read again
        assert sweep.timeouts == 0 and ws.keepalive_unsent == 3000
        sweep._look(connection, 100.0 + 3 * TIMEOUT)  # nothing read for a timeout: failed
        assert sweep.timeouts == 1
    finally:
        ws.transport = ws.transport.inner
        writer.close()


class _Sized:
    """A transport whose unsent bytes are given, one reading after another."""

    def __init__(self, inner: asyncio.Transport, sizes: Iterator[int]) -> None:
        self.inner, self.sizes = inner, sizes

    def get_write_buffer_size(self) -> int:
        return next(self.sizes)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


async def test_a_dead_peer_is_found_when_the_timeout_is_shorter_than_the_interval(db_path: Path) -> None:
    """As `plyhall serve` runs it (20 s and 20 s: the pong's deadline comes before the next ping)."""
    srv = PlyhallServer(SQLiteStorage(db_path), port=0, ping_interval=0.3, ping_timeout=0.2)
    await srv.start()
    try:
        reader, writer = await _raw_handshake(srv.port)
        await _only_connection(srv)
        assert await _gone(srv, 0.3 + 0.2 + 10 + 2.0) > 0.2 + 0.1  # (the close timeout: websockets' 10 s)
        assert srv.keepalive is not None and srv.keepalive.timeouts == 1 and srv.keepalive.pings == 1
        writer.close()
    finally:
        await srv.stop()


async def test_the_sweep_goes_on_after_a_failure(quick: PlyhallServer, caplog: pytest.LogCaptureFixture) -> None:
    sweep = quick.keepalive
    assert sweep is not None
    real, failures = sweep.sweep, []

    def broken(now: float) -> None:
        if not failures:
            failures.append(now)
            raise RuntimeError("a bug in the sweep")
        real(now)

    sweep.sweep = broken  # type: ignore[method-assign]
    reader, writer = await _raw_handshake(quick.port)
    try:
        await _only_connection(quick)
        quick.connections[next(iter(quick.connections))].ws.close_timeout = 0.3
        await _gone(quick, INTERVAL + TIMEOUT + 0.3 + 2.0)
        assert failures and sweep.timeouts == 1
        assert "the keepalive sweep failed" in caplog.text
    finally:
        writer.close()


def test_a_bad_interval_or_timeout_is_refused() -> None:
    for interval, timeout in ((0, 1.0), (-1, 1.0), (1.0, 0), (float("nan"), 1.0)):
        with pytest.raises(ValueError, match="positive interval and timeout"):
            KeepaliveSweep(interval, timeout)


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
