"""The spill file (server/storage/spill.py), in process: what a stopping server could not commit is kept in order,
replayed once by the next start and removed, and a damaged file is a clear error. tests/test_attacks.py makes a
real server spill (a slow test); this keeps the file's logic in the fast tier."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.storage import SQLiteStorage, StorageError
from server.storage.records import GameEnded, GameStarted, MovePlayed
from server.storage.spill import describe, load, replay, spill
from tests.helpers import game_record


def writes_of_a_game(game_id: str, moves: int = 3) -> list:
    """A game's writes as the hall makes them: its start, its moves, its end."""
    finished = game_record(game_id, moves=moves)
    running = game_record(game_id, status="running", moves=0)
    return [GameStarted(running), *(MovePlayed(game_id, move) for move in finished.moves), GameEnded(finished)]


def test_spilled_writes_come_back_in_order_after_those_kept_before(tmp_path: Path) -> None:
    path = str(tmp_path / "plyhall.db.spill")
    first, second = writes_of_a_game("g1"), writes_of_a_game("g2", moves=1)
    spill(path, first)
    spill(path, second)  # a second stop that could not commit either
    assert load(path) == [*first, *second]
    assert not Path(f"{path}.tmp").exists()


def test_the_log_says_how_many_moves_of_which_games() -> None:
    assert describe(writes_of_a_game("g2", moves=1) + writes_of_a_game("g1")) == \
        "8 writes: 4 moves and 2 results of games g1, g2"
    moves = game_record("g1", moves=2).moves
    assert describe([MovePlayed("g1", move) for move in moves]) == "2 writes: 2 moves and 0 results of games g1"
    assert describe([MovePlayed("g1", moves[0]), GameEnded(game_record("g1"))]).endswith("1 move and 1 result of "
                                                                                        "games g1")
    assert describe([MovePlayed("g1", moves[0])]) == "1 write: 1 move and 0 results of games g1"
    many = [GameStarted(game_record(f"g{i:02}", status="running", moves=0)) for i in range(23)]
    assert describe(many).endswith("of games g00, g01, g02, g03, g04, g05, g06, g07, g08, g09, g10, g11, g12, g13, "
                                   "g14, g15, g16, g17, g18, g19 and 3 more")


def test_the_next_start_replays_the_file_once_and_removes_it(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "plyhall.db")
    try:
        assert replay(storage) is None  # nothing kept
        spill(storage.spill_path, writes_of_a_game("g1"))
        assert replay(storage) == "5 writes: 3 moves and 1 result of games g1"
        assert not Path(storage.spill_path).exists()
        game = storage.get_game("g1")
        assert game is not None and game["status"] == "finished" and len(game["moves"]) == 3
        spill(storage.spill_path, writes_of_a_game("g1"))  # writes that reached the database after all
        replay(storage)
        assert len(storage.get_game("g1")["moves"]) == 3  # change nothing
    finally:
        storage.close()


def test_a_damaged_file_names_its_line_and_stays(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "plyhall.db")
    try:
        spill(storage.spill_path, writes_of_a_game("g1"))
        with open(storage.spill_path, "a", encoding="utf-8") as out:
            out.write('{"kind": "nothing we wrote"}\n')
        with pytest.raises(StorageError, match=r"line 6 of the spill file .*plyhall\.db\.spill is not a stored "
                                               r"write .*move the file away"):
            replay(storage)
        assert Path(storage.spill_path).exists() and storage.get_game("g1") is None
    finally:
        storage.close()


def test_counted_words_say_one_in_the_singular() -> None:
    from protocol.wording import counted
    assert [counted(n, "game") for n in (0, 1, 2)] == ["0 games", "1 game", "2 games"]
    assert counted(2, "inaccuracy") == "2 inaccuracies" and counted(2, "day") == "2 days"


def test_a_spill_file_that_cannot_be_written_is_said_lost_and_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    """On a full disk the stop's last line said the writes were "kept in ....spill, stored at the next start" right
    after the log said they were lost, and an empty ``.spill.tmp`` stayed behind."""
    import errno
    import os

    from server.io.closing import keep_unsaved

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    storage = SQLiteStorage(tmp_path / "plyhall.db")
    try:
        monkeypatch.setattr(os, "fsync", full)
        said = keep_unsaved(storage, writes_of_a_game("g1", moves=1))
        assert said.startswith("3 writes: 1 move") and "(lost: the spill file" in said and "No space left" in said, said
        assert "kept in" not in said
        assert list(tmp_path.glob("*.spill*")) == []
        monkeypatch.undo()
        said = keep_unsaved(storage, writes_of_a_game("g1", moves=1))
        assert said.endswith(f"(kept in {storage.spill_path}, stored at the next start)"), said
    finally:
        storage.close()
