"""The serving path leaves no cyclic garbage: a closed connection, a played game, a refused login or a bad
message is freed by reference counting alone. The serving garbage collector (server/io/gc_policy.py) relies
on it: it freezes survivors, so a cycle among them would never be freed.

The clients run in a process of their own, so everything the collector finds here is the server's.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import sys

from server.io.server import PlyhallServer, RateLimit
from server.storage import SQLiteStorage

CLIENTS = r'''
import asyncio, json, random, sys
from websockets.asyncio.client import connect
from client.sdk import FunctionPlayer, RunOptions, run_player

def pick(turn):
    return random.choice(turn.legal_moves)

async def main(url, rounds):
    for i in range(rounds):
        async with connect(url, subprotocols=["plyhall.v1.json"]) as ws:  # login, nonsense, close
            await ws.send(json.dumps({"type": "login", "name": f"u{i}"}))
            await ws.recv()
            await ws.send("{not json")
            await ws.recv()
            await ws.send(json.dumps({"type": "move", "room": "Nowhere", "move": 4}))
            await ws.recv()
        async with connect(url, subprotocols=["plyhall.v1.json"]) as ws:  # a wrong secret
            await ws.send(json.dumps({"type": "login", "name": "owner", "secret": f"guess{i}"}))
            await ws.recv()
        await asyncio.gather(*(run_player(FunctionPlayer(pick), RunOptions(  # a whole game by seek
            name=f"p{i}{side}", url=url, game="connect4", games=1, think="thread")) for side in "ab"))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
'''


async def _clients(url: str, rounds: int) -> None:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENTS, url, str(rounds))
    assert await asyncio.wait_for(proc.wait(), 120) == 0


async def test_closed_connections_and_finished_games_leave_no_cyclic_garbage(tmp_path):
    srv = PlyhallServer(SQLiteStorage(tmp_path / "mem.db"), port=0, rate_limit=RateLimit(rate=1e5, burst=1e5))
    await srv.start()
    url = f"ws://127.0.0.1:{srv.port}/ws"
    try:
        claim = await asyncio.create_subprocess_exec(sys.executable, "-c", (
            "import asyncio, sys\nfrom client.sdk import Client\n"
            "async def m():\n    c = Client(sys.argv[1])\n    await c.connect()\n"
            "    await c.login('owner', 'right')\n    await c.close()\nasyncio.run(m())"), url)
        assert await claim.wait() == 0
        await _clients(url, 2)  # warm up: first-use caches and imports are not garbage
        await srv.flush()
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            await _clients(url, 5)
            await srv.flush()
            await asyncio.sleep(0.2)  # let the last closes finish
            found = gc.collect()
            kinds = collections.Counter(type(o).__qualname__ for o in gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
        assert found == 0, f"cyclic garbage left behind: {kinds.most_common(10)}"
        assert srv.storage.count_games() == 7
    finally:
        await srv.stop()
