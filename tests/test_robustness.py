"""Hostile and broken clients against a live server on 127.0.0.1.

Every bad input gets an ``error`` with a code (or a close with a reason), the
server keeps serving every other connection and room, and no game record is
lost: garbage on both subprotocols, bad shapes, oversized frames, misuse of
rooms, floods, room spam, raw TCP garbage, a seeded fuzzer, and a normal game
played to the end while all of that goes on. The hall's answer to each bad
request, one case at a time, is tested without a network in test_hall_requests.py;
here a few of them travel the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import socket
import time
from typing import Any

import msgpack
import pytest
from websockets.exceptions import ConnectionClosed

from client.sdk import Client
from protocol.codec import JSON, MAX_MESSAGE_BYTES, MSGPACK
from protocol.messages import CLIENT_MESSAGES, ERROR_CODES
from server.core.hall import Limits
from server.io.server import PlyhallServer, RateLimit
from tests.cluster_nodes import hall_server, hall_url, next_url  # noqa: F401  (this module's server and url: one node, and three)
from tests.helpers import assert_clear_error, http_json, login, play_out, wait_until

SUBPROTOCOLS = [MSGPACK, JSON]


# Helpers --------------------------------------------------------------------------------


def ws_url(server: PlyhallServer) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


async def connect(url: str, opened: list[Client], subprotocol: str | None = MSGPACK) -> Client:
    client = Client(next_url(url), subprotocol)
    await client.connect()
    opened.append(client)
    return client


async def logged_in(url: str, opened: list[Client], name: str, subprotocol: str = MSGPACK, **kw: Any) -> Client:
    client = await login(url, name, subprotocol=subprotocol, **kw)
    opened.append(client)
    return client


def encode(subprotocol: str, obj: Any) -> bytes | str:
    """``obj`` in the frame type of ``subprotocol`` (no validation: anything goes)."""
    if subprotocol == MSGPACK:
        return msgpack.packb(obj, use_bin_type=True)
    return json.dumps(obj)


# Events a client in rooms receives besides replies; skipped while waiting for an error.
PUSHES = {"joined", "seated", "game_start", "room_state", "moved", "game_over", "player_away", "player_back",
          "draw_offered", "chat", "rooms", "left"}


async def answer(client: Client, payload: bytes | str, timeout: float = 10.0) -> dict[str, Any]:
    """Send a raw frame and return the next message that is not a room event."""
    await client.ws.send(payload)
    while True:
        msg = await client.recv(timeout)
        if msg.get("type") not in PUSHES:
            return msg


async def assert_error(client: Client, payload: bytes | str, codes: str | set[str]) -> dict[str, Any]:
    """The reply to ``payload`` is an ``error`` with one of ``codes`` and a message for people."""
    return assert_clear_error(await answer(client, payload), codes, payload)


async def closed_with(client: Client, timeout: float = 10.0) -> tuple[int | None, str | None]:
    """Wait for the server to close ``client``; its close code and reason."""
    await asyncio.wait_for(client.closed.wait(), timeout)
    assert client.ws is not None
    return client.ws.close_code, client.ws.close_reason


async def assert_serving(server: PlyhallServer, opened: list[Client], name: str) -> None:
    """A fresh client logs in and gets a pong; /healthz answers."""
    client = await logged_in(ws_url(server), opened, name)
    assert (await client.request({"type": "ping"}))["type"] == "pong"
    await client.close()
    status, health = await asyncio.to_thread(http_json, server, "/healthz")
    assert status == 200 and health["ok"] is True


async def assert_recorded(server: PlyhallServer, over: dict[str, Any], players: list[str]) -> dict[str, Any]:
    """The finished game of ``over`` is stored and served by /api/games/ID."""
    await server.flush()
    status, record = await asyncio.to_thread(http_json, server, f"/api/games/{over['record']}")
    assert status == 200, record
    assert record["status"] == "finished" and record["players"] == players
    assert record["winner"] == over["winner"] and record["reason"] == over["reason"] and record["moves"]
    return record


def internal_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Log lines that show a server bug (an exception while handling a message, a crashed handler)."""
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.ERROR and (r.name == "plyhall.server" or "handler failed" in r.getMessage())]


async def start_game(url: str, opened: list[Client], room: str, names: tuple[str, str],
                     game: str = "connect4", **settings: Any) -> list[Client]:
    """Two SDK clients seated in a new room (the second one speaks JSON and matrix coordinates)."""
    a = await logged_in(url, opened, names[0])
    b = await logged_in(url, opened, names[1], subprotocol=JSON, coords="matrix")
    await a.request({"type": "create_room", "game": game, "name": room, **settings})
    await a.request({"type": "join", "room": room, "seat": 0})
    await b.request({"type": "join", "room": room, "seat": 1})
    return [a, b]


# Garbage and bad shapes -----------------------------------------------------------------

MSGPACK_GARBAGE: list[bytes | str] = [
    b"",
    b"\xc1",  # the one byte msgpack never uses
    b"\x92\x01",  # an array of two with one item
    b"\x81\xa4type",  # a map whose value is missing
    msgpack.packb({"type": "ping"}) + b"\x00",  # trailing bytes
    b"\xdd\xff\xff\xff\xff",  # an array claiming 4 billion items
    b"\xdb\x7f\xff\xff\xff",  # a string claiming 2 GB
    msgpack.packb({"type": "ping", "x": float("nan")}),
    msgpack.packb({"type": "ping", "x": float("-inf")}),
    msgpack.packb({"type": "chat", "room": "x", "text": b"bytes"}, use_bin_type=True),
    msgpack.packb({"type": "chat", "room": "x", "text": b""}, use_bin_type=True),
    msgpack.packb({"type": "ping", "x": msgpack.ExtType(5, b"ext")}),
    b"\xc7\x00\x05",  # an empty ext value
    msgpack.packb({1: "integer key"}),
    msgpack.packb({b"type": "ping"}, use_bin_type=True),
    b"\xa3\xff\xfe\xfd",  # a string that is not UTF-8
    b"\x91" * 60_000 + b"\xc0",  # nested 60,000 deep
    "{\"type\": \"ping\"}",  # a text frame on the binary subprotocol
]

