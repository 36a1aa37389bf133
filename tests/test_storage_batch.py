"""A batch of writes committed at once stores exactly what the same writes store committed one by one, in order:
the moves go in one statement, a room's snapshot replaced later in the batch is skipped, a game's end updates the
row its start stored (or stores the whole row when there is none). On SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from server.storage import open_storage
from server.storage.base import TABLES
from server.storage.batch import dumps
from server.storage.records import (
    GameEnded,
    GameStarted,
    MovePlayed,
    MoveRecord,
    RoomRemoved,
    RoomSaved,
    Write,
)
from tests.helpers import game_record


def random_writes(rng: random.Random, count: int) -> list[Write]:
    """``count`` writes of a few rooms and games, in the kinds of order a hall makes and some it does not: a
    room saved several times, removed and saved again; games started, ended (some never started), moves of
    running and of ended games, a move stored twice with different contents (the first one stays)."""
    writes: list[Write] = []
    versions = 0
    for _ in range(count):
        kind = rng.choice(["saved", "saved", "removed", "started", "ended", "move", "move", "move"])
        game = f"g{rng.randrange(4)}"
        if kind == "saved":
            versions += 1
            writes.append(RoomSaved({"name": f"room {rng.randrange(3)}", "version": versions,
                                     "record": rng.choice([None, game])}))
        elif kind == "removed":
            writes.append(RoomRemoved(f"room {rng.randrange(3)}"))
        elif kind == "started":
            writes.append(GameStarted(game_record(game, "running", moves=0, started=float(rng.randrange(100)))))
        elif kind == "ended":
            record = game_record(game, rng.choice(["finished", "forfeit", "aborted"]), moves=rng.randrange(6),
                                 started=float(rng.randrange(100)))
            record.winner = rng.choice([None, 0, 1])
            record.unrated = rng.choice([None, "too short"])
            writes.append(GameEnded(record))
        else:
            seq = rng.randrange(1, 8)
            writes.append(MovePlayed(game, MoveRecord(seq, seq % 2, str(rng.randrange(1, 8)), rng.randrange(500),
                                                      [rng.choice([None, 12.5]), 30.0])))
    return writes


def stored(storage) -> dict[str, list[tuple]]:
    """Every row of the tables these writes touch (a room's ``updated_at``, the commit's time, left out)."""
    tables = {table: sorted(storage.rows(table), key=repr) for table in ("games", "moves", "rooms")}
    tables["rooms"] = [row[:TABLES["rooms"].index("updated_at")] for row in tables["rooms"]]
    return tables


@pytest.mark.parametrize("seed", range(6))
def test_a_batch_stores_what_its_writes_store_one_by_one(storage_url, seed):
    storage = open_storage(storage_url)
    try:
        writes = random_writes(random.Random(seed), 60)
        storage.apply(writes)
        batched = stored(storage)
        storage.wipe()
        for write in writes:
            storage.apply([write])
        one_by_one = stored(storage)
    finally:
        storage.close()
    assert batched == one_by_one
    assert batched["moves"] and batched["games"]  # the writes stored something to compare


def test_a_rooms_snapshot_replaced_in_the_same_batch_leaves_the_last_one(tmp_path):
    storage = open_storage(str(tmp_path / "plyhall.db"))
    try:
        storage.apply([RoomSaved({"name": "Lake", "status": "waiting"}), RoomSaved({"name": "Pond", "status": "open"}),
                       RoomRemoved("Pond"), RoomSaved({"name": "Lake", "status": "playing"})])
        assert [room["status"] for room in storage.load().rooms] == ["playing"]
        storage.apply([RoomSaved({"name": "Lake", "status": "over"}), RoomRemoved("Lake")])
        assert storage.load().rooms == []
    finally:
        storage.close()


def test_a_games_end_is_stored_whether_or_not_its_start_was(tmp_path):
    storage = open_storage(str(tmp_path / "plyhall.db"))
    try:
        storage.apply([GameStarted(game_record("started", "running", moves=0, started=5.0))])
        storage.apply([GameEnded(game_record("started", moves=4, started=5.0)), GameEnded(game_record("never"))])
        started, never = storage.get_game("started"), storage.get_game("never")
    finally:
        storage.close()
    assert (started["status"], started["winner"], started["move_count"], started["ended_at"]) == ("finished", 0, 4, 65)
    assert never is not None and (never["status"], never["players"], never["options"]) == (
        "finished", ["ann", "bob"], {"first": 0})


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value as snapshots hold them: nested objects and lists, text with non-ASCII and escapes,
    integers, floats (infinite and NaN too), booleans and nulls."""
    kind = rng.randrange(8 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randrange(-10**12, 10**12)
    if kind == 2:
        return rng.choice([rng.uniform(-1e6, 1e6), 0.1, -0.0, math.inf, -math.inf, 1e300])
    if kind in (3, 4, 5):
        return "".join(rng.choice('ab "\\\n\té€😀\x00/') for _ in range(rng.randrange(12)))
    if kind == 6:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {str(random_json(rng, 4)): random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_stored_json_is_the_text_json_dumps_makes():
    rng = random.Random(44)
    for _ in range(2000):
        value = random_json(rng)
        assert dumps(value) == json.dumps(value)
    nan = {"x": [math.nan]}
    assert dumps(nan) == json.dumps(nan) == '{"x": [NaN]}'
    with pytest.raises(TypeError):
        dumps({"when": object()})


def test_a_batch_of_many_moves_stores_each_once(storage_url):
    storage = open_storage(storage_url)
    moves = [MoveRecord(seq, seq % 2, str(seq % 7 + 1), seq, [30.0 - seq / 10, None]) for seq in range(1, 151)]
    try:
        storage.apply([GameStarted(game_record("long", "running", moves=0)),
                       *(MovePlayed("long", move) for move in moves),
                       MovePlayed("long", MoveRecord(7, 0, "changed", 0, [1.0, 1.0]))])  # stored already: kept
        stored_moves = storage.get_game("long")["moves"]
    finally:
        storage.close()
    assert stored_moves == [move.to_json() for move in moves]
