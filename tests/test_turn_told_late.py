"""Time a player could not use because it had not been told it was its turn is charged to nobody: a game's start
held back by a slow commit (a database that is away for a moment) gives the first mover its whole clock."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from server.io.server import PlyhallServer
from server.storage import SQLiteStorage
from server.storage.records import GameStarted, Write
from tests.helpers import login

HELD = 1.5  # seconds the commit of a game's start takes


class SlowStarts(SQLiteStorage):
    """SQLite whose commits run on the writer's thread (as PostgreSQL's do), the one holding a game's start slowly."""

    @property
    def commits_inline(self) -> bool:
        return False

    def apply(self, writes: Sequence[Write]) -> None:
        if any(isinstance(w, GameStarted) for w in writes):
            time.sleep(HELD)
        super().apply(writes)


async def test_a_game_start_held_by_a_slow_commit_is_not_charged_to_the_first_mover(tmp_path: Path) -> None:
    server = PlyhallServer(SlowStarts(tmp_path / "slow.db"), host="127.0.0.1", port=0)
    await server.start()
    url = f"ws://127.0.0.1:{server.port}/ws"
    try:
        ann, bob = await login(url, "ann"), await login(url, "bob")
        await ann.request({"type": "create_room", "game": "connect4", "name": "Slow",
                           "time_control": {"initial": 20}})
        await ann.request({"type": "join", "room": "Slow"})
        await bob.request({"type": "join", "room": "Slow"})
        start = await ann.expect("game_start", timeout=10 + HELD)
        mover = ann if start["to_move"] == 0 else bob
        await mover.request({"type": "move", "room": "Slow", "move": "4"})
        moved = await mover.expect("moved")
        left = moved["clocks"]["left"][start["to_move"]]
        assert left > 20 - HELD / 2, f"the first mover was charged {20 - left:.2f} s of the commit's {HELD} s"
        await ann.close()
        await bob.close()
    finally:
        await server.stop()