JSON_GARBAGE: list[bytes | str] = [
    "",
    "{",
    "{\"type\": \"ping\"",
    "{'type': 'ping'}",
    "{\"type\": \"ping\"} trailing",
    "NaN",
    "{\"type\": \"ping\", \"x\": Infinity}",
    "{\"type\": \"ping\", \"x\": 1e999}",
    "1" * 5000,  # more digits than Python converts
    "[" * 30_000 + "]" * 30_000,  # nested 30,000 deep
    "{\"a\":" * 10_000 + "1" + "}" * 10_000,
    "{\"type\": \"chat\", \"room\": \"x\", \"text\": \"\\ud800\"}",  # half a surrogate pair
    "\x00\x01\x02",
    b"\xff\xfe\x00",  # a binary frame that is not UTF-8
    b"\x81\xa4type\xa4ping",  # msgpack on the JSON subprotocol
]


def random_garbage(rng: random.Random, count: int) -> list[bytes | str]:
    frames: list[bytes | str] = []
    for _ in range(count):
        size = rng.choice([1, 2, 3, 8, 64, 1000])
        data = bytes(rng.randrange(256) for _ in range(size))
        frames.append(data if rng.random() < 0.7 else data.decode("latin-1"))
    return frames


@pytest.mark.parametrize("subprotocol", SUBPROTOCOLS)
async def test_garbage_frames_get_bad_encoding(server, url, opened, subprotocol):
    client = await connect(url, opened, subprotocol)
    for payload in MSGPACK_GARBAGE if subprotocol == MSGPACK else JSON_GARBAGE:
        reply = await assert_error(client, payload, "bad_encoding")
        assert ("msgpack" if subprotocol == MSGPACK else "JSON") in reply["message"] or "NaN" in reply["message"]
    # random bytes: usually bad encoding; now and then a valid value that is no message
    for payload in random_garbage(random.Random(subprotocol), 150):
        await assert_error(client, payload, {"bad_encoding", "bad_message", "unknown_type"})
    assert (await client.request({"type": "ping"}))["type"] == "pong"
    await client.login("survivor")
    assert (await client.request({"type": "list_rooms"}))["rooms"] == []


@pytest.mark.parametrize("subprotocol", SUBPROTOCOLS)
async def test_valid_encodings_of_non_maps_get_bad_message(server, url, opened, subprotocol):
    client = await connect(url, opened, subprotocol)
    for value in [None, True, 0, -1, 1.5, "ping", "", [], [{"type": "ping"}], ["type", "ping"]]:
        reply = await assert_error(client, encode(subprotocol, value), "bad_message")
        assert "map" in reply["message"]


BAD_SHAPES: list[tuple[dict[str, Any], str, str]] = [
    # (message, error code, a word the explanation must contain)
    ({}, "bad_message", "type"),
    ({"type": 5}, "bad_message", "type"),
    ({"type": None}, "bad_message", "type"),
    ({"type": ["ping"]}, "bad_message", "type"),
    ({"type": "launch_missiles"}, "unknown_type", "launch_missiles"),
    ({"type": ""}, "unknown_type", "known types"),
    ({"type": "x" * 5000}, "unknown_type", "known types"),
    ({"type": "PING"}, "unknown_type", "ping"),
    ({"type": "login"}, "bad_message", "name"),
    ({"type": "login", "name": 5}, "bad_message", "name"),
    ({"type": "login", "name": "ann", "coords": ["row", "col"]}, "bad_message", "coords"),
    ({"type": "login", "name": "ann", "admin": True}, "bad_message", "admin"),
    ({"type": "join"}, "bad_message", "room"),
    ({"type": "join", "room": ["Wood Lake"]}, "bad_message", "room"),
    ({"type": "join", "room": "x", "seat": "0"}, "bad_message", "seat"),
    ({"type": "join", "room": "x", "seat": True}, "bad_message", "seat"),
    ({"type": "join", "room": "x", "seat": 0.0}, "bad_message", "seat"),
    ({"type": "move", "room": "x"}, "bad_message", "move"),
    ({"type": "move", "move": "4"}, "bad_message", "room"),
    ({"type": "chat", "room": "x", "text": None}, "bad_message", "text"),
    ({"type": "chat", "room": "x", "text": {"a": 1}}, "bad_message", "text"),
    ({"type": "create_room", "game": "connect4", "games": 1.5}, "bad_message", "games"),
    ({"type": "create_room", "game": "connect4", "options": [1, 2]}, "bad_message", "options"),
    ({"type": "create_room", "game": "connect4", "grace": "long"}, "bad_message", "grace"),
    ({"type": "create_room", "game": 4}, "bad_message", "game"),
    ({"type": "watch_lobby", "on": 1}, "bad_message", "on"),
    ({"type": "ping", "id": [1]}, "bad_message", "id"),
    ({"type": "ping", "id": {"a": 1}}, "bad_message", "id"),
    ({"type": "ping", "id": "x" * 65}, "bad_message", "id"),
    ({"type": "ping", "id": True}, "bad_message", "id"),
    ({"type": "ping", "id": 1.5}, "bad_message", "id"),
]

