"""Print a real exchange with a live Plyhall server, as the JSON on the wire.

docs/PROTOCOL.md quotes its output. Run it to see the messages of the current version:

    .venv/bin/python docs/example_exchange.py

It starts a server on a free loopback port with a throwaway database, connects two clients
with the JSON subprotocol (ann in algebraic coordinates, bob in matrix), and plays a short
game of Connect Four (they find each other with a seek). Every frame is printed as sent or
received, one per line.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client.sdk import JSON, Client  # noqa: E402
from protocol.codec import MAX_MESSAGE_BYTES, Codec  # noqa: E402
from server.io.server import PlyhallServer  # noqa: E402
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

    def decode(self, data: bytes | str, limit: int = MAX_MESSAGE_BYTES) -> Any:
        print(f"{self.who} <- {data}")
        return self.inner.decode(data, limit)


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
            print("# ann seeks a game of Connect Four: nobody waits yet, so her seek is kept")
            await ann.request({"type": "list_rooms"})
            await ann.request({"type": "seek", "game": "connect4", "time_control": {"per_move": 30}})
            await asyncio.sleep(0.2)
            print("# bob seeks the same game: the server opens a room for both and the game starts")
            await bob.request({"type": "seek", "game": "connect4", "time_control": {"per_move": 30}})
            start = await ann.expect("game_start")
            await asyncio.sleep(0.2)
            room = start["room"]
            print("# legal moves, a refused move, then moves")
            await ann.request({"type": "legal_moves", "room": room})
            await ann.request({"type": "move", "room": room, "move": "8"}, check=False)
            for ann_move, bob_move in (("4", 0), ({"column": 4}, 0), ("4", 0)):
                await ann.request({"type": "move", "room": room, "move": ann_move})
                await bob.expect("moved")
                await asyncio.sleep(0.1)
                await bob.request({"type": "move", "room": room, "move": {"column": bob_move}})
                await ann.expect("moved")
                await asyncio.sleep(0.1)
            print("# ann's fourth stone in column 4 wins")
            await ann.request({"type": "move", "room": room, "move": "4"})
            await bob.expect("game_over")
            await ann.expect("game_over")
            await asyncio.sleep(0.2)
            print("# after the game")
            await bob.request({"type": "state", "room": room})
            await ann.request({"type": "leave", "room": room})
            await bob.request({"type": "ping"})
            await asyncio.sleep(0.2)
            await ann.close()
            await bob.close()
        finally:
            await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
