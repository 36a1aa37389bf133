"""The SQL of every storage operation, written once in a portable dialect (``INSERT ... ON CONFLICT``, no
engine-specific types), over DB-API connections: one for the writer, one per reading thread. The schema
and its migrations are in ``server.storage.schema``. ``server.storage.sqlite`` and ``server.storage.postgres`` only open
connections and say how a write transaction begins.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from protocol.messages import GameStatus

from .analysis_sql import AnalysisSQL
from .base import TABLES, Storage, StorageError
from .batch import MOVES_A_STATEMENT, Transaction, Writing, dumps, latest_snapshots
from .moves_log import MOVE_COLUMNS, MovesLog
from .rating_sql import RatingSQL
from .records import (
    AnalysisSaved,
    ClaimSaved,
    GameEnded,
    GameRecord,
    GameStarted,
    IdentityForgotten,
    IdentitySaved,
    MovePlayed,
    MoveRecord,
    Restored,
    RoomRemoved,
    RoomSaved,
    TournamentSaved,
    Write,
)
from .schema import MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger("plyhall.storage")

_SUMMARY = ("SELECT id, room, game, options, time_control, player0, player1, winner, reason, status,"
            " CASE WHEN status = 'running' THEN (SELECT COUNT(*) FROM moves WHERE moves.game_id = games.id)"
            # the moves log's (a few thousand rows without an index: read only for a running game); not through the
            # all_moves view, which SQLite would read whole for each game rather than by its game_id
            " + (SELECT COUNT(DISTINCT l.seq) FROM live_moves l WHERE l.game_id = games.id AND NOT EXISTS"
            " (SELECT 1 FROM moves m WHERE m.game_id = l.game_id AND m.seq = l.seq))"
            " ELSE move_count END, started_at, ended_at, tournament, tournament_game, rated, unrated, rating_weight,"
            " EXISTS (SELECT 1 FROM analyses WHERE analyses.game_id = games.id) FROM games")

_READ_FROM = {"moves": "all_moves"}  # what a copy reads of a table: the moves wherever they are


def _summary(row: Sequence[Any]) -> dict[str, Any]:
    (gid, room, game, options, control, p0, p1, winner, reason, status, count, started, ended, tournament,
     number, rated, unrated, weight, analysed) = row
    players = [p0, p1]
    return {
        "id": gid, "room": room, "game": game, "options": json.loads(options),
        "time_control": json.loads(control), "players": players, "winner": winner,
        "winner_name": None if winner is None else players[winner], "reason": reason, "status": status,
        "move_count": count, "started_at": started, "ended_at": ended, "tournament": tournament,
        "tournament_game": number, "rated": bool(rated), "unrated": unrated, "rating_weight": weight,
        "analysed": bool(analysed),
    }


class SQLStorage(MovesLog, RatingSQL, AnalysisSQL, Storage):
    """The SQL of every operation, over DB-API connections: one for the writer, one per reading thread.

    Statements use ``?`` placeholders; a subclass whose driver wants another style sets
    ``placeholder``. Subclasses open connections (:meth:`_connect`) and say how a write
    transaction begins.
    """

    placeholder = "?"
    begin = "BEGIN"

    def __init__(self, node: str = "main") -> None:
        self.node = node
        self._local = threading.local()
        self._writer = self._connect_writer()
        self._write_lock = threading.Lock()
        self._writing_now = Writing(self)  # no state of its own: one serves every commit
        self._cursor: tuple[Any, Any] | None = None  # (the writer connection, its cursor), made once a connection
        self._readers: list[Any] = []
        self._readers_lock = threading.Lock()
        self._moves_sql: dict[int, str] = {}  # rows -> the statement that inserts that many moves (negative: the log)
        self._start_log()
        self._migrate()

    # Connections -------------------------------------------------------------------------

    def _connect(self) -> Any:
        raise NotImplementedError

    def _connect_writer(self) -> Any:
        """The connection that commits every write (:meth:`_connect`'s, unless a subclass sets it up further)."""
        return self._connect()

    def _sql(self, statement: str) -> str:
        return statement if self.placeholder == "?" else statement.replace("?", self.placeholder)

    def _reader(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def _read(self, statement: str, args: Sequence[Any] = ()) -> list[tuple]:
        try:
            return self._reader().execute(self._sql(statement), tuple(args)).fetchall()
        except self.lost_connection:
            self._drop_reader()  # a database server restarted: one more try on a fresh connection
            return self._reader().execute(self._sql(statement), tuple(args)).fetchall()

    snapshot_begin = "BEGIN"
    """How a read transaction begins: one consistent view of the database for several reads (SQLite's WAL gives
    each transaction its snapshot; PostgreSQL says REPEATABLE READ)."""

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Reads made inside see one consistent view, whatever the server writes meanwhile."""
        conn = self._reader()
        conn.execute(self.snapshot_begin)
        try:
            yield
        finally:
            conn.execute("COMMIT")

    lost_connection: tuple[type[BaseException], ...] = ()
    """Driver errors that mean the connection is gone (it is opened again)."""

    def _drop_reader(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with self._readers_lock:
                if conn in self._readers:
                    self._readers.remove(conn)
            try:
                conn.close()
            except Exception:  # already broken: closing is best effort
                pass

    def _migrate(self) -> None:
        with self._write_lock, self._transaction() as cur:
            version = self._version(cur)
            if version > SCHEMA_VERSION:
                raise StorageError(f"the database is at schema version {version}, newer than this Plyhall "
                                   f"(version {SCHEMA_VERSION}); upgrade Plyhall to use it")
            for step in MIGRATIONS[version:]:
                for statement in step:
                    cur.execute(statement)
            if version < SCHEMA_VERSION:
                cur.execute("DELETE FROM schema_version")
                cur.execute(self._sql("INSERT INTO schema_version (version) VALUES (?)"), (SCHEMA_VERSION,))
            cur.execute("SELECT 1 FROM live_moves LIMIT 1")
            if cur.fetchone() is not None:  # a server that stopped without settling them (killed), or a copy
                self._settle(cur)

    def _version(self, cur: Any) -> int:
        cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        cur.execute("SELECT MAX(version) FROM schema_version")
        row = cur.fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # Writes ------------------------------------------------------------------------------

    def apply(self, writes: Sequence[Write]) -> None:
        """Commit ``writes`` in one transaction (its moves in as few statements as :meth:`_insert_moves` makes)."""
        with self._writing():
            self._apply(writes)

    def _writing(self) -> Writing:
        """Hold the writer connection (opened again when it was lost with its database server; raises while
        that is down); a connection that breaks inside is dropped, for the next call to open anew."""
        return self._writing_now

    def _fence(self, cur: Any) -> None:
        """Refuse the transaction of ``cur`` (raise :class:`~server.storage.base.Deposed`) unless this server still
        owns its rooms. Nothing to check where no other server writes (SQLite)."""

    def _apply(self, writes: Sequence[Write]) -> None:
        """One transaction: the moves in one batch, the other writes in order, but for a room's snapshot that a
        later one of the same room replaces (it would be overwritten in the same transaction). No other write
        reads the moves table, so the moves going in first leaves the committed rows the same."""
        moves: list[Any] = []  # the moves' columns one after the other, 7 a move
        others: list[Write] = []
        add = moves.extend
        logging = self.moves_logged
        logged_keys = self._logged_keys
        keys: list[tuple[str, int]] = []  # the moves this commit logs, taken back if it fails
        for write in writes:
            if type(write) is MovePlayed:
                m = write.move
                if logging:
                    key = (write.game_id, m.seq)
                    if key in logged_keys:  # in the log already: a move stored stays as it is, as in the table
                        continue
                    logged_keys.add(key)
                    keys.append(key)
                clocks = m.clocks_after
                add((write.game_id, m.seq, m.seat, m.notation, m.think_ms, clocks[0], clocks[1]))
            else:
                others.append(write)
        if not logging:
            with self._transaction() as cur:
                self._fence(cur)  # every write of a room, its games, moves, tournaments and ratings: by its owner only
                if moves:
                    self._insert_moves(cur, moves, "moves")
                for write in latest_snapshots(others):
                    self._write(cur, write)
        else:
            self._apply_logged(moves, keys, others)

    def _transaction(self) -> Transaction:
        """A cursor of the writer inside one transaction: committed at the end, rolled back on any error.
        The caller holds ``_write_lock``."""
        made = self._cursor
        if made is None or made[0] is not self._writer:  # the first transaction on this connection
            made = self._cursor = (self._writer, self._writer.cursor())
        return Transaction(made[1], self.begin)

    def _insert_moves(self, cur: Any, columns: list[Any], table: str) -> None:
        """Insert the moves whose ``columns`` follow one another, 7 a move, into ``table`` (``moves``, where a move
        already stored stays as it is, or the log, ``live_moves``), in order: many rows a statement, each a power of
        two (at most ``MOVES_A_STATEMENT``), so that a few prepared statements serve every batch."""
        done, count = 0, len(columns) // 7
        made = self._moves_sql
        logged = table == "live_moves"
        while done < count:
            size = min(MOVES_A_STATEMENT, 1 << ((count - done).bit_length() - 1))
            statement = made.get(-size if logged else size)
            if statement is None:
                statement = made[-size if logged else size] = self._sql(
                    f"INSERT INTO {table} ({MOVE_COLUMNS}) VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * size)
                    + ("" if logged else " ON CONFLICT (game_id, seq) DO NOTHING"))
            if size == 1:  # executemany of one row costs the sqlite3 module less than execute
                cur.executemany(statement, (columns[7 * done:7 * done + 7],))
            else:
                cur.execute(statement, columns[7 * done:7 * (done + size)])
            done += size

    def _write(self, cur: Any, write: Write) -> None:
        sql = self._sql
        now = time.time()
        if isinstance(write, RoomSaved):
            cur.execute(sql("INSERT INTO rooms (node, name, snapshot, updated_at) VALUES (?, ?, ?, ?)"
                            " ON CONFLICT (node, name) DO UPDATE SET snapshot = excluded.snapshot,"
                            " updated_at = excluded.updated_at"),
                        (self.node, write.snapshot["name"], dumps(write.snapshot), now))
        elif isinstance(write, RoomRemoved):
            cur.execute(sql("DELETE FROM rooms WHERE node = ? AND name = ?"), (self.node, write.name))
        elif isinstance(write, GameStarted):
            self._upsert_game(cur, write.record, len(write.record.moves))
        elif isinstance(write, GameEnded):
            self._end_game(cur, write.record)
            self._rate(cur, write.record)  # a rated result: the ratings change in the same transaction
        elif isinstance(write, ClaimSaved):
            cur.execute(sql("INSERT INTO players (name, salt, digest, claimed_at, claimed_from) VALUES"
                            " (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING"),
                        (write.name, write.salt, write.digest, now, write.address))
        elif isinstance(write, IdentitySaved):
            cur.execute(sql("INSERT INTO identities (name, digest, issued_at) VALUES (?, ?, ?) ON CONFLICT (name)"
                            " DO UPDATE SET digest = excluded.digest, issued_at = excluded.issued_at"),
                        (write.name, write.digest, now))
        elif isinstance(write, IdentityForgotten):
            cur.execute(sql("DELETE FROM identities WHERE name = ?"), (write.name,))
        elif isinstance(write, TournamentSaved):
            snap = write.snapshot
            cur.execute(sql("INSERT INTO tournaments (id, node, name, status, snapshot, created_at)"
                            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
                            " snapshot = excluded.snapshot"),
                        (snap["id"], self.node, snap["name"], snap["status"], dumps(snap),
                         snap.get("created_at", now)))
        elif isinstance(write, AnalysisSaved):
            self._save_analysis(cur, write)
        else:  # pragma: no cover - every Write type is handled above
            raise TypeError(f"unknown write {write!r}")

    def _upsert_game(self, cur: Any, r: GameRecord, move_count: int) -> None:
        cur.execute(self._sql(
            "INSERT INTO games (id, room, game, options, time_control, player0, player1, winner, reason, status,"
            " move_count, started_at, ended_at, tournament, tournament_game, rated, unrated, rating_weight)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET winner = excluded.winner, reason = excluded.reason,"
            " status = excluded.status, move_count = excluded.move_count, ended_at = excluded.ended_at,"
            " rated = excluded.rated, unrated = excluded.unrated, rating_weight = excluded.rating_weight"),
            (r.id, r.room, r.game, dumps(r.options), dumps(r.time_control), r.players[0], r.players[1],
             r.winner, r.reason, r.status, move_count, r.started_at, r.ended_at, r.tournament, r.tournament_game,
             int(r.rated), r.unrated, r.rating_weight))

    def _end_game(self, cur: Any, r: GameRecord) -> None:
        """A game's final header: the columns an end changes, on the row its start stored (the whole row, as
        :meth:`_upsert_game` writes it, when there is none: a game stored only once it ended)."""
        cur.execute(self._sql(
            "UPDATE games SET winner = ?, reason = ?, status = ?, move_count = ?, ended_at = ?, rated = ?,"
            " unrated = ?, rating_weight = ? WHERE id = ?"),
            (r.winner, r.reason, r.status, len(r.moves), r.ended_at, int(r.rated), r.unrated, r.rating_weight, r.id))
        if cur.rowcount != 1:
            self._upsert_game(cur, r, len(r.moves))

    def save_game(self, record: GameRecord) -> None:
        """Store a whole game with its moves."""
        self.apply([GameEnded(record), *(MovePlayed(record.id, move) for move in record.moves)])

    # Reads -------------------------------------------------------------------------------

    def load(self, node: str | None = None) -> Restored:
        """Claims, identities, open rooms with their running games, and tournaments (this server's, or those
        of ``node``: the rooms a cluster node adopts from a node that died)."""
        node = self.node if node is None else node
        restored = Restored()
        restored.claims = {name: (salt, digest) for name, salt, digest in
                           self._read("SELECT name, salt, digest FROM players")}
        restored.claimed_from, restored.registered = self.rated_names()
        restored.identities = dict(self._read("SELECT name, digest FROM identities"))
        restored.rooms = [json.loads(snapshot) for (snapshot,) in
                          self._read("SELECT snapshot FROM rooms WHERE node = ? ORDER BY updated_at", (node,))]
        wanted = {room.get("record") for room in restored.rooms} - {None}
        for row in self._read(_SUMMARY + " WHERE status = 'running'"):
            if row[0] not in wanted:
                continue  # another server's game
            summary = _summary(row)
            moves = [MoveRecord(mv["seq"], mv["seat"], mv["move"], mv["think_ms"], mv["clocks_after"])
                     for mv in self._moves(summary["id"])]
            restored.running[summary["id"]] = GameRecord(
                summary["id"], summary["room"], summary["game"], summary["options"], summary["time_control"],
                summary["players"], moves, None, "", GameStatus.RUNNING, summary["started_at"], None,
                summary["tournament"], summary["tournament_game"], summary["rated"])
        restored.tournaments = [json.loads(snapshot) for (snapshot,) in
                                self._read("SELECT snapshot FROM tournaments WHERE node = ? ORDER BY created_at",
                                           (node,))]
        for snap in restored.tournaments:
            restored.tournament_games[snap["id"]] = self.list_games(10**9, 0, tournament=snap["id"], status="all")
        return restored

    def list_games(self, limit: int = 50, offset: int = 0, game: str | None = None, player: str | None = None,
                   status: str | None = None, tournament: str | None = None) -> list[dict[str, Any]]:
        """Summaries, newest first: ended games, or ``status`` ``running``/``all``/an end status."""
        where, args = [], []
        if game is not None:
            where.append("game = ?")
            args.append(game)
        if player is not None:
            where.append("(player0 = ? OR player1 = ?)")
            args.extend([player, player])
        if tournament is not None:
            where.append("tournament = ?")
            args.append(tournament)
        if status is None:
            where.append("status <> 'running'")
        elif status != "all":
            where.append("status = ?")
            args.append(status)
        sql = _SUMMARY + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY started_at DESC, id LIMIT ? OFFSET ?"
        return [_summary(r) for r in self._read(sql, [*args, limit, offset])]

    def _moves(self, game_id: str) -> list[dict[str, Any]]:
        # the table's moves and the log's (its row number n >= 1): of two with one number, the table's, else the one
        # logged first (as the log's settling keeps)
        rows = self._read("SELECT seq, seat, move, think_ms, clock0, clock1, 0 FROM moves WHERE game_id = ? UNION ALL"
                          " SELECT seq, seat, move, think_ms, clock0, clock1, n FROM live_moves WHERE game_id = ?"
                          " ORDER BY 1, 7", (game_id, game_id))
        moves, last = [], None
        for s, seat, mv, t, c0, c1, _ in rows:
            if s != last:
                moves.append({"seq": s, "seat": seat, "move": mv, "think_ms": t, "clocks_after": [c0, c1]})
                last = s
        return moves

    def get_game(self, game_id: str) -> dict[str, Any] | None:
        """One game with its moves (a running game's moves so far)."""
        rows = self._read(_SUMMARY + " WHERE id = ?", (game_id,))
        if not rows:
            return None
        record = _summary(rows[0])
        record["moves"] = self._moves(game_id)
        return record

    def iter_games(self, tournament: str | None = None, game: str | None = None) -> Iterator[dict[str, Any]]:
        """Every ended game with moves, oldest first (read in pages)."""
        where, args = ["status <> 'running'"], []
        if tournament is not None:
            where.append("tournament = ?")
            args.append(tournament)
        if game is not None:
            where.append("game = ?")
            args.append(game)
        sql = _SUMMARY + " WHERE " + " AND ".join(where) + " ORDER BY started_at, id LIMIT 200 OFFSET ?"
        offset = 0
        while True:
            rows = self._read(sql, [*args, offset])
            for row in rows:
                record = _summary(row)
                record["moves"] = self._moves(record["id"])
                yield record
            if len(rows) < 200:
                return
            offset += 200

    def count_games(self) -> int:
        """Number of ended games."""
        return self._read("SELECT COUNT(*) FROM games WHERE status <> 'running'")[0][0]

    def get_claim(self, name: str) -> tuple[str, str] | None:
        """The stored claim of ``name``, or None."""
        rows = self._read("SELECT salt, digest FROM players WHERE name = ?", (name,))
        return (rows[0][0], rows[0][1]) if rows else None

    def list_tournaments(self) -> list[dict[str, Any]]:
        """Every tournament's stored snapshot (all servers), oldest first, each with ``games_done``: its games
        with a result."""
        done = dict(self._read("SELECT tournament, COUNT(*) FROM games WHERE tournament IS NOT NULL AND status IN"
                               " ('finished', 'forfeit') GROUP BY tournament"))
        snapshots = [json.loads(snapshot) for (snapshot,) in
                     self._read("SELECT snapshot FROM tournaments ORDER BY created_at")]
        return [{**snap, "games_done": done.get(snap["id"], 0)} for snap in snapshots]

    def tournament(self, tournament_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """A tournament's snapshot and its games' summaries, or None."""
        rows = self._read("SELECT snapshot FROM tournaments WHERE id = ?", (tournament_id,))
        if not rows:
            return None
        return json.loads(rows[0][0]), self.list_games(10**9, 0, tournament=tournament_id, status="all")

    def counts(self) -> dict[str, int]:
        """Rows per table (what ``plyhall db copy`` checks)."""
        return {table: self._read(f"SELECT COUNT(*) FROM {_READ_FROM.get(table, table)}")[0][0] for table in TABLES}

    def rows(self, table: str) -> Iterator[tuple]:
        """Every row of a table, in pages (for copying a database)."""
        assert table in TABLES
        offset = 0
        while True:
            second = f", {TABLES[table][1]}" if table in ("moves", "rooms", "ratings") else ""  # the primary key
            page = self._read(f"SELECT {', '.join(TABLES[table])} FROM {_READ_FROM.get(table, table)}"
                              f" ORDER BY {TABLES[table][0]}{second}"
                              " LIMIT 1000 OFFSET ?", (offset,))
            yield from page
            if len(page) < 1000:
                return
            offset += 1000

    def insert_rows(self, table: str, rows: list[tuple]) -> None:
        """Insert rows copied from another database (existing rows are kept)."""
        assert table in TABLES
        columns = TABLES[table]
        with self._writing(), self._transaction() as cur:
            cur.executemany(self._sql(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                                      f"({', '.join('?' for _ in columns)}) ON CONFLICT DO NOTHING"), rows)

    def wipe(self) -> None:
        """Delete every row (for benchmarks that reuse a database)."""
        with self._write_lock, self._transaction() as cur:
            for table in (*TABLES, "live_moves"):
                cur.execute(f"DELETE FROM {table}")
            self._settled(self.clock())

    def close(self) -> None:
        """Move the moves log into the moves table, and close every connection."""
        self._settle_before_closing()
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except Exception:  # a reader owned by another thread: closing it is best effort
                    pass
            self._readers.clear()
