"""The SQLite writer's commit delay (``plyhall serve --commit-delay``): writes submitted within the delay of a batch's
first share one commit, a full batch ends the wait at once, a lone write is never held longer than the delay, a stop
commits what waits, and every move is still stored before anybody is told of it."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from server.io.server import PlyhallServer
from server.storage import SQLiteStorage
from server.storage.records import MovePlayed, MoveRecord, Write
from server.storage.writer import COMMIT_BATCH, LoopWriter
from tests.helpers import login


class Handle:
    """What ``call_later`` hands back: cancellable."""

    def __init__(self, callback: Callable[[], Any]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class HandLoop:
    """The two calls ``LoopWriter`` makes of its loop, recorded and run by hand: ``end_turn`` runs what was scheduled
    with ``call_soon``, ``fire`` the timers whose delay has come."""

    def __init__(self) -> None:
        self.soon: list[Callable[[], Any]] = []
        self.timers: list[tuple[float, Handle]] = []

    def call_soon(self, callback: Callable[[], Any]) -> None:
        self.soon.append(callback)

    def call_later(self, delay: float, callback: Callable[[], Any]) -> Handle:
        handle = Handle(callback)
        self.timers.append((delay, handle))
        return handle

    def end_turn(self) -> None:
        soon, self.soon = self.soon, []
        for callback in soon:
            callback()

    def fire(self) -> None:
        timers, self.timers = self.timers, []
        for _, handle in timers:
            if not handle.cancelled:
                handle.callback()


class Recording(SQLiteStorage):
    """SQLite that counts its commits and the moves stored so far."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.batches: list[int] = []
        self.moves_stored = 0

    def apply(self, writes: Sequence[Write]) -> None:
        super().apply(writes)
        self.batches.append(len(writes))
        self.moves_stored += sum(isinstance(w, MovePlayed) for w in writes)


def moves(game: str, first: int, count: int) -> list[Write]:
    """``count`` MovePlayed writes of ``game``, plies ``first`` on."""
    return [MovePlayed(game, MoveRecord(ply, ply % 2, str(ply % 7 + 1), 100, [9.9, 10.0]))
            for ply in range(first, first + count)]


