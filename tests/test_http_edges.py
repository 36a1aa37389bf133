"""The edges a client written from docs/PROTOCOL.md alone runs into: HTTP methods and headers, subprotocol
offers, Unicode digits, metrics, and a move sent while the server shuts down."""

from __future__ import annotations

import asyncio
import http.client
import json
import random
import re
import socket
import time

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from protocol.games import GAMES
from server.io.server import PlyhallServer, RateLimit
from server.storage import SQLiteStorage
from tests.helpers import http_json, login, play_out


def raw_http(port: int, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body


def _masked_text_frame(text: str) -> bytes:
    """A client's whole text frame of ``text`` (under 126 bytes), masked as a client must."""
    payload, mask = text.encode(), bytes([1, 2, 3, 4])
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _login_in_the_handshake_packet(port: int) -> bytes:
    """Send the opening request and a login frame in one write, then nothing more; what the server sends back (up to
    the welcome, or whatever it sent in 10 s)."""
    request = (b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request + _masked_text_frame(json.dumps({"type": "login", "name": "eager"})))
        received = b""
        try:
            while b"welcome" not in received and (chunk := sock.recv(4096)):
                received += chunk
        except TimeoutError:  # only catches a hang: the old server never answered
            pass
    return received


async def test_a_message_sent_with_the_opening_request_is_answered_without_more_bytes(server):
    """RFC 6455 tells a client to wait for the 101 before its first frame, but some do not: a login written in the
    same packet as the request waited for the client's next bytes, and a client that waits for its welcome waited
    for ever."""
    received = await asyncio.to_thread(_login_in_the_handshake_packet, server.port)
    assert received.startswith(b"HTTP/1.1 101 ") and b'"type": "welcome"' in received.replace(b'":"', b'": "'), \
        received[:400]


async def test_head_other_methods_and_connection_close(server):
    status, headers, body = await asyncio.to_thread(raw_http, server.port, "GET", "/healthz")
    assert status == 200 and headers["connection"] == "close" and json.loads(body)["ok"] is True
    status, headers, body = await asyncio.to_thread(raw_http, server.port, "HEAD", "/healthz")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0
    for method in ("PUT", "DELETE", "TRACE", "POST"):
        status, headers, body = await asyncio.to_thread(raw_http, server.port, method, "/api/games")
        assert status == 405 and headers["allow"] == "GET, HEAD" and b"WebSocket" in body, method


def _header_lines(port: int, path: str, name: str) -> int:
    """How many times the answer to GET ``path`` carries the header ``name``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return sum(key.lower() == name for key, _ in resp.getheaders())


async def test_an_answer_kept_for_a_second_is_sent_with_one_server_header_each_time(server):
    """The API's answers kept a second (the games, a game's ratings, a player) are sent again as they were: one
    ``Server`` header each time, not one more a request (it was written into the kept answer)."""
    for path in ("/api/games", "/api/ratings/connect4", "/api/players/nobody-yet"):
        counts = [await asyncio.to_thread(_header_lines, server.port, path, "server") for _ in range(4)]
        assert counts == [1, 1, 1, 1], path


async def test_a_path_with_two_slashes_is_no_page_by_its_own_name(server):
    """//api/games was read as the address of a host called api: 'no such page /games'."""
    status, _, body = await asyncio.to_thread(raw_http, server.port, "GET", "//api/games?limit=1")
    assert status == 404 and json.loads(body) == {"error": "no such page '//api/games'"}


async def test_game_filters_are_checked(server):
    status, body = await asyncio.to_thread(http_json, server, "/api/games?game=chess")
    assert status == 400 and "chess" in body["error"] and "connect4" in body["error"]
    status, body = await asyncio.to_thread(http_json, server, "/api/games?status=lost")
    assert status == 400 and "running" in body["error"]


async def test_only_unknown_subprotocols_are_refused_and_none_means_json(server, url):
    with pytest.raises(InvalidStatus) as refused:
        await connect(url, subprotocols=["chat.v2"])
    assert refused.value.response.status_code == 400
    assert b"plyhall.v1.json" in refused.value.response.body
    async with connect(url) as ws:  # no offer at all: JSON
        assert ws.subprotocol is None
        await ws.send(json.dumps({"type": "ping", "id": 1}))
        assert json.loads(await ws.recv()) == {"type": "pong", "id": 1}
    async with connect(url, subprotocols=["chat.v2", "plyhall.v1.json"]) as ws:
        assert ws.subprotocol == "plyhall.v1.json"