HUGE_AND_DEEP: list[dict[str, Any]] = [
    {"type": "join", "room": "x", "seat": 2**53},
    {"type": "join", "room": "x", "seat": -(2**53)},
    {"type": "join", "room": "x", "seat": 2**63 - 1},
    {"type": "join", "room": "x", "seat": -(2**63)},
    {"type": "create_room", "game": "connect4", "games": 2**64 - 1},
    {"type": "ping", "id": 2**60},
    {"type": "move", "room": "x", "move": 2**62},
    {"type": "move", "room": "x", "move": [1, [2, [3, 2**64 - 1]]]},
    {"type": "create_room", "game": "connect4", "options": {"first": 10**15 * 10**3}},
]


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.parametrize("subprotocol", SUBPROTOCOLS)
async def test_bad_shapes_huge_integers_and_deep_nesting_get_bad_message(server, url, opened, subprotocol):
    client = await connect(url, opened, subprotocol)
    for msg, code, word in BAD_SHAPES:
        reply = await assert_error(client, encode(subprotocol, msg), code)
        assert word.lower() in reply["message"].lower(), (msg, reply)
        assert len(reply["message"]) < 600, "long fields are cut in explanations"
    # the reply to a bad request echoes its id when the id itself is fine
    reply = await assert_error(client, encode(subprotocol, {"type": "launch", "id": 77}), "unknown_type")
    assert reply["id"] == 77
    reply = await assert_error(client, encode(subprotocol, {"type": "join", "room": 5, "id": "req-1"}), "bad_message")
    assert reply["id"] == "req-1"
    for msg in HUGE_AND_DEEP:
        await assert_error(client, encode(subprotocol, msg), "bad_message")
    if subprotocol == JSON:  # integers msgpack cannot even carry
        await assert_error(client, '{"type": "ping", "id": ' + "9" * 400 + "}", "bad_message")
        await assert_error(client, '{"type": "move", "room": "x", "move": -' + "9" * 4000 + "}", "bad_message")
    for depth in (33, 40, 200, 500):  # msgpack itself packs at most 511 levels
        msg = {"type": "move", "room": "x", "move": nested(depth)}
        await assert_error(client, encode(subprotocol, msg), "bad_message")
    assert (await client.request({"type": "ping"}))["type"] == "pong"


async def test_messages_before_login_and_bad_logins(server, url, opened):
    # every case is in test_hall_requests.py; here their errors travel the wire both ways
    client = await connect(url, opened, JSON)
    reply = await assert_error(client, encode(JSON, {"type": "list_rooms", "id": "list_rooms"}), "not_logged_in")
    assert reply["id"] == "list_rooms" and "login" in reply["message"]
    assert (await answer(client, encode(JSON, {"type": "ping", "id": 1})))["type"] == "pong"
    reply = await assert_error(client, encode(JSON, {"type": "login", "name": "x" * 5000}), "bad_name")
    assert len(reply["message"]) < 300
    await client.login("ann")
    await assert_error(client, encode(JSON, {"type": "login", "name": "bob"}), "already_logged_in")
    other = await connect(url, opened)
    await assert_error(other, encode(MSGPACK, {"type": "login", "name": "ann"}), "name_in_use")
    assert (await client.request({"type": "list_rooms"}))["rooms"] == []


async def test_room_misuse_gets_clear_errors_and_the_game_plays_on(server, url, opened):
    # every case is in test_hall_requests.py; here a few travel the wire, and the game misused plays on
    a, b = await start_game(url, opened, "Wood Lake", ("ann", "bob"))
    eve = await logged_in(url, opened, "eve")

    async def err(msg: dict[str, Any], code: str, client: Client = eve) -> dict[str, Any]:
        return await assert_error(client, encode(client.subprotocol or JSON, msg), code)

    reply = await err({"type": "move", "room": "x" * 60_000, "move": "4"}, "no_such_room")
    assert len(reply["room"]) <= 40
    await err({"type": "move", "room": "Wood Lake", "move": "4"}, "not_in_room")
    await eve.request({"type": "join", "room": "Wood Lake", "role": "spectator"})
    await eve.expect("game_start", room="Wood Lake")
    await err({"type": "move", "room": "Wood Lake", "move": "4"}, "not_a_player")
    await err({"type": "chat", "room": "Wood Lake", "text": "bell\x07"}, "bad_message")
    await err({"type": "move", "room": "Wood Lake", "move": "4"}, "not_your_turn", b)
    for move in ["8", "\u00b2", "4" * 5000]:
        reply = await err({"type": "move", "room": "Wood Lake", "move": move}, "illegal_move", a)
        assert len(reply["message"]) < 300
    # after all that the game in Wood Lake plays on normally (from a fresh copy of its state)
    for player in (a, b):
        await player.request({"type": "state", "room": "Wood Lake"})
    over = await play_out([a, b], "Wood Lake", random.Random(3))
    await assert_recorded(server, over, ["ann", "bob"])


# Oversized frames -------------------------------------------------------------------------


@pytest.mark.parametrize("subprotocol", SUBPROTOCOLS)
async def test_oversized_frames_close_with_1009_and_others_are_served(server, url, opened, subprotocol):
    bystander = await logged_in(url, opened, "bystander")
    # exactly the limit is accepted and answered
    client = await connect(url, opened, subprotocol)
    text_len = 0
    msg = {"type": "chat", "room": "x", "text": ""}
    frame = encode(subprotocol, msg)
    padding = MAX_MESSAGE_BYTES - len(frame if isinstance(frame, bytes) else frame.encode())
    for extra in range(padding, padding - 8, -1):  # msgpack's length prefix grows with the text
        msg["text"] = "a" * extra
        frame = encode(subprotocol, msg)
        if len(frame if isinstance(frame, bytes) else frame.encode()) == MAX_MESSAGE_BYTES:
            text_len = extra
            break
    assert text_len, "could not build a frame of exactly the limit"
    await assert_error(client, frame, "not_logged_in")
    # one byte more closes the connection
    msg["text"] = "a" * (text_len + 1)
    await client.ws.send(encode(subprotocol, msg))
    code, reason = await closed_with(client)
    assert code == 1009 and reason
    # a message far over the limit, and one over the limit in many small fragments
    big = await connect(url, opened, subprotocol)
    with contextlib.suppress(ConnectionClosed):
        await big.ws.send(b"\x00" * (4 * MAX_MESSAGE_BYTES) if subprotocol == MSGPACK else "a" * 4 * MAX_MESSAGE_BYTES)
    assert (await closed_with(big))[0] == 1009
    fragments = await connect(url, opened, subprotocol)
    chunk = b"\x00" * 4096 if subprotocol == MSGPACK else "a" * 4096
    with contextlib.suppress(ConnectionClosed):
        await fragments.ws.send(iter([chunk] * 20))
    assert (await closed_with(fragments))[0] == 1009
    assert (await bystander.request({"type": "ping"}))["type"] == "pong"
    await assert_serving(server, opened, "late-comer")


