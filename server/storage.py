"""Storage of finished games and claimed names, behind one small interface.

``Storage`` is what the server needs; ``SQLiteStorage`` is the embedded
default (WAL, ``synchronous=NORMAL``, a busy timeout). The SQL is plain and
portable (no SQLite-only syntax beyond the pragmas), so a PostgreSQL
implementation of the same interface needs only a different connection.

Calls are blocking: the server runs them on one dedicated writer thread.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .hall import Claim
from .room import GameRecord

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS players (
        name VARCHAR(32) PRIMARY KEY,
        salt VARCHAR(64) NOT NULL,
        digest VARCHAR(128) NOT NULL,
        claimed_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS games (
        id VARCHAR(32) PRIMARY KEY,
        room VARCHAR(64) NOT NULL,
        game VARCHAR(32) NOT NULL,
        options TEXT NOT NULL,
        time_control TEXT NOT NULL,
        player0 VARCHAR(32) NOT NULL,
        player1 VARCHAR(32) NOT NULL,
        winner INTEGER,
        reason TEXT NOT NULL,
        status VARCHAR(16) NOT NULL,
        move_count INTEGER NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        ended_at DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS games_ended ON games (ended_at)",
    """CREATE TABLE IF NOT EXISTS moves (
        game_id VARCHAR(32) NOT NULL,
        seq INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        move VARCHAR(64) NOT NULL,
        think_ms INTEGER NOT NULL,
        clock0 DOUBLE PRECISION,
        clock1 DOUBLE PRECISION,
        PRIMARY KEY (game_id, seq))""",
]


class Storage:
    """What the server stores. Every method may block; the server calls them off the event loop."""

    def load_claims(self) -> dict[str, Claim]:
        """Every claimed name with its salted secret hash."""
        raise NotImplementedError

    def save_claim(self, name: str, claim: Claim) -> None:
        """Store a new claim."""
        raise NotImplementedError

    def save_game(self, record: GameRecord) -> None:
        """Store a finished or aborted game with all its moves, durably."""
        raise NotImplementedError

    def list_games(self, limit: int = 50, offset: int = 0, game: str | None = None,
                   player: str | None = None) -> list[dict[str, Any]]:
        """Summaries of stored games, newest first."""
        raise NotImplementedError

    def get_game(self, game_id: str) -> dict[str, Any] | None:
        """One stored game with its moves, or None."""
        raise NotImplementedError

    def iter_games(self) -> Iterator[dict[str, Any]]:
        """Every stored game with its moves, oldest first."""
        raise NotImplementedError

    def count_games(self) -> int:
        """Number of stored games."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the database."""


class SQLiteStorage(Storage):
    """The embedded default: one SQLite file in WAL mode, one writer."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            parent = Path(self.path).resolve().parent
            if not parent.is_dir():
                raise FileNotFoundError(f"cannot create the database {self.path}: folder {parent} does not exist")
        try:
            self.db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=10000")
            for statement in SCHEMA:
                self.db.execute(statement)
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{self.path} is not a usable Plyhall database: {exc}") from None
        self.lock = threading.Lock()

    def load_claims(self) -> dict[str, Claim]:
        """Every claimed name."""
        with self.lock:
            rows = self.db.execute("SELECT name, salt, digest FROM players").fetchall()
        return {name: Claim(salt, digest) for name, salt, digest in rows}

    def save_claim(self, name: str, claim: Claim) -> None:
        """Store a claim (first claim of a name wins)."""
        with self.lock:
            self.db.execute(
                "INSERT INTO players (name, salt, digest, claimed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (name, claim.salt, claim.digest, time.time()),
            )

    def save_game(self, record: GameRecord) -> None:
        """Store a game and its moves in one transaction."""
        with self.lock:
            self.db.execute("BEGIN")
            try:
                self.db.execute(
                    "INSERT INTO games (id, room, game, options, time_control, player0, player1, winner, reason,"
                    " status, move_count, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.id, record.room, record.game, json.dumps(record.options),
                     json.dumps(record.time_control), record.players[0], record.players[1], record.winner,
                     record.reason, record.status, len(record.moves), record.started_at, record.ended_at),
                )
                self.db.executemany(
                    "INSERT INTO moves (game_id, seq, seat, move, think_ms, clock0, clock1)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(record.id, m.seq, m.seat, m.notation, m.think_ms, m.clocks_after[0], m.clocks_after[1])
                     for m in record.moves],
                )
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    _SUMMARY = ("SELECT id, room, game, options, time_control, player0, player1, winner, reason, status,"
                " move_count, started_at, ended_at FROM games")

    def _summary(self, row: tuple) -> dict[str, Any]:
        (gid, room, game, options, control, p0, p1, winner, reason, status, count, started, ended) = row
        players = [p0, p1]
        return {
            "id": gid, "room": room, "game": game, "options": json.loads(options),
            "time_control": json.loads(control), "players": players, "winner": winner,
            "winner_name": None if winner is None else players[winner], "reason": reason, "status": status,
            "move_count": count, "started_at": started, "ended_at": ended,
        }

    def list_games(self, limit: int = 50, offset: int = 0, game: str | None = None,
                   player: str | None = None) -> list[dict[str, Any]]:
        """Summaries, newest first, optionally for one game id or player name."""
        where, args = [], []
        if game is not None:
            where.append("game = ?")
            args.append(game)
        if player is not None:
            where.append("(player0 = ? OR player1 = ?)")
            args.extend([player, player])
        sql = self._SUMMARY + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY ended_at DESC, id LIMIT ? OFFSET ?"
        with self.lock:
            rows = self.db.execute(sql, [*args, limit, offset]).fetchall()
        return [self._summary(r) for r in rows]

    def _moves(self, game_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT seq, seat, move, think_ms, clock0, clock1 FROM moves WHERE game_id = ? ORDER BY seq",
            (game_id,),
        ).fetchall()
        return [{"seq": s, "seat": seat, "move": m, "think_ms": t, "clocks_after": [c0, c1]}
                for s, seat, m, t, c0, c1 in rows]

    def get_game(self, game_id: str) -> dict[str, Any] | None:
        """One game with its moves."""
        with self.lock:
            row = self.db.execute(self._SUMMARY + " WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                return None
            record = self._summary(row)
            record["moves"] = self._moves(game_id)
        return record

    def iter_games(self) -> Iterator[dict[str, Any]]:
        """Every game with moves, oldest first (read in pages)."""
        offset = 0
        while True:
            with self.lock:
                rows = self.db.execute(self._SUMMARY + " ORDER BY ended_at, id LIMIT 200 OFFSET ?",
                                       (offset,)).fetchall()
                page = []
                for row in rows:
                    record = self._summary(row)
                    record["moves"] = self._moves(record["id"])
                    page.append(record)
            yield from page
            if len(rows) < 200:
                return
            offset += 200

    def count_games(self) -> int:
        """Number of stored games."""
        with self.lock:
            return self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def close(self) -> None:
        """Checkpoint and close."""
        with self.lock:
            self.db.close()
