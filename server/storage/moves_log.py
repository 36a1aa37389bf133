"""SQLite's moves log (``live_moves``, schema version 6), for :class:`server.storage.sql.SQLStorage`: a commit's
moves appended there, and the whole log moved into the ``moves`` table once a second (docs/SCALING.md, the
seventeenth round; docs/OPERATING.md, Backups)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from .batch import latest_snapshots
from .records import Write

log = logging.getLogger("plyhall.storage")

SETTLE_EVERY = 1.0
"""Seconds between two moves of the moves log into the moves table (``SQLStorage.moves_logged``)."""
SETTLE_MOVES = 8192
"""Moves in the log that make the next commit move them into the table sooner: what one commit moves stays small."""
MOVE_COLUMNS = "game_id, seq, seat, move, think_ms, clock0, clock1"
"""A move's columns, in the moves table and in the log, in the order every statement names them."""


class MovesLog:
    """The moves log's side of :class:`server.storage.sql.SQLStorage` (which provides the statements, the
    transaction and the other writes)."""

    _sql: Any
    _writing: Any
    _transaction: Any
    _fence: Any
    _write: Any
    _insert_moves: Any

    moves_logged = False
    """Whether a commit's moves go to the moves log (``live_moves``, appended) and join the ``moves`` table once a
    second (:data:`SETTLE_EVERY`), sorted by game, in the commit that comes then. ``moves``' index is ordered by
    game: the moves of a commit, each of another game, dirtied a page of it each, which SQLite wrote to its log and
    copied back, commit after commit; one transaction a second writes each such page once for a second's moves (the
    sort saves the B-tree's work, not pages). Every read sees both (``all_moves``). SQLite only: its commits write
    whole pages; PostgreSQL keeps inserting into ``moves``, and only settles a log copied in from SQLite."""

    def _start_log(self) -> None:
        self._log_count = 0  # moves this storage put in the log since the last settling
        self._logged_keys: set[tuple[str, int]] = set()  # their (game_id, seq): a move already logged is not again
        self.clock: Callable[[], float] = time.monotonic  # when the log moves into the table (use_clock)
        self._settled_at = self._settle_after = self.clock()  # the last settling; no settling tried before the other
        self._closed_log = False

    def _apply_logged(self, moves: list[Any], keys: list[tuple[str, int]], others: list[Write]) -> None:
        """:meth:`_apply`'s transaction where the moves go to the log (``moves_logged``), and the log into the moves
        table when that is due (:meth:`_settle`); ``keys`` taken back if it fails."""
        now = self.clock()
        logged = self._log_count + len(moves) // 7
        settle = logged > 0 and now >= self._settle_after and (
            now - self._settled_at >= SETTLE_EVERY or logged >= SETTLE_MOVES)
        try:
            with self._transaction() as cur:
                self._fence(cur)
                if moves:
                    self._insert_moves(cur, moves, "live_moves")
                if settle:
                    self._settle(cur)
                for write in latest_snapshots(others):
                    self._write(cur, write)
        except BaseException:
            self._logged_keys.difference_update(keys)  # not logged after all: the writer tries the commit again
            if settle:  # a settling that fails (a full disk): the commits log only, for a while, and it is tried again
                self._settle_after = now + SETTLE_EVERY
            raise
        if settle:
            self._settled(now)
        else:
            self._log_count = logged

    def _settle(self, cur: Any) -> None:
        """Move the log's moves into the moves table, sorted by game and number, so that each page of the table's
        index is written once for all of them and not once a commit (of two moves with one number, the one logged
        first stays, as in the table); then empty the log. From the table itself: whatever it holds, a move in it
        is never deleted without being moved."""
        cur.execute(self._sql(f"INSERT INTO moves ({MOVE_COLUMNS}) SELECT {MOVE_COLUMNS} FROM live_moves WHERE true"
                              " ORDER BY game_id, seq, n ON CONFLICT (game_id, seq) DO NOTHING"))
        cur.execute("DELETE FROM live_moves")

    def _settled(self, now: float) -> None:
        self._log_count, self._settled_at, self._settle_after = 0, now, now
        self._logged_keys.clear()

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Time the moves log's settling by ``clock`` (seconds) from now on (a benchmark's clock)."""
        self.clock = clock
        self._settled_at = self._settle_after = clock()

    def settle(self) -> None:
        """Move what the moves log holds into the moves table now (a server that stops: its file is then whole
        without the log); nothing when this storage logged nothing since the last time."""
        with self._writing():
            if not self._log_count:
                return
            with self._transaction() as cur:
                self._settle(cur)
            self._settled(self.clock())

    def _settle_before_closing(self) -> None:
        if self._closed_log:
            return
        self._closed_log = True
        try:
            self.settle()
        except Exception as exc:  # a database that fails now: the next server to open it settles the log
            log.warning("the moves of the last second stay in the moves log until the database is opened again: %s",
                        exc)