# Floods --------------------------------------------------------------------------------------


async def test_flood_is_rate_limited_then_closed_with_1008(make_server, opened):
    srv = await make_server(rate_limit=RateLimit(rate=20, burst=40))
    url = ws_url(srv)
    calm = await logged_in(url, opened, "calm")
    flood = await connect(url, opened)
    began = time.monotonic()
    with contextlib.suppress(ConnectionClosed):
        for i in range(3000):
            await flood.send({"type": "ping", "id": i})
    code, reason = await closed_with(flood, timeout=5)
    flooded = time.monotonic() - began  # however slow the machine: the bucket refills 20 tokens a second of it
    assert (code, reason) == (1008, "rate limit exceeded")
    received = list(flood._inbox)
    pongs = [m for m in received if m["type"] == "pong"]
    limited = [m for m in received if m.get("code") == "rate_limited"]
    assert 40 <= len(pongs) <= 40 + 20 * flooded + 1  # the burst, and what the rate refilled meanwhile
    assert limited and all("slow down" in m["message"] or "dropped" in m["message"] for m in limited)
    # a client within the rate on the same server is never limited
    for _ in range(10):
        assert (await calm.request({"type": "ping"}))["type"] == "pong"
        await asyncio.sleep(0.06)
    # a burst that stays within the bucket is fine too
    burst = await logged_in(url, opened, "burst")
    for i in range(30):
        await burst.send({"type": "ping", "id": i})
    replies = [await burst.recv() for _ in range(30)]
    assert all(m["type"] == "pong" for m in replies)


# Room spam -----------------------------------------------------------------------------------


async def test_thousands_of_rooms_hit_the_per_name_and_global_limits(make_server, opened):
    srv = await make_server(limits=Limits(max_rooms=24, max_rooms_per_name=5, max_rooms_in_one=4))
    url = ws_url(srv)
    owner = await logged_in(url, opened, "owner")
    await owner.request({"type": "create_room", "game": "connect4", "name": "Real Game"})
    spammer = await logged_in(url, opened, "spammer", subprotocol=JSON)
    replies = []
    for start in range(0, 3000, 500):  # pipelined, 500 at a time: the server answers each in order
        for i in range(start, start + 500):
            await spammer.send({"type": "create_room", "game": "connect4", "id": i})
        replies += [await spammer.recv() for _ in range(500)]
    assert [r["id"] for r in replies] == list(range(3000))
    made = [r for r in replies if r["type"] == "room"]
    refused = [r for r in replies if r["type"] == "error"]
    assert len(made) == 5 and len(refused) == 2995
    assert all(r["code"] == "too_many_rooms" and "per name" in r["message"] for r in refused)
    # named rooms count the same
    with pytest.raises(Exception, match="too_many_rooms"):
        await spammer.request({"type": "create_room", "game": "quarto", "name": "One More"})
    # more names fill the server up to its global limit, then everybody is refused
    names = [f"spam{i}" for i in range(6)]
    for name in names:
        extra = await logged_in(url, opened, name)
        for _ in range(5):
            reply = await extra.request({"type": "create_room", "game": "connect4"}, check=False)
            if reply["type"] == "error":
                assert reply["code"] == "too_many_rooms"
    assert len(srv.hall.rooms) == 24
    reply = await owner.request({"type": "create_room", "game": "connect4"}, check=False)
    assert reply["code"] == "too_many_rooms" and "limit" in reply["message"]
    # one session may be in only so many rooms at once
    rooms = [r["room"]["name"] for r in made]
    for room in rooms[:4]:
        await spammer.request({"type": "join", "room": room, "role": "spectator"})
    reply = await spammer.request({"type": "join", "room": rooms[4], "role": "spectator"}, check=False)
    assert reply["code"] == "too_many_rooms"
    # the rooms that exist still work: a game plays to the end and is recorded
    await owner.request({"type": "join", "room": "Real Game"})
    guest = await logged_in(url, opened, "guest", subprotocol=JSON, coords="cosc322")
    await guest.request({"type": "join", "room": "Real Game"})
    over = await play_out([owner, guest], "Real Game", random.Random(5))
    await assert_recorded(srv, over, ["owner", "guest"])
    status, health = await asyncio.to_thread(http_json, srv, "/healthz")
    assert status == 200 and health["rooms"] == 24


