"""Messages from the server may outgrow what a client may send: a class's whole tournament in one message."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.connection import Client
from protocol.codec import CODECS, MAX_MESSAGE_BYTES, SERVER_MESSAGE_BYTES
from server.io.server import PlyhallServer, RateLimit
from server.storage import SQLiteStorage

SECRET = "organiser-secret"
CLASS = [f"student-{n:02d}" for n in range(1, 41)]  # forty students: 1,560 games in a double round robin


@pytest.mark.parametrize("subprotocol", sorted(CODECS))
def test_a_client_decodes_server_messages_past_the_limit_on_what_it_sends(subprotocol):
    codec = CODECS[subprotocol]
    big = {"type": "tournament", "schedule": ["x" * 100] * 2000}
    frame = codec.encode(big)
    assert MAX_MESSAGE_BYTES < len(frame) < SERVER_MESSAGE_BYTES
    assert codec.decode(frame).code == "too_large"  # the server's limit on what clients send holds
    assert codec.decode(frame, limit=SERVER_MESSAGE_BYTES) == big


async def test_an_organiser_follows_a_class_tournament_whose_state_is_larger_than_64_kib(tmp_path: Path):
    """plyhall tournament run/status watch the event through one message: past 64 KiB (about 140 games) the
    client used to drop it as too large and the organiser's command stopped following."""
    server = PlyhallServer(SQLiteStorage(tmp_path / "class.db"), host="127.0.0.1", port=0,
                           rate_limit=RateLimit(rate=2000, burst=4000), organiser_secret=SECRET)
    await server.start()
    try:
        async with Client(f"ws://127.0.0.1:{server.port}/ws") as org:
            await org.login("teacher", organiser=SECRET)
            await org.request({"type": "tournament_create", "name": "COSC 322 finals", "game": "amazons",
                               "format": "round-robin", "players": CLASS})
            reply = await org.request({"type": "watch_tournament", "tournament": "COSC 322 finals"})
            event = reply["tournament"]
            assert len(event["schedule"]) == len(CLASS) * (len(CLASS) - 1)
            assert len(org.codec.encode(reply)) > MAX_MESSAGE_BYTES
    finally:
        await server.stop()
