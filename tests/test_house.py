"""House bots: a player opens a room against one of our bots, which the server starts as a process of its own."""

from __future__ import annotations

import random

import pytest

from bots import parse_level
from client.sdk import ServerError
from protocol.games import get_game
from server.app import PlyhallServer, RateLimit
from server.house import HOUSE_LEVELS
from server.storage import SQLiteStorage
from tests.helpers import login, wait_until


def test_house_levels_are_the_levels_bots_accept():
    for level in HOUSE_LEVELS:
        parse_level(level)
    assert {"random", "novice", "master", "minimax-8"} <= set(HOUSE_LEVELS)


@pytest.fixture
async def house_server(tmp_path):
    srv = PlyhallServer(SQLiteStorage(tmp_path / "house.db"), port=0, house_bots=1,
                        rate_limit=RateLimit(rate=2000, burst=4000))
    await srv.start()
    yield srv
    await srv.stop()


async def test_a_player_plays_a_house_bot_to_the_end(house_server):
    url = f"ws://127.0.0.1:{house_server.port}/ws"
    ann = await login(url, "ann")
    assert "master" in ann.welcome["house"]
    reply = await ann.request({"type": "create_room", "game": "connect4", "opponent": "random",
                               "time_control": {"per_move": 30}, "options": {"first": 0}})
    room = reply["room"]["name"]
    joined = await ann.expect("joined", room=room)
    assert joined["seat"] == 0  # the creator sits down at once
    # a second house bot is over this server's limit of one
    with pytest.raises(ServerError) as busy:
        await ann.request({"type": "create_room", "game": "quarto", "opponent": "novice"})
    assert busy.value.code == "busy"
    start = await ann.expect("game_start", room=room, timeout=60)
    assert start["players"] == ["ann", "house-random-1"]
    game = get_game("connect4")
    state = game.decode_state(start["state"], ann.coords)
    rng = random.Random(1)
    while True:
        if game.to_move(state) == 0:
            await ann.send({"type": "move", "room": room, "move": game.notation(rng.choice(game.legal_moves(state)))})
        msg = await ann.expect("moved", room=room, timeout=30)
        state = game.apply(state, game.parse_move(msg["move"], state, ann.coords))
        if msg["to_move"] is None:
            break
    over = await ann.expect("game_over", room=room)
    assert over["status"] == "finished" and over["players"] == ["ann", "house-random-1"]
    # the bot leaves when its game is done, its process ends, and its slot is free for the next player
    await wait_until(lambda: not house_server.hall.house_running, "the house bot's slot was free", 60)
    await ann.request({"type": "create_room", "game": "quarto", "opponent": "novice"})


async def test_house_names_and_levels_are_checked(house_server, server):
    url = f"ws://127.0.0.1:{house_server.port}/ws"
    with pytest.raises(ServerError) as refused:
        await login(url, "house-master-1", secret="guess")
    assert refused.value.code == "bad_name" and "own bots" in refused.value.message
    ann = await login(url, "ann")
    with pytest.raises(ServerError) as bad:
        await ann.request({"type": "create_room", "game": "connect4", "opponent": "grandmaster"})
    assert bad.value.code == "bad_option" and "minimax-8" in bad.value.message
    plain = await login(f"ws://127.0.0.1:{server.port}/ws", "bob")  # a server without --house-bots
    assert "house" not in plain.welcome
    with pytest.raises(ServerError) as off:
        await plain.request({"type": "create_room", "game": "connect4", "opponent": "master"})
    assert off.value.code == "bad_option" and "--house-bots" in off.value.message