async def test_rooms_abandoned_by_disconnected_creators_do_not_fill_the_server(make_server, opened):
    # Clients that create rooms, enter none and go must not use up the limits for good.
    srv = await make_server(limits=Limits(max_rooms=4, max_rooms_per_name=2))
    url = ws_url(srv)
    keeper = await logged_in(url, opened, "keeper")
    for name in ("drifter1", "drifter2"):
        client = await logged_in(url, opened, name)
        rooms = [(await client.request({"type": "create_room", "game": "connect4"}))["room"]["name"]
                 for _ in range(2)]
        if name == "drifter1":  # a room somebody entered stays when its creator goes
            await keeper.request({"type": "join", "room": rooms[0]})
            kept = rooms[0]
        await client.close()
    await wait_until(lambda: len(srv.hall.sessions) == 1, "the server saw both drifters go")
    assert list(srv.hall.rooms) == [kept]
    newcomer = await logged_in(url, opened, "newcomer")
    for _ in range(2):
        assert (await newcomer.request({"type": "create_room", "game": "connect4"}))["type"] == "room"
    drifter = await logged_in(url, opened, "drifter2")  # the name's quota is free again
    assert (await drifter.request({"type": "create_room", "game": "connect4"}))["type"] == "room"
    reply = await keeper.request({"type": "create_room", "game": "connect4"}, check=False)
    assert reply["code"] == "too_many_rooms"  # 4 rooms again: the global limit holds


# Raw TCP and HTTP garbage ---------------------------------------------------------------------


