"""The live server over WebSocket on 127.0.0.1: games, clocks, reconnection, records, HTTP."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from client.sdk import Client, ServerError
from protocol.games import GAMES
from server.io.server import PlyhallServer
from server.storage import SQLiteStorage
from tests.cluster_nodes import hall_server, hall_url  # noqa: F401  (this module's server and url: one node, and three)
from tests.helpers import http_json, login, play_out

PAIRS = {
    "connect4": ("algebraic", "matrix"),
    "santorini": ("cosc322", "algebraic"),
    "amazons": ("cosc322", "matrix"),
    "magnetic-cave": ("matrix", "cosc322"),
    "quarto": ("algebraic", "cosc322"),
}


@pytest.mark.parametrize("game_id", sorted(GAMES))
async def test_whole_game_in_two_conventions_is_recorded(server, url, game_id):
    coords_a, coords_b = PAIRS[game_id]
    a = await login(url, "ann", coords_a)
    b = await login(url, "bob", coords_b, subprotocol="plyhall.v1.json")
    room = (await a.request({"type": "create_room", "game": game_id, "name": f"{game_id} hall"}))["room"]["name"]
    await a.request({"type": "join", "room": room, "seat": 0})
    await b.request({"type": "join", "room": room})
    over = await play_out([a, b], room, random.Random(game_id))
    assert over["reason"]
    await server.flush()
    status, record = await asyncio.to_thread(http_json, server, f"/api/games/{over['record']}")
    assert status == 200
    assert record["game"] == game_id and record["players"] == ["ann", "bob"]
    assert record["winner"] == over["winner"] and record["moves"]
    assert all(m["think_ms"] >= 0 and len(m["clocks_after"]) == 2 for m in record["moves"])
    await a.close()
    await b.close()


async def test_out_of_turn_and_illegal_moves_get_reasons(server, url):
    a = await login(url, "ann")
    b = await login(url, "bob", "matrix")
    await a.request({"type": "create_room", "game": "amazons", "name": "Wood Lake"})
    await a.request({"type": "join", "room": "Wood Lake"})
    await b.request({"type": "join", "room": "Wood Lake"})
    with pytest.raises(ServerError) as info:
        await b.request({"type": "move", "room": "Wood Lake", "move": "a4-a5/a6"})
    assert info.value.code == "not_your_turn"
    with pytest.raises(ServerError) as info:
        await a.request({"type": "move", "room": "Wood Lake", "move": "a4-a5/a6"})
    assert info.value.code == "illegal_move" and "a4" in info.value.message
    with pytest.raises(ServerError) as info:
        await a.request({"type": "move", "room": "Wood Lake", "move": "a7-a7/a6"})
    assert info.value.code == "illegal_move"
    legal = await a.request({"type": "legal_moves", "room": "Wood Lake"})
    assert len(legal["moves"]) == 2176
    reply = await a.request({"type": "move", "room": "Wood Lake", "move": "d10-d9/d10"})
    assert reply["type"] == "moved" and reply["seq"] == 1
    moved = await b.expect("moved")
    assert moved["move"] == {"queen": [0, 3], "to": [1, 3], "arrow": [0, 3]}


async def test_strict_room_illegal_move_loses(server, url):
    a = await login(url, "ann")
    b = await login(url, "bob")
    await a.request({"type": "create_room", "game": "connect4", "name": "Strict", "illegal_move": "lose"})
    await a.request({"type": "join", "room": "Strict"})
    await b.request({"type": "join", "room": "Strict"})
    await a.send({"type": "move", "room": "Strict", "move": "8"})
    over = await b.expect("game_over")
    assert over["winner"] == 1 and "illegal move" in over["reason"]


async def test_timeout_loses_and_is_recorded(server, url):
    a = await login(url, "ann")
    b = await login(url, "bob")
    await a.request({"type": "create_room", "game": "connect4", "name": "Fast", "time_control": {"per_move": 0.2}})
    await a.request({"type": "join", "room": "Fast"})
    await b.request({"type": "join", "room": "Fast"})
    over = await b.expect("game_over", timeout=10)
    assert over["winner"] == 1 and "ran out of time" in over["reason"]


async def test_reconnect_resumes_seat_with_full_state(server, url):
    a = await login(url, "ann", secret="ann-pw")
    b = await login(url, "bob", secret="bob-pw")
    await a.request({"type": "create_room", "game": "connect4", "name": "Resume", "grace": 30})
    await a.request({"type": "join", "room": "Resume"})
    await b.request({"type": "join", "room": "Resume"})
    await a.request({"type": "move", "room": "Resume", "move": "4"})
    await b.close()
    away = await a.expect("player_away")
    assert away["seat"] == 1
    b2 = await login(url, "bob", "cosc322", secret="bob-pw")
    assert b2.welcome["rooms"] == ["Resume"]
    start = await b2.expect("game_start", room="Resume")
    assert start["seat"] == 1 and start["moves"] == ["4"] and start["to_move"] == 1
    assert (await a.expect("player_back"))["seat"] == 1
    await b2.request({"type": "move", "room": "Resume", "move": 4})
    assert (await a.expect("moved"))["notation"] == "4"


async def test_takeover_closes_the_old_connection(server, url):
    a = await login(url, "ann", secret="pw")
    a2 = await login(url, "ann", secret="pw")
    await asyncio.wait_for(a.closed.wait(), 5)
    assert a.ws.close_reason == "logged in from another connection"
    await a2.request({"type": "list_rooms"})
    with pytest.raises(ServerError) as info:
        await login(url, "ann", secret="wrong")
    assert info.value.code == "wrong_secret"


async def test_absent_player_loses_after_grace(server, url):
    a = await login(url, "ann")
    b = await login(url, "bob")
    await a.request({"type": "create_room", "game": "connect4", "name": "Grace", "grace": 0.3})
    await a.request({"type": "join", "room": "Grace"})
    await b.request({"type": "join", "room": "Grace"})
    await b.close()
    over = await a.expect("game_over", timeout=10)
    assert over["winner"] == 0 and "disconnected" in over["reason"]


async def test_spectator_and_lobby_listing(server, url):
    a = await login(url, "ann")
    b = await login(url, "bob")
    s = await login(url, "sue", "matrix")
    watch = await s.request({"type": "watch_lobby"})
    assert watch["rooms"] == []
    await a.request({"type": "create_room", "game": "quarto", "name": "Kalamalka Lake"})
    pushed = await s.expect("rooms")
    assert pushed["rooms"][0]["name"] == "Kalamalka Lake"
    with pytest.raises(ServerError) as info:
        await b.request({"type": "create_room", "game": "quarto", "name": "kalamalka lake"})
    assert info.value.code == "room_exists"
    await a.request({"type": "join", "room": "Kalamalka Lake"})
    await b.request({"type": "join", "room": "Kalamalka Lake"})
    await a.request({"type": "move", "room": "Kalamalka Lake", "move": "0101"})
    await s.request({"type": "join", "room": "Kalamalka Lake", "role": "spectator"})
    start = await s.expect("game_start")
    assert start["moves"] == ["0101"] and start["state"]["in_hand"] == "0101" and start["seat"] is None
    listing = (await a.request({"type": "list_rooms"}))["rooms"][0]
    assert listing["spectators"] == 1 and listing["seats"] == ["ann", "bob"] and listing["status"] == "playing"
    with pytest.raises(ServerError) as info:
        await s.request({"type": "join", "room": "Kalamalka Lake", "seat": 0})
    assert info.value.code in ("seat_taken", "bad_message")
    await a.request({"type": "chat", "room": "Kalamalka Lake", "text": "hello"})
    assert (await s.expect("chat"))["text"] == "hello"


async def test_records_survive_restart_and_export(db_path, tmp_path):
    srv = PlyhallServer(SQLiteStorage(db_path), port=0)
    await srv.start()
    url = f"ws://127.0.0.1:{srv.port}/ws"
    a = await login(url, "ann", secret="pw")
    b = await login(url, "bob")
    await a.request({"type": "create_room", "game": "connect4", "name": "Keep"})
    await a.request({"type": "join", "room": "Keep"})
    await b.request({"type": "join", "room": "Keep"})
    over = await play_out([a, b], "Keep", random.Random(1))
    # a second game left running is kept: after the restart it continues from its last move
    await a.request({"type": "create_room", "game": "connect4", "name": "Cut"})
    await a.request({"type": "join", "room": "Cut"})
    await b.request({"type": "join", "room": "Cut"})
    await a.request({"type": "move", "room": "Cut", "move": "4"})
    bob_token = b.resume
    await srv.stop()
    srv2 = PlyhallServer(SQLiteStorage(db_path), port=0)
    await srv2.start()
    url2 = f"ws://127.0.0.1:{srv2.port}/ws"
    try:
        assert srv2.restored == (2, 1)  # Keep (finished, its players still in it) and Cut (running)
        status, listing = await asyncio.to_thread(http_json, srv2, "/api/games")
        assert status == 200
        by_id = {g["id"]: g for g in listing["games"]}
        assert by_id[over["record"]]["status"] == "finished"
        status, running = await asyncio.to_thread(http_json, srv2, "/api/games?status=running")
        cut = [g for g in running["games"] if g["room"] == "Cut"][0]
        assert cut["status"] == "running" and cut["move_count"] == 1
        # the claimed name is still claimed
        with pytest.raises(ServerError):
            await login(url2, "ann", secret="other")
        # an unclaimed name's seat is kept for its owner: only bob's resume token takes it back
        with pytest.raises(ServerError) as refused:
            await login(url2, "bob")
        assert refused.value.code == "resume_required"
        a2 = await login(url2, "ann", secret="pw")
        b2 = await login(url2, "bob", resume=bob_token)
        finished = await play_out([a2, b2], "Cut", random.Random(2))
        assert finished["record"] == cut["id"]
        await srv2.flush()
        record = srv2.storage.get_game(cut["id"])
        assert record["status"] == "finished" and record["moves"][0]["move"] == "4"
        assert [m["seq"] for m in record["moves"]] == list(range(1, len(record["moves"]) + 1))
    finally:
        await srv2.stop()
    from plyhall.cli import main

    out = tmp_path / "games.jsonl"
    assert main(["export", "--db", str(db_path), "-o", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {g["room"] for g in lines} == {"Keep", "Cut"}
    assert all(g["moves"] for g in lines)


async def test_http_endpoints(server, url):
    status, health = await asyncio.to_thread(http_json, server, "/healthz")
    assert status == 200 and health["ok"] is True
    status, body = await asyncio.to_thread(http_json, server, "/api/games/nope")
    assert status == 404 and "nope" in body["error"]
    status, body = await asyncio.to_thread(http_json, server, "/api/games?limit=abc")
    assert status == 400 and "limit" in body["error"]
    status, body = await asyncio.to_thread(http_json, server, "/nowhere")
    assert status == 404


async def test_client_offering_no_subprotocol_gets_json(server, url):
    client = Client(url, subprotocol=None)
    await client.connect()
    assert client.ws.subprotocol is None
    await client.ws.send(json.dumps({"type": "ping", "id": 7}))
    msg = await client.recv()
    assert msg.get("type") == "pong" or msg.get("id") == 7
    await client.close()