@pytest.mark.parametrize("column", ["٤", "４", "4\u200b", "⁴"])
async def test_connect_four_columns_are_ascii_digits(server, url, column):
    a = await login(url, "ann")
    b = await login(url, "bob")
    await a.request({"type": "seek", "game": "connect4"})
    await b.request({"type": "seek", "game": "connect4"})
    start = await a.expect("game_start")
    mover = a if start["to_move"] == start["seat"] else b
    reply = await mover.request({"type": "move", "room": start["room"], "move": column}, check=False)
    assert reply["code"] == "illegal_move" and "1 to 7" in reply["message"]


async def test_metrics_count_what_happened(server, url):
    a = await login(url, "ann")
    b = await login(url, "bob")
    await a.request({"type": "create_room", "game": "connect4", "name": "Counted"})
    await a.request({"type": "join", "room": "Counted"})
    await b.request({"type": "join", "room": "Counted"})
    over = await play_out([a, b], "Counted", random.Random(5))
    await server.flush()
    await a.request({"type": "join", "room": "Nowhere"}, check=False)
    status, headers, body = await asyncio.to_thread(raw_http, server.port, "GET", "/metrics")
    text = body.decode()
    assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
    moves = len(server.storage.get_game(over["record"])["moves"])
    assert f"plyhall_moves_total {moves}.0" in text
    assert 'plyhall_games_ended_total{status="finished"} 1.0' in text
    assert 'plyhall_errors_total{code="no_such_room"} 1.0' in text
    assert "plyhall_logins_total 2.0" in text and "plyhall_connections 2.0" in text
    for name in ("plyhall_event_loop_lag_seconds_bucket", "plyhall_storage_commit_seconds_count",
                 "plyhall_storage_queue_depth", "plyhall_process_resident_memory_bytes", "plyhall_rooms"):
        assert name in text, name
    # every commit is in the histogram, however long between two scrapes (it kept the last 10,000 till the next one:
    # 10,269 commits, 10,000 counted)
    writer = server.writer
    for _ in range(10_050):
        writer._succeeded(1, time.perf_counter())
    text = (await asyncio.to_thread(raw_http, server.port, "GET", "/metrics"))[2].decode()
    commits = float(re.search(r"^plyhall_storage_commits_total (\S+)$", text, re.M).group(1))
    timed = float(re.search(r"^plyhall_storage_commit_seconds_count (\S+)$", text, re.M).group(1))
    assert commits == timed == writer.commits > 10_050, (commits, timed)


async def test_a_move_sent_while_the_server_stops_is_answered(db_path):
    srv = PlyhallServer(SQLiteStorage(db_path), port=0)
    await srv.start()
    url = f"ws://127.0.0.1:{srv.port}/ws"
    a = await login(url, "ann", subprotocol="plyhall.v1.json")
    b = await login(url, "bob", subprotocol="plyhall.v1.json")
    await a.request({"type": "seek", "game": sorted(GAMES)[0]})
    await b.request({"type": "seek", "game": sorted(GAMES)[0]})
    start = await a.expect("game_start")
    srv.stopping = True  # the server has begun to stop: what arrives now is answered, not dropped
    await a.send({"type": "move", "room": start["room"], "move": "whatever", "id": "late"})
    reply = await a.expect("error")
    assert reply["code"] == "server_shutdown" and reply["id"] == "late"
    srv.stopping = False
    await srv.stop()


async def test_accepted_moves_do_not_count_against_the_rate_limit(db_path):
    # a bucket of 10 messages refilled at 1 a second: a game played at once sends far more moves than that
    srv = PlyhallServer(SQLiteStorage(db_path), port=0, rate_limit=RateLimit(rate=1, burst=10))
    await srv.start()
    url = f"ws://127.0.0.1:{srv.port}/ws"
    try:
        a = await login(url, "ann")
        b = await login(url, "bob")
        await a.request({"type": "create_room", "game": "magnetic-cave", "name": "Fast",
                         "time_control": {"untimed": True}})
        await a.request({"type": "join", "room": "Fast"})
        await b.request({"type": "join", "room": "Fast"})
        over = await play_out([a, b], "Fast", random.Random(8))
        assert over["status"] == "finished"
        for client in (a, b):
            assert not any(m.get("code") == "rate_limited" for m in client._inbox)
        for _ in range(12):  # other messages still count
            await a.send({"type": "ping"})
        assert (await a.expect("error", timeout=5))["code"] == "rate_limited"
    finally:
        await srv.stop()