def raw_exchange(port: int, data: bytes) -> bytes:
    """Send bytes on a plain TCP connection; whatever comes back before the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


async def test_raw_tcp_garbage_and_bad_http_requests(server, url, opened):
    rng = random.Random(11)
    bystander = await logged_in(url, opened, "bystander")
    payloads = [
        b"\x00" * 100,
        bytes(rng.randrange(256) for _ in range(4000)),
        b"GET / HTTP/1.1\r\n\r\n",  # no Host
        b"GET /ws HTTP/1.1\r\nHost: x\r\n\r\n",  # the endpoint without an upgrade
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",  # no key
        b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Junk: y\r\n" * 500 + b"\r\n",
        b"GET /api/games?limit=%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /api/games/%00%ff HTTP/1.1\r\nHost: x\r\n\r\n",
    ]
    for data in payloads:
        response = await asyncio.to_thread(raw_exchange, server.port, data)
        assert not response or response.startswith(b"HTTP/1.1 "), response[:100]
        if response:
            status = int(response.split()[1])
            assert 400 <= status < 600 or status == 200, response[:200]
    assert (await bystander.request({"type": "ping"}))["type"] == "pong"
    status, _ = await asyncio.to_thread(http_json, server, "/api/games?limit=9999999999999999999999")
    assert status == 400
    await assert_serving(server, opened, "late-comer")


# Everything at once, while a real game plays --------------------------------------------------


async def test_normal_games_finish_and_are_recorded_during_an_attack(make_server, opened, caplog):
    caplog.set_level(logging.WARNING)
    srv = await make_server(rate_limit=RateLimit(rate=100, burst=200),
                            limits=Limits(max_rooms=40, max_rooms_per_name=5, max_rooms_in_one=10))
    url = ws_url(srv)
    players = await start_game(url, opened, "Okanagan Lake", ("ann", "bob"), games=3)
    sue = await logged_in(url, opened, "sue", subprotocol=JSON, coords="cosc322")
    await sue.request({"type": "join", "room": "Okanagan Lake", "role": "spectator"})
    stop = asyncio.Event()
    outcomes: dict[str, Any] = {}
    # the games start once every attacker has had a first go, and the floods start during the games
    under_way = {name: asyncio.Event() for name in ("gremlin", "goblin", "mallory")}
    playing = asyncio.Event()

    async def garbage(subprotocol: str, name: str) -> None:
        rng = random.Random(name)
        client = await logged_in(url, opened, name, subprotocol=subprotocol)
        frames = (MSGPACK_GARBAGE if subprotocol == MSGPACK else JSON_GARBAGE)
        shapes = [encode(subprotocol, m) for m, _, _ in BAD_SHAPES]
        count = 0
        while not stop.is_set():
            batch = rng.sample(frames, 5) + rng.sample(shapes, 5) + random_garbage(rng, 5)
            for frame in batch:
                await client.ws.send(frame)
            replies = [await client.recv() for _ in batch]
            assert all(r["type"] == "error" for r in replies), replies
            count += len(batch)
            under_way[name].set()
            await asyncio.sleep(0.25)  # 60 a second: below the rate limit, these are not floods
        outcomes[name] = count

    async def misuse() -> None:
        client = await logged_in(url, opened, "mallory")
        while not stop.is_set():
            for msg in [
                {"type": "move", "room": "Okanagan Lake", "move": "4"},
                {"type": "join", "room": "Okanagan Lake"},
                {"type": "leave", "room": "Okanagan Lake"},
                {"type": "resign", "room": "Okanagan Lake"},
                {"type": "move", "room": "Nowhere", "move": "4"},
                {"type": "create_room", "game": "connect4"},
                {"type": "login", "name": "ann"},
            ]:
                reply = await client.request(msg, check=False)
                assert reply["type"] in ("error", "room"), reply
            under_way["mallory"].set()
            await asyncio.sleep(0.15)
        outcomes["mallory"] = len(srv.hall.registry.created_by.get("mallory", ()))

    async def flood() -> None:
        await wait_until(playing, "the games began")
        client = await connect(url, opened)
        with contextlib.suppress(ConnectionClosed):
            for i in range(5000):
                await client.send({"type": "chat", "room": "Okanagan Lake", "text": "spam", "id": i})
        outcomes["flood"] = await closed_with(client)

    async def oversized() -> None:
        await wait_until(playing, "the games began")
        client = await connect(url, opened, JSON)
        with contextlib.suppress(ConnectionClosed):
            await client.ws.send("x" * (MAX_MESSAGE_BYTES + 1))
        outcomes["oversized"] = await closed_with(client)

    async def tcp_garbage() -> None:
        rng = random.Random(7)
        for _ in range(5):
            await asyncio.to_thread(raw_exchange, srv.port, bytes(rng.randrange(256) for _ in range(500)))
        outcomes["tcp"] = True

    async def games() -> list[dict[str, Any]]:
        try:
            for name, started in under_way.items():
                await wait_until(started, f"{name} attacked")
            playing.set()
            results = [await play_out(players, "Okanagan Lake", random.Random(n)) for n in range(3)]
            more = await start_game(url, opened, "Apex Hill", ("cat", "dan"), game="santorini")
            results.append(await play_out(more, "Apex Hill", random.Random(2)))
            return results
        finally:
            stop.set()

    attack = [garbage(MSGPACK, "gremlin"), garbage(JSON, "goblin"), misuse(), flood(), oversized(), tcp_garbage()]
    results = await asyncio.wait_for(asyncio.gather(games(), *attack), 40)
    *series, last = results[0]
    for over in series:
        await assert_recorded(srv, over, ["ann", "bob"])
    await assert_recorded(srv, last, ["cat", "dan"])
    assert len({over["record"] for over in results[0]}) == 4
    for over in series:
        assert (await sue.expect("game_over", room="Okanagan Lake"))["record"] == over["record"]
    assert outcomes["flood"] == (1008, "rate limit exceeded")
    assert outcomes["oversized"][0] == 1009
    assert outcomes["gremlin"] > 0 and outcomes["goblin"] > 0 and 1 <= outcomes["mallory"] <= 5
    assert not internal_errors(caplog)
    await assert_serving(srv, opened, "late-comer")


# Fuzzing ----------------------------------------------------------------------------------------

FUZZ_ROOM = "Fuzz Room"
VALID: list[dict[str, Any]] = [
    {"type": "login", "name": "fuzzer", "coords": "matrix", "client": "fuzz"},
    {"type": "login", "name": "fuzzer2", "secret": "pw"},
    {"type": "list_rooms"},
    {"type": "list_rooms", "game": "connect4"},
    {"type": "watch_lobby", "on": True},
    {"type": "watch_lobby", "on": False},
    {"type": "create_room", "game": "connect4", "name": "Fuzz 1", "options": {"first": 1},
     "time_control": {"per_move": 30}, "illegal_move": "reject", "grace": 5, "games": 2},
    {"type": "create_room", "game": "amazons", "options": {"first": "white"}, "time_control": {"initial": 60,
                                                                                               "increment": 1}},
    {"type": "create_room", "game": "quarto", "time_control": {"untimed": True}},
    {"type": "join", "room": FUZZ_ROOM, "seat": 0, "role": "player"},
    {"type": "join", "room": FUZZ_ROOM, "role": "spectator"},
    {"type": "join", "room": "Fuzz 1"},
    {"type": "leave", "room": "Fuzz 1"},
    {"type": "move", "room": FUZZ_ROOM, "move": "4"},
    {"type": "move", "room": FUZZ_ROOM, "move": 4},
    {"type": "move", "room": FUZZ_ROOM, "move": [0, 3]},
    {"type": "move", "room": FUZZ_ROOM, "move": {"queen": [0, 3], "to": [1, 3], "arrow": [0, 3]}},
    {"type": "move", "room": FUZZ_ROOM, "move": "d10-d9/d10"},
    {"type": "move", "room": FUZZ_ROOM, "move": {"place": "a1", "give": "0101"}},
    {"type": "legal_moves", "room": FUZZ_ROOM},
    {"type": "state", "room": FUZZ_ROOM},
    {"type": "offer_draw", "room": FUZZ_ROOM},
    {"type": "chat", "room": FUZZ_ROOM, "text": "hello"},
    {"type": "ping", "id": 1},
]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice([
            None, True, False, 0, 1, -1, 7, 2**31, 2**53 - 1, 2**53, -(2**53), 2**63 - 1, 0.5, -0.0, 1e308,
            "", "4", "a1", "0101", FUZZ_ROOM, "Fuzz 1", "connect4", "player", "spectator", "matrix",
            "x" * rng.choice([1, 41, 500, 3000]), "\u00e9\u4e2d\U0001f600", "\x00\x1b[31m", " \t\n",
            rng.choice(list(CLIENT_MESSAGES)),
        ])
    if roll < 0.6:
        return "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(0, 20)))
    if roll < 0.7:
        return rng.randrange(-(2**70), 2**70) if rng.random() < 0.3 else rng.randrange(-10, 10)
    if roll < 0.85:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    keys = ["type", "id", "room", "move", "name", "seat", "role", "game", "options", "text", "first", "on",
            "per_move", "queen", "to", "arrow", "place", "give"]
    return {rng.choice(keys) if rng.random() < 0.8 else str(random_value(rng, 5)): random_value(rng, depth + 1)
            for _ in range(rng.randrange(0, 5))}


def fuzz_frame(rng: random.Random, subprotocol: str) -> bytes | str:
    """A fuzzed frame well under the size limit (an oversized one would rightly close the connection)."""
    while True:
        frame = mutate(rng, subprotocol)
        if len(frame) <= 16_000:
            return frame


def mutate(rng: random.Random, subprotocol: str) -> bytes | str:
    """One fuzzed frame: a mutated valid message, random structure or random bytes."""
    msg = dict(rng.choice(VALID))
    roll = rng.random()
    if roll < 0.15 and len(msg) > 1:  # drop a field
        del msg[rng.choice([k for k in msg if k != "type"] or ["type"])]
    elif roll < 0.35:  # a field gets a value of another type
        msg[rng.choice(list(msg))] = random_value(rng)
    elif roll < 0.45:  # an extra field
        msg[rng.choice(["id", "seat", "role", "move", "text", "x", ""])] = random_value(rng)
    elif roll < 0.55:  # another type, same fields
        msg["type"] = rng.choice(list(CLIENT_MESSAGES)) if rng.random() < 0.8 else random_value(rng)
    elif roll < 0.65:  # a random type with random fields
        fields = random_value(rng, 3)
        msg = {"type": rng.choice(list(CLIENT_MESSAGES)), **(fields if isinstance(fields, dict) else {})}
    elif roll < 0.72:  # anything at all
        value = random_value(rng)
        try:
            return encode(subprotocol, value)
        except (OverflowError, TypeError, ValueError):
            return json.dumps(value)
    elif roll < 0.8:  # random bytes or text
        return random_garbage(rng, 1)[0]
    elif roll < 0.9:  # an encoded message with a few bytes flipped, cut or added
        frame = encode(subprotocol, msg)
        data = bytearray(frame.encode() if isinstance(frame, str) else frame)
        for _ in range(rng.randrange(1, 4)):
            op = rng.random()
            pos = rng.randrange(len(data))
            if op < 0.5:
                data[pos] = rng.randrange(256)
            elif op < 0.75:
                del data[pos:]
            else:
                data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5)))
            if not data:
                break
        return bytes(data) if subprotocol == MSGPACK or rng.random() < 0.5 else bytes(data).decode("latin-1")
    # else: the valid message as it is (it may or may not make sense now)
    try:
        return encode(subprotocol, msg)
    except (OverflowError, TypeError, ValueError):
        return json.dumps(msg)


async def test_fuzzed_messages_never_break_the_server(server, url, opened, caplog):
    caplog.set_level(logging.WARNING)
    # the fuzzers hold the seats of a running game, so that some mutations reach deep
    fm = await logged_in(url, opened, "fuzz-m")
    fj = await logged_in(url, opened, "fuzz-j", subprotocol=JSON, coords="matrix")
    await fm.request({"type": "create_room", "game": "connect4", "name": FUZZ_ROOM, "games": 1000})
    await fm.request({"type": "join", "room": FUZZ_ROOM})
    await fj.request({"type": "join", "room": FUZZ_ROOM})
    anon = await connect(url, opened, MSGPACK)  # starts without a login
    per_client = 1200

    async def fuzz(client: Client, subprotocol: str, seed: int) -> int:
        own = random.Random(seed)
        errors = 0
        for batch in range(per_client // 50):
            for _ in range(50):
                await client.ws.send(fuzz_frame(own, subprotocol))
            sync = f"sync-{seed}-{batch}"
            await client.send({"type": "ping", "id": sync})
            while True:  # everything before the sync ping was handled, and the connection is alive
                msg = await client.recv(timeout=20)
                assert isinstance(msg, dict) and isinstance(msg.get("type"), str), msg
                if msg["type"] == "error":
                    errors += 1
                    assert msg["code"] in ERROR_CODES and isinstance(msg["message"], str), msg
                    assert msg["code"] != "rate_limited"
                if msg["type"] == "pong" and msg.get("id") == sync:
                    break
        return errors

    counts = await asyncio.wait_for(asyncio.gather(
        fuzz(fm, MSGPACK, 1), fuzz(fj, JSON, 2), fuzz(anon, MSGPACK, 3)), 45)
    assert all(count > per_client // 3 for count in counts), counts  # most fuzzed messages are refused
    for client in (fm, fj, anon):
        assert not client.closed.is_set()
    assert not internal_errors(caplog)
    # a normal game still plays to the end and is recorded; the server answers HTTP
    players = await start_game(url, opened, "After The Storm", ("norm-a", "norm-b"))
    over = await play_out(players, "After The Storm", random.Random(9))
    await assert_recorded(server, over, ["norm-a", "norm-b"])
    status, health = await asyncio.to_thread(http_json, server, "/healthz")
    connections = sum(len(node.connections) for node in getattr(server, "peers", [server]))  # on every node
    assert status == 200 and health["ok"] is True and connections >= 5
    status, games = await asyncio.to_thread(http_json, server, "/api/games?limit=500")
    assert status == 200 and any(g["id"] == over["record"] for g in games["games"])


# Frames in their order, and text that is not UTF-8 ---------------------------------------------


@pytest.mark.parametrize("subprotocol", [MSGPACK, JSON])
async def test_a_fragmented_message_is_handled_in_its_place_and_text_that_is_not_utf8_is_refused(
        make_server, opened, subprotocol):
    """A login sent in two fragments, then a whole list_rooms, in one write: the list_rooms was answered first
    (not_logged_in), the login after it, as a fragmented move would be played after a resign sent behind it. And a
    text frame that is not UTF-8 dropped the connection without a close frame, with a traceback in the log."""
    from websockets.frames import Frame, Opcode

    srv = await make_server()
    client = await connect(ws_url(srv), opened, subprotocol)
    opcode = Opcode.BINARY if subprotocol == MSGPACK else Opcode.TEXT

    def raw(msg: dict[str, Any]) -> bytes:
        frame = encode(subprotocol, msg)
        return frame if isinstance(frame, bytes) else frame.encode()

    login_bytes = raw({"type": "login", "name": f"frag-{subprotocol[-4:]}", "id": "L"})
    frames = [Frame(opcode, login_bytes[:5], fin=False), Frame(Opcode.CONT, login_bytes[5:]),
              Frame(opcode, raw({"type": "list_rooms", "id": "R"}))]
    client.ws.transport.write(b"".join(frame.serialize(mask=True) for frame in frames))
    first, second = await client.recv(), await client.recv()
    assert (first["type"], first.get("id"), second["type"], second.get("id")) == ("welcome", "L", "rooms", "R")
    client.ws.transport.write(Frame(Opcode.TEXT, b'{"type":"ping","id":"\xff"}').serialize(mask=True))
    refused = await client.recv()
    assert refused["type"] == "error" and refused["code"] == "bad_encoding", refused
    assert ("UTF-8" in refused["message"] or "utf-8" in refused["message"]) if subprotocol == JSON else \
        "binary frames" in refused["message"]
    assert (await client.request({"type": "ping"}))["type"] == "pong"  # the connection is kept


async def test_a_burst_of_large_legal_moves_answers_costs_its_size_of_the_rate_limit(make_server, opened):
    """A spectator's burst of 200 ``legal_moves`` of an Amazons opening (97 KB and 5 ms of the event loop each) was
    answered in full: eight such connections of one address held every room for seconds, and an honest player lost
    on time. Now each answer costs its size of the rate limit: a handful are answered, then the flood is dropped and
    its connection closed, while the players' room goes on."""
    srv = await make_server(rate_limit=RateLimit(rate=50, burst=200))
    url = ws_url(srv)
    ann, bob = await logged_in(url, opened, "ann-lm"), await logged_in(url, opened, "bob-lm")
    await ann.request({"type": "create_room", "game": "amazons", "name": "Big", "time_control": {"untimed": True}})
    await ann.request({"type": "join", "room": "Big", "seat": 0})
    await bob.request({"type": "join", "room": "Big", "seat": 1})
    first = await ann.request({"type": "legal_moves", "room": "Big"})
    assert len(first["moves"]) == 2176  # a player's own ask is answered
    flood = await logged_in(url, opened, "flood-lm")
    await flood.request({"type": "join", "room": "Big", "role": "spectator"})
    frame = msgpack.packb({"type": "legal_moves", "room": "Big"})
    from websockets.frames import Frame, Opcode

    flood.ws.transport.write(Frame(Opcode.BINARY, frame).serialize(mask=True) * 200)
    await closed_with(flood, 30)
    answered = 0
    while True:
        try:
            msg = await flood.recv(timeout=1)
        except (ConnectionError, TimeoutError):
            break
        answered += msg["type"] == "legal_moves"
    assert 1 <= answered <= 10, answered
    assert (await ann.request({"type": "move", "room": "Big", "move": "d10-d7/g7"}))["type"] == "moved"
    assert (await bob.request({"type": "legal_moves", "room": "Big"}))["moves"] != first["moves"]  # the new position


