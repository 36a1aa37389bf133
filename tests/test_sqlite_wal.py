"""SQLite's write-ahead log stays bounded under a writer that never pauses (``server.storage.sqlite.catch_up``).

A checkpoint copies the frames the log held when it began, and SQLite starts the log over only at a write
transaction that begins with all of it copied. On a busy server the writer commits every few milliseconds, so
with one checkpoint a round that never happened under load, and the log grew by 36 MB a second at 5,000 games.
The rounds here are driven by hand, so nothing depends on timing: what a busy writer does while a checkpoint runs
is done by the checkpoint connection's stand-in (:class:`BusyCheckpoints`) right before or after a pass.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import server.storage.sqlite as sqlite_storage
from server.storage.records import MovePlayed, MoveRecord
from server.storage.sqlite import SQLiteStorage, catch_up

GAMES = 40
MOVES_A_COMMIT = 8


class Writer:
    """The server's writer on ``storage``: a commit of a few moves of ``GAMES`` interleaved games, as a loop turn of a
    busy server made one before the moves log (their rows land all over the moves' index); or the same moves in a
    transaction left open (:meth:`begin`, then :meth:`end`), as the writer's is while a checkpoint runs."""

    def __init__(self, storage: SQLiteStorage) -> None:
        self.storage = storage
        self.seq = [0] * GAMES
        self.turn = 0
        self.open = False

    def moves(self) -> list[MovePlayed]:
        """The next commit's moves."""
        writes = []
        for k in range(MOVES_A_COMMIT):
            game = (self.turn * 7 + k * 13) % GAMES
            self.seq[game] += 1
            writes.append(MovePlayed(f"019a{game:08x}wal", MoveRecord(self.seq[game], self.seq[game] % 2, "d4",
                                                                       900, [60.0, 60.0])))
        self.turn += 1
        return writes

    def commit(self) -> None:
        """One transaction of ``MOVES_A_COMMIT`` moves, straight into the moves table's index (the storage's own
        commits append them to the moves log, a page or two a commit, and move them in once a second)."""
        self.begin()
        self.end()

    def begin(self) -> None:
        """A transaction of the next moves, written but not committed yet."""
        rows = [(w.game_id, w.move.seq, w.move.seat, w.move.notation, w.move.think_ms, *w.move.clocks_after)
                for w in self.moves()]
        writer = self.storage._writer
        writer.execute("BEGIN IMMEDIATE")
        writer.executemany("INSERT INTO moves (game_id, seq, seat, move, think_ms, clock0, clock1) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self.open = True

    def end(self) -> None:
        """Commit the transaction :meth:`begin` left open, if one is."""
        if self.open:
            self.storage._writer.execute("COMMIT")
            self.open = False


class BusyCheckpoints:
    """The checkpoint thread's connection, with a busy writer: ``script`` maps a pass's number (1, 2, …) to what the
    writer does before it and after it: "commit" a whole transaction, "begin" one left open (while the log holds
    frames not copied yet, it cannot start the log over when it commits), "end" its commit: after a pass, a commit
    that lands while the pass copies (after what the pass saw, before the check that follows it)."""

    def __init__(self, conn: sqlite3.Connection, writer: Writer,
                 script: dict[int, tuple[tuple[str, ...], tuple[str, ...]]]) -> None:
        self.conn = conn
        self.writer = writer
        self.script = script
        self.passes = 0

    def execute(self, sql: str) -> sqlite3.Cursor:
        """The statement; around a checkpoint, the writer's part of the script."""
        if not sql.startswith("PRAGMA wal_checkpoint"):
            return self.conn.execute(sql)
        self.passes += 1
        before, after = self.script.get(self.passes, ((), ()))
        self.act(before)
        cursor = self.conn.execute(sql)
        row = cursor.fetchone()
        self.act(after)
        return _Row(row)

    def act(self, steps: tuple[str, ...]) -> None:
        for step in steps:
            {"commit": self.writer.commit, "begin": self.writer.begin, "end": self.writer.end}[step]()


class _Row:
    """A cursor's one row, fetched already (the writer's steps after a pass come after the pass)."""

    def __init__(self, row: tuple[int, int, int]) -> None:
        self.row = row

    def fetchone(self) -> tuple[int, int, int]:
        return self.row


BUSY_ROUND = {
    1: (("commit", "begin"), ("end",)),  # a commit that began before pass 1 copied and ends while it copies
    2: (("commit", "begin"), ()),  # another that begins before pass 2 and stays open through pass 3
    4: (("end",), ()),  # and commits only now
}
"""What the writer does during a round of checkpoints on a busy server: each of its commits begins while frames
are left to copy, and ends while a pass copies, or after. A round that stopped with the first one's frames not
copied, or with the second one open, would leave the log growing: neither can start it over."""


def wal_size(storage: SQLiteStorage) -> int:
    """The write-ahead log's file size in bytes."""
    return Path(storage.path + "-wal").stat().st_size


def log_frames(storage: SQLiteStorage) -> int:
    """The frames the write-ahead log holds now: ``mxFrame`` of the wal-index header, at byte 16 of the ``-shm``
    file in the machine's byte order (https://sqlite.org/walformat.html); read, not checkpointed."""
    with open(storage.path + "-shm", "rb") as shm:
        return int.from_bytes(shm.read(20)[16:20], sys.byteorder)


def rounds(storage: SQLiteStorage, checkpoint: Callable[[Any], object], count: int = 12) -> list[tuple[int, int]]:
    """``count`` seconds of a busy server: the writer commits, then a round of checkpoints runs while it goes on
    (:data:`BUSY_ROUND`). After each round and the writer's next commit: the frames the log holds, and its file's
    size."""
    writer = Writer(storage)
    conn = storage._connect()
    after = []
    try:
        for _ in range(count):
            for _ in range(15):
                writer.commit()
            checkpoint(BusyCheckpoints(conn, writer, BUSY_ROUND))
            writer.end()  # a transaction still open when the round ended commits now
            writer.commit()  # the first one after the round: it starts the log over if it can
            after.append((log_frames(storage), wal_size(storage)))
    finally:
        conn.close()
    return after


@pytest.fixture
def storage(tmp_path: Path) -> Any:
    """A server's SQLite storage with its background checkpoints set up but never due (the rounds run by hand)."""
    store = SQLiteStorage(tmp_path / "plyhall.db")
    store.checkpoint_in_background(interval=3600)
    yield store
    store.close()


def one_checkpoint(conn: Any) -> None:
    """What the checkpoint thread did before: one passive checkpoint a round."""
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()


def test_one_checkpoint_a_round_lets_a_busy_writers_log_grow(storage: SQLiteStorage) -> None:
    """The failure being fixed, reproduced (so that the test below cannot pass for want of a busy writer): each round
    leaves frames uncopied, the log is never started over, and it grows round after round, its file with it."""
    after = rounds(storage, one_checkpoint)
    frames = [count for count, _ in after]
    assert all(later > earlier for earlier, later in zip(frames, frames[1:], strict=False)), frames
    assert after[-1][1] > 8 * after[0][1]


def test_catching_up_starts_a_busy_writers_log_over_every_round(storage: SQLiteStorage, tmp_path: Path) -> None:
    """With :func:`catch_up` each round ends with the whole log copied and no transaction that began before: the
    writer's next commit starts it over (the log then holds that commit alone), and its file stays the size of a
    round's writes."""
    after = rounds(storage, catch_up)
    assert all(count <= 2 * MOVES_A_COMMIT for count, _ in after), after  # a commit's frames, no more
    before = SQLiteStorage(tmp_path / "before.db")
    before.checkpoint_in_background(interval=3600)
    try:
        grown = rounds(before, one_checkpoint)
    finally:
        before.close()
    assert 3 * after[-1][1] < grown[-1][1]
    # and the database holds every move the writer committed
    with sqlite3.connect(storage.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM moves").fetchone()[0] == 12 * 20 * MOVES_A_COMMIT


def test_catch_up_stops_after_its_passes_when_the_writer_outruns_it(storage: SQLiteStorage) -> None:
    """A writer that commits during every pass is never caught: the round stops after its passes, says so, and the
    next round tries again."""
    writer = Writer(storage)
    writer.commit()
    conn = BusyCheckpoints(storage._connect(), writer, {n: ((), ("commit",)) for n in range(1, 100)})
    try:
        assert catch_up(conn, passes=5) is False  # type: ignore[arg-type]
        assert conn.passes == 5
        conn.script = {}
        assert catch_up(conn) is True  # type: ignore[arg-type]
    finally:
        conn.conn.close()
    writer.commit()
    assert log_frames(storage) <= 2 * MOVES_A_COMMIT


def test_a_reader_holding_the_log_back_ends_the_round_at_once(storage: SQLiteStorage) -> None:
    """A reader in the middle of a read keeps the frames after its snapshot from being copied: the round stops when
    a pass copies nothing new, not after all its passes, and the next round, the read over, catches up."""
    writer = Writer(storage)
    writer.commit()
    reader = storage._connect()
    conn = BusyCheckpoints(storage._connect(), writer, {})
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM moves").fetchone()  # the snapshot
        writer.commit()
        assert catch_up(conn) is False  # type: ignore[arg-type]
        assert conn.passes == 2
        reader.execute("COMMIT")
        assert catch_up(conn) is True  # type: ignore[arg-type]
    finally:
        conn.conn.close()
        reader.close()


def test_a_grown_log_gives_its_space_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log that grew while checkpoints were held back is cut back to ``WAL_KEPT_BYTES`` when the writer starts it
    over."""
    monkeypatch.setattr(sqlite_storage, "WAL_KEPT_BYTES", 256 << 10)
    small = SQLiteStorage(tmp_path / "small.db")
    small.checkpoint_in_background(interval=3600)
    try:
        writer = Writer(small)
        while wal_size(small) < 2 << 20:  # no checkpoint: the log only grows
            writer.commit()
        conn = small._connect()
        try:
            assert catch_up(conn)
        finally:
            conn.close()
        writer.commit()
        assert wal_size(small) <= 256 << 10
    finally:
        small.close()


def test_the_checkpoint_thread_says_when_the_log_is_held_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """Rounds that cannot copy the log (a read that never ends) are told in the server's log after
    ``UNCAUGHT_WARNING`` of them, with the file's name, for the operator to look for the reader."""
    monkeypatch.setattr(sqlite_storage, "UNCAUGHT_WARNING", 3)
    store = SQLiteStorage(tmp_path / "held.db")
    writer = Writer(store)
    writer.commit()
    reader = store._connect()
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM moves").fetchone()
    writer.commit()
    caplog.set_level(logging.WARNING, logger="plyhall.storage")
    store.checkpoint_in_background(interval=0.01)
    try:
        deadline = time.monotonic() + 60
        while "has not been copied" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "held.db-wal has not been copied into the database" in caplog.text
    finally:
        reader.execute("COMMIT")
        reader.close()
        store.close()