@pytest.mark.parametrize("length", [0, 1, 125, 126, 127, 1023, 1024, 65535, 65536, 70_000])
@pytest.mark.parametrize("binary", [True, False])
def test_frames_written_directly_are_what_websockets_writes(length, binary):
    from websockets.frames import Frame, Opcode

    from server.io.frames import frame_header

    payload = b"x" * length
    expected = Frame(Opcode.BINARY if binary else Opcode.TEXT, payload).serialize(mask=False, extensions=[])
    assert frame_header(binary, length) + payload == expected


def test_quotas_count_by_the_client_behind_a_trusted_proxy_and_ipv6_by_its_network():
    from websockets.datastructures import Headers

    from server.io.transport import client_address, parse_networks

    proxy = parse_networks("127.0.0.1, 10.0.0.0/8")
    forwarded = Headers([("X-Forwarded-For", "203.0.113.9, 10.1.2.3")])
    assert client_address("127.0.0.1", forwarded, proxy) == "203.0.113.9"  # the last hop that is no proxy
    assert client_address("198.51.100.7", forwarded, proxy) == "198.51.100.7"  # an untrusted peer's header is ignored
    assert client_address("127.0.0.1", Headers(), proxy) == "127.0.0.1"
    assert client_address("127.0.0.1", forwarded, []) == "127.0.0.1"  # no trusted proxies: the peer
    same_host = ("2001:db8:1:2:aaaa::1", "2001:db8:1:2:bbbb::9")
    assert client_address(same_host[0], Headers(), []) == client_address(same_host[1], Headers(), [])
    assert client_address("2001:db8:1:2::1", Headers(), []) != client_address("2001:db8:1:3::1", Headers(), [])
    assert client_address("::ffff:192.0.2.1", Headers(), []) == "192.0.2.1"
    with pytest.raises(ValueError, match="not an IP address"):
        parse_networks("localhost")


async def test_a_tournament_s_games_by_its_name_and_an_analysis_request_flag_that_is_not_one(tmp_path):
    """``/api/games?tournament=Spring Cup`` answered [] where /api/tournaments/Spring Cup found the event (its id is
    spring-cup); ``/api/games/ID/analysis?request=false`` (or ``abc``) queued an analysis: only 1 or 0 (true or
    false) are accepted, anything else is a 400 saying so."""
    from server.storage.records import GameEnded, MovePlayed, TournamentSaved
    from tests.helpers import game_record

    storage = SQLiteStorage(tmp_path / "cup.db")
    played = game_record("g1", tournament="spring-cup")
    storage.apply([TournamentSaved({"id": "spring-cup", "name": "Spring Cup", "status": "finished",
                                    "created_at": 50.0}), GameEnded(played),
                   *(MovePlayed("g1", move) for move in played.moves)])
    server = PlyhallServer(storage, host="127.0.0.1", port=0)
    await server.start()
    try:
        for key in ("spring-cup", "Spring%20Cup"):
            status, body = await asyncio.to_thread(http_json, server, f"/api/games?tournament={key}")
            assert status == 200 and [g["id"] for g in body["games"]] == ["g1"], (key, body)
        status, body = await asyncio.to_thread(http_json, server, "/api/games?tournament=Autumn")
        assert status == 200 and body["games"] == []
        for flag in ("false", "0", ""):
            status, body = await asyncio.to_thread(http_json, server, f"/api/games/g1/analysis?request={flag}")
            assert status == 200 and body["status"] == "none", (flag, body)
        status, body = await asyncio.to_thread(http_json, server, "/api/games/g1/analysis?request=abc")
        assert status == 400 and body["error"] == "request must be 1 (analyse the game if it has no analysis) or " \
            "0, not 'abc'"
    finally:
        await server.stop()