async def test_floods_of_frames_that_are_no_message_are_closed(make_server, opened):
    """Frames escaped every limit: four million empty continuation frames of one open message held every room for
    17 s and grew memory by 35 MB; pings sent without ever reading the pongs grew memory to 477 MB of unsent pongs.
    Now a message comes in 64 parts at most (1009), and pings and parts count against the rate limit (1008)."""
    from websockets.frames import Frame, Opcode

    srv = await make_server(rate_limit=RateLimit(rate=50, burst=200))
    url = ws_url(srv)
    bystander = await logged_in(url, opened, "calm-frames")
    parts = await connect(url, opened)
    parts.ws.transport.write(Frame(Opcode.BINARY, b"\x81", fin=False).serialize(mask=True)
                             + Frame(Opcode.CONT, b"", fin=False).serialize(mask=True) * 10_000)
    assert (await closed_with(parts))[0] == 1009
    pings = await connect(url, opened)
    pings.ws.transport.write(Frame(Opcode.PING, b"x" * 125).serialize(mask=True) * 10_000)
    code, reason = await closed_with(pings)
    assert code == 1008 and reason == "rate limit exceeded"
    assert (await bystander.request({"type": "ping"}))["type"] == "pong"
    # a few parts, and a few pings, are what clients send: answered as ever
    honest = await logged_in(url, opened, "parts-ok")
    data = msgpack.packb({"type": "list_rooms", "id": "P"})
    honest.ws.transport.write(b"".join(Frame(op, data[i:i + 4], fin=i + 4 >= len(data)).serialize(mask=True)
                                       for i, op in zip(range(0, len(data), 4),
                                                        [Opcode.BINARY] + [Opcode.CONT] * 20, strict=False)))
    assert (await honest.recv())["id"] == "P"
    assert await honest.ws.ping() is not None


