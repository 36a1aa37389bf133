"""The writer's commits open no temporary files: a statement that may fail halfway (the moves' many-row insert)
journals the pages it changes, and SQLite, left to its default, spills that journal past 64 KiB into a file of its
own that it creates, writes and deletes inside the commit (dozens a second on a busy server, on the event loop)."""

from __future__ import annotations

import os
from pathlib import Path

from server.storage.records import GameStarted, MovePlayed, MoveRecord
from server.storage.sqlite import SQLiteStorage
from tests.helpers import game_record

GAMES = 64  # one move into each of these in one statement: a leaf of the moves' index each, 256 KiB of pages


def temporary_files_open() -> list[str]:
    """The files SQLite's temporary-file names point at that this process has open now."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if "etilqs_" in target:
            found.append(target)
    return found


def test_a_commit_of_many_moves_opens_no_temporary_file(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "plyhall.db")
    try:
        seen: list[str] = []

        def probe() -> int:  # run by a trigger row by row, while the insert's statement is halfway
            seen.extend(temporary_files_open())
            return 0

        storage._writer.create_function("probe", 0, probe)
        storage._writer.execute("CREATE TEMP TRIGGER probe_moves AFTER INSERT ON main.moves"
                                " BEGIN SELECT probe(); END")
        # enough moves a game that each game's moves fill leaves of the index of their own
        ids = [f"g{number:04d}" for number in range(GAMES)]
        storage.apply([GameStarted(game_record(game, "running", moves=0)) for game in ids])
        # each commit the one that moves the moves log into the table (once a second on a server), so that the
        # insert into the index is the commit's own, as it was before the log
        for seq in range(1, 121):
            storage._settled_at -= 3600
            storage.apply([MovePlayed(game, MoveRecord(seq, seq % 2, "4", 10, [30.0, 30.0])) for game in ids])
        seen.clear()
        storage._settled_at -= 3600
        storage.apply([MovePlayed(game, MoveRecord(121, 1, "4", 10, [30.0, 30.0])) for game in ids])
        assert seen == []
        assert storage._reader().execute("SELECT COUNT(*) FROM moves WHERE seq = 121").fetchone() == (GAMES,)
    finally:
        storage.close()
