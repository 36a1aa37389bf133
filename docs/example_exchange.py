"""Print a real exchange with a live Plyhall server, as the JSON on the wire.

docs/PROTOCOL.md quotes its output. Run it to see the messages of the current version:

    .venv/bin/python docs/example_exchange.py

It starts a server on a free loopback port with a throwaway database, connects two clients
with the JSON subprotocol (ann in algebraic coordinates, bob in matrix), and plays a short
game of Connect Four. Every frame is printed as sent or received, one per line.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client.sdk import JSON, Client  # noqa: E402
from protocol.codec import Codec  # noqa: E402
from server.app import PlyhallServer  # noqa: E402
from server.storage import SQLiteStorage  # noqa: E402


class Tap(Codec):
    """Wraps a codec and prints every frame it encodes or decodes."""

    def __init__(self, inner: Codec, who: str) -> None:
        self.inner = inner
        self.who = who
        self.subprotocol = inner.subprotocol
        self.binary = inner.binary

    def encode(self, msg: dict[str, Any]) -> bytes | str:
        frame = self.inner.encode(msg)
        print(f"{self.who} -> {frame}")
        return frame

    def decode(self, data: bytes | str) -> Any:
        print(f"{self.who} <- {data}")
        return self.inner.decode(data)


async def connect(url: str, who: str) -> Client:
    client = Client(url, JSON)
    await client.connect()
    client.codec = Tap(client.codec, who)
    return client


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = PlyhallServer(SQLiteStorage(Path(tmp) / "example.db"), port=0)
        await server.start()
        url = f"ws://127.0.0.1:{server.port}/ws"
        try:
            ann = await connect(url, "ann")
            bob = await connect(url, "bob")
            print("# log in")
            await ann.login("ann", "ann-secret", "algebraic")
            await bob.login("bob", "bob-secret", "matrix")
            print("# list rooms, create a room, join it")
            await ann.request({"type": "list_rooms"})
            await ann.request({"type": "create_room", "game": "connect4", "name": "Wood Lake",
                               "time_control": {"per_move": 30}})
            await ann.request({"type": "join", "room": "Wood Lake", "seat": 0})
            await asyncio.sleep(0.2)
            print("# bob joins: the game starts")
            await bob.request({"type": "join", "room": "Wood Lake"})
            await ann.expect("game_start")
            await asyncio.sleep(0.2)
            print("# legal moves, a refused move, then moves")
            await ann.request({"type": "legal_moves", "room": "Wood Lake"})
            await ann.request({"type": "move", "room": "Wood Lake", "move": "8"}, check=False)
            for ann_move, bob_move in (("4", 0), ({"column": 4}, 0), ("4", 0)):
                await ann.request({"type": "move", "room": "Wood Lake", "move": ann_move})
                await bob.expect("moved")
                await asyncio.sleep(0.1)
                await bob.request({"type": "move", "room": "Wood Lake", "move": {"column": bob_move}})
                await ann.expect("moved")
                await asyncio.sleep(0.1)
            print("# ann's fourth stone in column 4 wins")
            await ann.request({"type": "move", "room": "Wood Lake", "move": "4"})
            await bob.expect("game_over")
            await ann.expect("game_over")
            await asyncio.sleep(0.2)
            print("# after the game")
            await bob.request({"type": "state", "room": "Wood Lake"})
            await ann.request({"type": "leave", "room": "Wood Lake"})
            await bob.request({"type": "ping"})
            await asyncio.sleep(0.2)
            await ann.close()
            await bob.close()
        finally:
            await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
