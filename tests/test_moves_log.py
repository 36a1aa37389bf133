"""SQLite's moves log (``live_moves``): a commit appends its moves there, and once a second they move into the moves
table sorted by game. Whatever the log holds, every read sees every move once; a failed commit, a second copy of a
move, a server killed or stopped, a copy of the database lose none and add none; and a commit of moves of many games
writes a page or two, not a page a move."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from server.storage import open_storage
from server.storage.records import GameEnded, GameStarted, MovePlayed, MoveRecord, RoomSaved
from server.storage.sqlite import SQLiteStorage
from tests.helpers import game_record as record


def move(seq: int, notation: str = "d4") -> MoveRecord:
    return MoveRecord(seq, seq % 2, notation, 100 * seq, [60.0 - seq, 60.0])


def started(game_id: str) -> GameStarted:
    return GameStarted(record(game_id, "running", moves=0))


def tables(path: Path) -> tuple[int, int]:
    """Rows in the moves table and in the log, read as any SQLite tool would."""
    with sqlite3.connect(path) as conn:
        return (conn.execute("SELECT COUNT(*) FROM moves").fetchone()[0],
                conn.execute("SELECT COUNT(*) FROM live_moves").fetchone()[0])


def settle_due(storage: SQLiteStorage) -> None:
    """Make the next commit the one that moves the log into the table (as a second later would)."""
    storage._settled_at -= 3600
    storage._settle_after -= 3600


def test_moves_wait_in_the_log_and_every_read_sees_them(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "p.db")
    try:
        storage.apply([started("g1"), started("g2"), RoomSaved({"name": "Lake", "record": "g1"}),
                       *(MovePlayed(g, move(s)) for s in (1, 2) for g in ("g1", "g2"))])
        storage.apply([MovePlayed("g1", move(3, "e5"))])
        assert tables(tmp_path / "p.db") == (0, 5)  # nothing in the table yet: it is all in the log
        game = storage.get_game("g1")
        assert [m["move"] for m in game["moves"]] == ["d4", "d4", "e5"] and game["move_count"] == 3
        assert game["moves"][2] == {"seq": 3, "seat": 1, "move": "e5", "think_ms": 300, "clocks_after": [57.0, 60.0]}
        assert {g["id"]: g["move_count"] for g in storage.list_games(50, status="running")} == {"g1": 3, "g2": 2}
        assert storage.counts()["moves"] == 5
        assert sorted(storage.rows("moves"))[:3] == [("g1", 1, 1, "d4", 100, 59.0, 60.0),
                                                     ("g1", 2, 0, "d4", 200, 58.0, 60.0),
                                                     ("g1", 3, 1, "e5", 300, 57.0, 60.0)]  # what a copy reads
        settle_due(storage)
        storage.apply([MovePlayed("g2", move(3))])
        assert tables(tmp_path / "p.db") == (6, 0)  # the log's five and the commit's own, into the table
        with sqlite3.connect(tmp_path / "p.db") as conn:
            rows = conn.execute("SELECT game_id, seq, move FROM moves ORDER BY game_id, seq").fetchall()
        assert rows == [("g1", 1, "d4"), ("g1", 2, "d4"), ("g1", 3, "e5"), ("g2", 1, "d4"), ("g2", 2, "d4"),
                        ("g2", 3, "d4")]
        storage.apply([MovePlayed("g1", move(4))])
        assert tables(tmp_path / "p.db") == (6, 1)  # and the log starts again
        assert [m["seq"] for m in storage.get_game("g1")["moves"]] == [1, 2, 3, 4]
        assert storage.load().running["g1"].moves[-1].seq == 4
    finally:
        storage.close()


def test_a_move_stored_twice_stays_as_it_was_first(tmp_path: Path) -> None:
    """A write applied again (a spill file restored, a whole game saved) keeps the first copy, in the log, across
    a settling, and in the table, as ``ON CONFLICT DO NOTHING`` always kept it."""
    storage = SQLiteStorage(tmp_path / "p.db")
    try:
        storage.apply([started("g1"), MovePlayed("g1", move(1, "a1")), MovePlayed("g1", move(1, "b1"))])
        storage.apply([MovePlayed("g1", move(1, "c1")), MovePlayed("g1", move(2, "a2"))])
        assert tables(tmp_path / "p.db") == (0, 2)
        assert [m["move"] for m in storage.get_game("g1")["moves"]] == ["a1", "a2"]
        settle_due(storage)
        storage.apply([MovePlayed("g1", move(2, "b2")), MovePlayed("g1", move(3, "a3"))])
        storage.apply([MovePlayed("g1", move(1, "d1"))])  # settled already: logged again, read as it was
        game = storage.get_game("g1")
        assert [m["move"] for m in game["moves"]] == ["a1", "a2", "a3"] and game["move_count"] == 3
        assert storage.counts()["moves"] == 3
        settle_due(storage)
        storage.apply([])
        assert tables(tmp_path / "p.db") == (3, 0)
        assert [m["move"] for m in storage.get_game("g1")["moves"]] == ["a1", "a2", "a3"]
    finally:
        storage.close()


def test_of_two_copies_in_the_log_the_first_stays(tmp_path: Path) -> None:
    """A second copy of a move in the log itself (another writer's, or a commit that went through and raised):
    every read, the settling and the next start keep the one logged first."""
    path = tmp_path / "p.db"
    for reopen in (False, True):
        path.unlink(missing_ok=True)
        storage = SQLiteStorage(path)
        try:
            storage.apply([started("g1"), MovePlayed("g1", move(1, "a1")), MovePlayed("g1", move(2, "a2"))])
            with sqlite3.connect(path) as conn:
                conn.execute("INSERT INTO live_moves (game_id, seq, seat, move, think_ms, clock0, clock1)"
                             " VALUES ('g1', 1, 1, 'x1', 5, 1.0, 1.0)")
            game = storage.get_game("g1")
            assert [m["move"] for m in game["moves"]] == ["a1", "a2"] and game["move_count"] == 2
            if reopen:
                storage._log_count = 0  # as if this process had died: the next one to open the file settles
                storage.close()
                storage = SQLiteStorage(path)
            else:
                storage.settle()
            assert tables(path) == (2, 0)
            assert [m["move"] for m in storage.get_game("g1")["moves"]] == ["a1", "a2"]
        finally:
            storage.close()


def test_a_full_log_settles_before_its_second_and_a_wiped_one_starts_afresh(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("server.storage.moves_log.SETTLE_MOVES", 3)
    storage = SQLiteStorage(tmp_path / "p.db")
    try:
        storage.apply([started("g1"), MovePlayed("g1", move(1)), MovePlayed("g1", move(2))])
        assert tables(tmp_path / "p.db") == (0, 2)
        storage.apply([MovePlayed("g1", move(3))])
        assert tables(tmp_path / "p.db") == (3, 0)  # three logged: in the table, though no second has passed
        storage.apply([MovePlayed("g1", move(4))])
        storage.wipe()
        storage.apply([started("g1"), MovePlayed("g1", move(4, "h4"))])  # logged before the wipe: stored again
        assert [m["move"] for m in storage.get_game("g1")["moves"]] == ["h4"]
    finally:
        storage.close()


def test_a_failed_commit_logs_nothing_and_its_retry_everything(tmp_path: Path, monkeypatch) -> None:
    """The log's bookkeeping changes with the commit only: the moves of a commit that failed are not taken for
    logged when the writer tries them again (they would be dropped as copies)."""
    storage = SQLiteStorage(tmp_path / "p.db")
    try:
        storage.apply([started("g1"), MovePlayed("g1", move(1))])
        failing = [MovePlayed("g1", move(2)), RoomSaved({"name": "Lake", "record": "g1"})]
        real = storage._write

        def broken(cur, write):
            raise failure

        monkeypatch.setattr(storage, "_write", broken)
        for due, failure in ((False, sqlite3.OperationalError("disk I/O error")), (True, KeyboardInterrupt())):
            if due:  # a commit to the log, then one that would settle it (stopped by Ctrl-C halfway)
                settle_due(storage)
            with pytest.raises(type(failure)):
                storage.apply(failing)
            assert [m["seq"] for m in storage.get_game("g1")["moves"]] == [1]
        monkeypatch.setattr(storage, "_write", real)
        storage.apply(failing)
        assert [m["seq"] for m in storage.get_game("g1")["moves"]] == [1, 2]
        assert tables(tmp_path / "p.db") == (0, 2)  # a settling that failed waits a second: the retry logs only
        settle_due(storage)
        storage.apply([])
        assert tables(tmp_path / "p.db") == (2, 0)
    finally:
        storage.close()


def test_a_stopped_server_leaves_no_log_and_a_killed_one_loses_no_move(tmp_path: Path) -> None:
    """Closing moves the log into the table. A server killed with moves in its log: the next one to open the
    file moves them in before it reads anything (its running games come back whole)."""
    path = tmp_path / "p.db"
    storage = SQLiteStorage(path)
    storage.apply([started("g1"), RoomSaved({"name": "Lake", "record": "g1"}),
                   *(MovePlayed("g1", move(s)) for s in range(1, 4))])
    storage.close()
    assert tables(path) == (3, 0)
    script = (f"from server.storage.sqlite import SQLiteStorage\n"
              f"from server.storage.records import MovePlayed, MoveRecord\n"
              f"s = SQLiteStorage({str(path)!r})\n"
              f"s.apply([MovePlayed('g1', MoveRecord(k, k % 2, 'e5', 1, [1.0, 2.0])) for k in (4, 5)])\n"
              f"import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parent.parent, timeout=60,
                          check=False)
    assert done.returncode == -9
    assert tables(path) == (3, 2)  # the killed process's last moves: in the log only
    storage = SQLiteStorage(path)
    try:
        assert tables(path) == (5, 0)
        moves = storage.load().running["g1"].moves
        assert [(m.seq, m.notation) for m in moves] == [(1, "d4"), (2, "d4"), (3, "d4"), (4, "e5"), (5, "e5")]
    finally:
        storage.close()


def test_a_copy_takes_the_logged_moves_too(tmp_path: Path) -> None:
    source = SQLiteStorage(tmp_path / "from.db")
    try:
        source.save_game(record("g0", moves=3))
        source.apply([started("g1"), *(MovePlayed("g1", move(s)) for s in (1, 2))])
        assert tables(tmp_path / "from.db") == (0, 5)
        done = subprocess.run([sys.executable, "-m", "plyhall", "db", "copy", "--from", str(tmp_path / "from.db"),
                               "--to", str(tmp_path / "to.db")], capture_output=True, text=True, timeout=120,
                              check=False, cwd=Path(__file__).resolve().parent.parent)
    finally:
        source.close()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the counts agree" in done.stdout and re.search(r"^moves +5 -> +5$", done.stdout, re.M), done.stdout
    copy = open_storage(str(tmp_path / "to.db"))
    try:
        assert [m["seq"] for m in copy.get_game("g1")["moves"]] == [1, 2]
        assert len(copy.get_game("g0")["moves"]) == 3
    finally:
        copy.close()


def test_a_commit_of_many_games_moves_writes_a_page_or_two(tmp_path: Path) -> None:
    """What the log is for: 64 games whose moves' index entries lie far apart (as at 5,000 games at once), a
    commit of a move of each. Appended to the log, a commit writes a few pages to the write-ahead log; into the
    moves table's index, it wrote a page a game. Moved in once a second, sorted, they share their pages."""
    path = tmp_path / "p.db"
    storage = SQLiteStorage(path)
    games = [f"019a{g:08x}log" for g in range(64)]
    try:
        storage.apply([started(g) for g in games])
        for seq in range(1, 41):  # 2,560 moves in the table, the index's entries of each game far from the next
            settle_due(storage)
            storage.apply([MovePlayed(g, move(seq)) for g in games])
        assert tables(path) == (64 * 40, 0)
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            wal = Path(str(path) + "-wal")
            storage.apply([MovePlayed(g, move(41)) for g in games])
            logged = wal.stat().st_size
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            storage.apply([MovePlayed(g, move(42)) for g in games])
            settle_due(storage)
            storage.apply([])  # the settling: 128 moves into the table in one commit
            settled = wal.stat().st_size
        page = 4096 + 24
        assert logged <= 4 * page, f"a commit of 64 moves wrote {logged // page} pages"
        assert settled >= 10 * page, "the moves table's index does spread these games over many pages"
        assert [m["seq"] for m in storage.get_game(games[7])["moves"]] == list(range(1, 43))
    finally:
        storage.close()


def test_a_game_that_ends_reads_whole_before_and_after_the_log_moves(storage_url: str) -> None:
    """The same reads on SQLite (the log) and PostgreSQL (no log): an ended game's moves, its count, and the
    listing of running games."""
    storage = open_storage(storage_url)
    try:
        ended = record("g-end", moves=3)
        storage.apply([started("g-end"), started("g-run"), *(MovePlayed("g-end", m) for m in ended.moves),
                       MovePlayed("g-run", move(1)), GameEnded(ended)])
        game = storage.get_game("g-end")
        assert game["status"] == "finished" and len(game["moves"]) == game["move_count"] == 3
        assert [(g["id"], g["move_count"]) for g in storage.list_games(50, status="running")] == [("g-run", 1)]
        assert [g["id"] for g in storage.iter_games()] == ["g-end"]
    finally:
        storage.close()
