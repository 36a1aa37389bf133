"""SQLite's write-ahead log stays bounded under a writer that never pauses (``server.storage.sqlite.catch_up``).

A checkpoint copies the frames the log held when it began. On a busy server the writer commits every few
milliseconds, so the log holds more by the time a checkpoint ends; SQLite starts the log over only at a commit
that finds all of it copied. With one checkpoint a round, that never happened under load, and the log grew by
36 MB a second at 5,000 games, every commit slower than the last. The rounds here are driven by hand: the writer's
commits "during" a checkpoint are made between its passes, where a busy writer's land, so nothing depends on
timing.
"""

from __future__ import annotations

import sqlite3
import sys
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
    busy server makes one (their rows land all over the moves' index, as real games' do)."""

    def __init__(self, storage: SQLiteStorage) -> None:
        self.storage = storage
        self.seq = [0] * GAMES
        self.turn = 0

    def commit(self) -> None:
        """One transaction of ``MOVES_A_COMMIT`` moves."""
        writes = []
        for k in range(MOVES_A_COMMIT):
            game = (self.turn * 7 + k * 13) % GAMES
            self.seq[game] += 1
            writes.append(MovePlayed(f"019a{game:08x}wal", MoveRecord(self.seq[game], self.seq[game] % 2, "d4",
                                                                       900, [60.0, 60.0])))
        self.turn += 1
        self.storage.apply(writes)


class BusyCheckpoints:
    """The checkpoint thread's connection, with the writer committing while each of its first ``during`` passes
    copies. A pass copies the frames the log held when it began, and no further than any reader's snapshot; here
    a reader takes its snapshot, the writer commits, and the pass runs with that snapshot still open: it copies
    what there was before the commit and leaves the commit's frames, as a pass leaves a commit that lands while
    it copies."""

    def __init__(self, conn: sqlite3.Connection, reader: sqlite3.Connection, commit: Callable[[], None],
                 during: int) -> None:
        self.conn = conn
        self.reader = reader
        self.commit = commit
        self.during = during
        self.passes = 0

    def execute(self, sql: str) -> sqlite3.Cursor:
        """The pass, with a commit of the writer's landing in it (while ``during`` lasts)."""
        self.passes += 1
        if self.during <= 0:
            return self.conn.execute(sql)
        self.during -= 1
        self.reader.execute("BEGIN")
        self.reader.execute("SELECT COUNT(*) FROM moves").fetchone()  # the snapshot: the log as it is now
        self.commit()
        try:
            return self.conn.execute(sql)
        finally:
            self.reader.execute("COMMIT")


def wal_size(storage: SQLiteStorage) -> int:
    """The write-ahead log's file size in bytes."""
    return Path(storage.path + "-wal").stat().st_size


def log_frames(storage: SQLiteStorage) -> int:
    """The frames the write-ahead log holds now: ``mxFrame`` of the wal-index header, at byte 16 of the ``-shm``
    file in the machine's byte order (https://sqlite.org/walformat.html); read, not checkpointed."""
    with open(storage.path + "-shm", "rb") as shm:
        return int.from_bytes(shm.read(20)[16:20], sys.byteorder)


def rounds(storage: SQLiteStorage, checkpoint: Callable[[Any], object], count: int = 12) -> list[tuple[int, int]]:
    """``count`` seconds of a busy server: the writer commits, then the checkpoint thread's round runs while it goes
    on committing. After each round and the writer's next commit: the frames the log holds, and its file's size."""
    writer = Writer(storage)
    conn, reader = storage._connect(), storage._connect()
    after = []
    try:
        for _ in range(count):
            for _ in range(15):
                writer.commit()
            checkpoint(BusyCheckpoints(conn, reader, writer.commit, during=3))
            writer.commit()  # the first commit after the round: it starts the log over if all of it was copied
            after.append((log_frames(storage), wal_size(storage)))
    finally:
        conn.close()
        reader.close()
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
    """With :func:`catch_up` each round ends with the whole log copied: the writer's next commit starts it over (the
    log then holds that commit alone), and its file stays the size of a round's writes."""
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
        assert conn.execute("SELECT COUNT(*) FROM moves").fetchone()[0] == 12 * 19 * MOVES_A_COMMIT


def test_catch_up_stops_after_its_passes_when_the_writer_outruns_it(storage: SQLiteStorage) -> None:
    """A writer that commits during every pass is never caught: the round stops after its passes (the next round
    tries again) and says how far it got."""
    writer = Writer(storage)
    writer.commit()
    conn = BusyCheckpoints(storage._connect(), storage._connect(), writer.commit, during=100)
    try:
        frames, copied = catch_up(conn, passes=5)  # type: ignore[arg-type]
    finally:
        conn.conn.close()
        conn.reader.close()
    assert conn.passes == 5
    assert 0 < copied < frames  # the last pass left the commit that landed in it


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
            frames, copied = catch_up(conn)
        finally:
            conn.close()
        assert copied == frames
        writer.commit()
        assert wal_size(small) <= 256 << 10
    finally:
        small.close()
