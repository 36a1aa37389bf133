"""A SIGKILL at any moment leaves every rating consistent with the stored results: a real ``plyhall serve`` (on
SQLite, then on PostgreSQL) is killed during a burst of rated games, and every rating is recomputed from the
stored records (they must match exactly); every result a player was told of is among them, and ``plyhall ratings
--recompute`` agrees."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

from websockets.exceptions import ConnectionClosed

from client.connection import Client
from server.storage import open_storage
from tests.conftest import free_port
from tests.helpers import LOOPBACK_RATED, login, open_game, start_server, stop

PAIRS = 4
KILL_AFTER = 40  # results told to the players before the server is killed, with the other games in full swing


async def _play_rated(a: Client, b: Client, pair: int, told: list[str], enough: asyncio.Event) -> None:
    """``a`` and ``b`` seek each other (their own time control) over and over; the player to move resigns or plays a
    few moves first. Every result either was told is appended to ``told``."""
    seek = {"type": "seek", "game": "connect4", "time_control": {"per_move": 20 + pair}}
    game = 0
    while not enough.is_set():
        game += 1
        await a.send(seek)
        await b.send(seek)
        starts = [await a.expect("game_start", timeout=30), await b.expect("game_start", timeout=30)]
        room = starts[0]["room"]
        clients = {start["seat"]: client for start, client in zip(starts, (a, b), strict=True)}
        to_move = starts[0]["to_move"]
        for column in range(4 + game % 3):  # two moves each at least (a rated game), so that games differ in length
            await clients[to_move].send({"type": "move", "room": room, "move": str(column + 1)})
            await a.expect("moved", room=room, timeout=30)
            to_move = 1 - to_move
        await clients[to_move if game % 2 else 1 - to_move].send({"type": "resign", "room": room})
        over = await a.expect("game_over", room=room, timeout=30)
        told.append(over["record"])
        if len(told) >= KILL_AFTER:
            enough.set()
        for client in (a, b):
            await client.send({"type": "leave", "room": room})


async def _burst(url: str, server: subprocess.Popen) -> list[str]:
    clients = [await login(url, f"rated{i}", secret=f"secret {i}") for i in range(2 * PAIRS)]
    told: list[str] = []
    enough = asyncio.Event()
    tasks = [asyncio.create_task(_play_rated(clients[2 * i], clients[2 * i + 1], i, told, enough))
             for i in range(PAIRS)]
    await enough.wait()
    server.send_signal(signal.SIGKILL)  # while the other pairs are mid-game, mid-commit, anything
    server.wait(30)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(r is None or isinstance(r, (ConnectionError, ConnectionClosed, TimeoutError, OSError))
               for r in results), results
    for client in clients:
        await client.close()
    return told


def test_a_sigkill_during_rated_games_leaves_every_rating_consistent(storage_url: str):
    db = storage_url  # a SQLite file, then a PostgreSQL database
    port = free_port()
    server = start_server(db, port, *LOOPBACK_RATED)
    try:
        told = asyncio.run(_burst(f"ws://127.0.0.1:{port}/ws", server))
    finally:
        stop(server)
    storage = open_storage(db)
    try:
        count, problems = storage.check_ratings()
        assert problems == []
        rated = {game.game_id for game in storage.rated_results()}
        assert set(told) <= rated  # whatever a player was told is stored, and rated with it
        assert count == len(rated) >= KILL_AFTER
        board = storage.leaderboard("connect4")
        assert {name for name, _, _ in board} == {f"rated{i}" for i in range(2 * PAIRS)}
        assert sum(standing.games for _, standing, _ in board) == 2 * count
    finally:
        storage.close()
    check = subprocess.run([sys.executable, "-m", "plyhall", "ratings", "--recompute", "--db", db],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "every stored rating matches" in check.stdout, check.stdout + check.stderr
    # the server starts again on the killed database, and the ratings stay consistent through more games
    server = start_server(db, port, *LOOPBACK_RATED)
    try:
        asyncio.run(_more(f"ws://127.0.0.1:{port}/ws"))
    finally:
        stop(server)
    storage = open_storage(db)
    try:
        more, problems = storage.check_ratings()
        assert problems == [] and more > count
    finally:
        storage.close()


async def _more(url: str) -> None:
    a, b = await login(url, "rated0", secret="secret 0"), await login(url, "rated1", secret="secret 1")
    for client in (a, b):  # a game the kill cut short may wait for its players: leave it (a loss, rated)
        for room in client.welcome.get("rooms", []):
            await client.send({"type": "leave", "room": room})
    await a.request({"type": "seek", "game": "connect4", "rated": True, "time_control": {"per_move": 99}})
    joined = await b.request({"type": "seek", "game": "connect4", "rated": True, "time_control": {"per_move": 99}})
    start = await a.expect("game_start", room=joined["room"], timeout=30)  # not a resumed room's (left above)
    await open_game({0: a, 1: b} if start["seat"] == 0 else {0: b, 1: a}, start["room"], start["to_move"])
    await a.send({"type": "resign", "room": start["room"]})
    await b.expect("game_over", room=start["room"], timeout=30)
    await a.close()
    await b.close()