async def test_long_answers_are_budgeted_for_all_the_connections_of_an_address(make_server, opened, monkeypatch):
    """Each connection paid for its own long answers, so 150 connections of one address, each within its limit,
    asking for an Amazons room's legal moves (or a listing of 500 rooms) held every room for seconds. An address's
    connections now share a budget for them: past it, such requests are refused with ``retry_after``."""
    import server.io.delivery

    # the address's budget as the server has it, but refilled slowly, so that the count does not hang on the pace
    monkeypatch.setattr(server.io.delivery, "ADDRESS_LARGE", RateLimit(rate=1.0, burst=1000.0))
    srv = await make_server()  # (connections' own limits relaxed: the address's budget is what binds)
    url = ws_url(srv)
    ann, bob = await logged_in(url, opened, "ann-budget"), await logged_in(url, opened, "bob-budget")
    await ann.request({"type": "create_room", "game": "amazons", "name": "Wide", "time_control": {"untimed": True}})
    await ann.request({"type": "join", "room": "Wide", "seat": 0})
    await bob.request({"type": "join", "room": "Wide", "seat": 1})
    askers = []
    for n in range(20):
        asker = await logged_in(url, opened, f"asker-{n}")
        await asker.request({"type": "join", "room": "Wide", "role": "spectator"})
        askers.append(asker)
    answers = await asyncio.gather(*(asker.request({"type": "legal_moves", "room": "Wide"}, check=False)
                                     for asker in askers for _ in range(5)))
    answered = [a for a in answers if a["type"] == "legal_moves"]
    refused = [a for a in answers if a["type"] == "error"]
    assert 36 <= len(answered) <= 40, len(answered)  # a budget of 1,000 at 27 an answer
    assert refused and all(a["code"] == "rate_limited" and a["retry_after"] > 0 for a in refused), refused[:2]
    assert "too many long answers (legal_moves) for your address" in refused[0]["message"]
    assert (await ann.request({"type": "move", "room": "Wide", "move": "d10-d7/g7"}))["type"] == "moved"