def stored_plies(path: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(path) as db:
        return [(row[0], row[1]) for row in db.execute("SELECT game_id, seq FROM moves ORDER BY game_id, seq")]


def test_a_delayed_commit_waits_for_more_writes_and_a_full_batch_ends_the_wait(tmp_path: Path) -> None:
    storage = Recording(tmp_path / "d.db")
    loop, told = HandLoop(), []
    writer = LoopWriter(storage, loop, told.append, delay=0.002)  # type: ignore[arg-type]
    try:
        assert writer.submit(moves("g", 0, 1)) == 1
        assert [delay for delay, _ in loop.timers] == [0.002] and not loop.soon  # a lone write: the timer, no more
        loop.end_turn()
        assert storage.batches == [] and told == []  # the turn ended: still waiting for more
        writer.submit(moves("g", 1, 2))
        assert len(loop.timers) == 1  # the batch's first write set the one timer
        loop.fire()  # the delay is up: one commit of the three
        assert storage.batches == [3] and told == [3] and writer.queued == 0
        writer.submit(moves("g", 3, COMMIT_BATCH - 1))
        writer.submit(moves("g", 3 + COMMIT_BATCH - 1, 1))  # the batch is full: committed at the end of this turn
        assert loop.timers[-1][1].cancelled and len(loop.soon) == 1
        loop.end_turn()
        assert storage.batches == [3, COMMIT_BATCH] and told == [3, 3 + COMMIT_BATCH]
        loop.fire()  # the cancelled timer does nothing
        assert storage.batches == [3, COMMIT_BATCH]
        writer.submit(moves("h", 0, COMMIT_BATCH + 5))  # a batch full at once: no wait at all
        assert len(loop.soon) == 1 and not loop.timers
        loop.end_turn()
        assert storage.batches[-1] == COMMIT_BATCH + 5
    finally:
        storage.close()


def test_without_a_delay_each_turn_commits_what_it_submitted(tmp_path: Path) -> None:
    storage = Recording(tmp_path / "n.db")
    loop, told = HandLoop(), []
    writer = LoopWriter(storage, loop, told.append)  # type: ignore[arg-type]
    try:
        writer.submit(moves("g", 0, 1))
        writer.submit(moves("g", 1, 1))
        assert len(loop.soon) == 1 and not loop.timers
        loop.end_turn()
        assert storage.batches == [2] and told == [2]
    finally:
        storage.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_delayed_commits_store_what_turn_commits_store_in_order(tmp_path: Path, seed: int) -> None:
    """Random submissions, turn ends and timers: the same rows stored as with a commit every turn, every sequence
    number reported in increasing order, the last one that of the last write."""
    rng = random.Random(seed)
    script = []
    plies: dict[str, int] = {}
    for _ in range(300):
        game = rng.choice("abcde")
        count = rng.choice([1, 1, 1, 2, 4, 20])
        script.append((game, plies.get(game, 0), count, rng.random() < 0.4, rng.random() < 0.2))
        plies[game] = plies.get(game, 0) + count
    stored, commits = [], []
    for name, delay in (("turn", 0.0), ("delayed", 0.005)):
        storage = Recording(tmp_path / f"{name}.db")
        loop, told = HandLoop(), []
        writer = LoopWriter(storage, loop, told.append, delay=delay)  # type: ignore[arg-type]
        for game, first, count, turn_ends, timer_fires in script:
            writer.submit(moves(game, first, count))
            if turn_ends:
                loop.end_turn()
            if timer_fires:
                loop.fire()
        loop.end_turn()
        loop.fire()
        assert told == sorted(set(told)) and told[-1] == writer.submitted == sum(s[2] for s in script)
        assert writer.queued == 0 and sum(storage.batches) == writer.submitted
        commits.append(len(storage.batches))
        storage.close()
        stored.append(stored_plies(tmp_path / f"{name}.db"))
    assert commits[1] < commits[0], f"the delay shares commits: {commits}"
    assert stored[0] == stored[1] == sorted((g, p) for g, n in plies.items() for p in range(n))


async def test_a_stop_commits_the_writes_waiting_for_the_delay(tmp_path: Path) -> None:
    storage = Recording(tmp_path / "s.db")
    told: list[int] = []
    writer = LoopWriter(storage, asyncio.get_running_loop(), told.append, delay=1.0)
    writer.submit(moves("g", 0, 3))
    assert await writer.aclose(1.0)
    assert storage.batches == [3] and told == [3] and writer.unsaved() == []
    storage.close()
    assert stored_plies(tmp_path / "s.db") == [("g", 0), ("g", 1), ("g", 2)]


def test_a_writer_refuses_a_delay_out_of_range(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "r.db")
    try:
        for delay, batch in ((-0.001, COMMIT_BATCH), (2.0, COMMIT_BATCH), (float("nan"), COMMIT_BATCH), (0.002, 0)):
            with pytest.raises(ValueError, match="a commit delay is 0 to 1 seconds and a batch at least 1 write"):
                LoopWriter(storage, HandLoop(), print, delay=delay, batch=batch)  # type: ignore[arg-type]
    finally:
        storage.close()


async def test_with_a_commit_delay_every_move_is_stored_before_anybody_is_told(tmp_path: Path) -> None:
    storage = Recording(tmp_path / "m.db")
    server = PlyhallServer(storage, host="127.0.0.1", port=0, commit_delay=0.05)
    await server.start()
    assert isinstance(server.writer, LoopWriter) and server.writer.commit_delay == 0.05
    url = f"ws://127.0.0.1:{server.port}/ws"
    try:
        ann, bob = await login(url, "ann"), await login(url, "bob")
        await ann.request({"type": "create_room", "game": "connect4", "name": "Late"})
        await ann.request({"type": "join", "room": "Late"})
        await bob.request({"type": "join", "room": "Late"})
        start = await ann.expect("game_start", timeout=10)
        seated = {start["seat"]: ann, 1 - start["seat"]: bob}
        to_move = start["to_move"]
        for ply in range(6):
            await seated[to_move].send({"type": "move", "room": "Late", "move": str(ply % 3 + 1)})
            for client in seated.values():
                await client.expect("moved", room="Late", timeout=10)
                assert storage.moves_stored >= ply + 1, f"ply {ply} was announced before it was stored"
            to_move = 1 - to_move
        await ann.close()
        await bob.close()
    finally:
        await server.stop()
