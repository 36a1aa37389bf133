"""The schema of the SQL storage and its migrations: ``MIGRATIONS[v]`` takes a database from version ``v`` to
``v + 1`` (``server.storage.sql`` runs them when it opens a database). Portable SQL only."""

from __future__ import annotations

from .analysis_sql import ANALYSIS_TABLES
from .rating_sql import RATED_PLAY_COLUMNS, RATING_TABLES

SCHEMA_VERSION = 6
"""The schema this code reads and writes. A database at a newer version is refused."""


def games_table(name: str, version: int) -> str:
    """The games table as version ``version`` has it: version 2 keeps running games (no end yet)
    and the tournament a game belongs to."""
    ended = "ended_at DOUBLE PRECISION NOT NULL"
    if version >= 2:
        ended = "ended_at DOUBLE PRECISION,\n        tournament VARCHAR(64),\n        tournament_game INTEGER"
    return f"""CREATE TABLE IF NOT EXISTS {name} (
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
        {ended})"""


MOVE_FIELDS = """game_id VARCHAR(32) NOT NULL,
        seq INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        move VARCHAR(64) NOT NULL,
        think_ms INTEGER NOT NULL,
        clock0 DOUBLE PRECISION,
        clock1 DOUBLE PRECISION"""
"""A move's columns, in the moves table and in the moves log."""

MOVES_LOG = [
    f"""CREATE TABLE live_moves (
        n INTEGER PRIMARY KEY,
        {MOVE_FIELDS})""",
    # every stored move: the moves table, and the log's moves that are not in it yet
    """CREATE VIEW all_moves AS
        SELECT game_id, seq, seat, move, think_ms, clock0, clock1 FROM moves
        UNION ALL
        SELECT game_id, seq, seat, move, think_ms, clock0, clock1 FROM live_moves l
        WHERE NOT EXISTS (SELECT 1 FROM moves m WHERE m.game_id = l.game_id AND m.seq = l.seq)""",
]
"""Schema version 6: the moves log. A SQLite server appends each commit's moves to ``live_moves``, a table in the
order they came (``n``, SQLite's row id), and moves them into ``moves`` once a second, sorted by game: ``moves``' index
is ordered by game, and the moves of 5,000 games at once landed each on a page of its own, so that every commit
wrote (and checkpointed) about a page a move. ``all_moves`` is what a reader sees: every move, wherever it is. On
PostgreSQL ``n`` is a plain integer key: nothing appends there but a copy of a SQLite file, with its numbers."""


# MIGRATIONS[v] takes a database from version v to v + 1. Version 0 is an empty database or one
# made before versions were recorded (players, games and moves as they were then).
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE IF NOT EXISTS players (
            name VARCHAR(32) PRIMARY KEY,
            salt VARCHAR(64) NOT NULL,
            digest VARCHAR(128) NOT NULL,
            claimed_at DOUBLE PRECISION NOT NULL)""",
        games_table("games", 1),
        "CREATE INDEX IF NOT EXISTS games_ended ON games (ended_at)",
        f"""CREATE TABLE IF NOT EXISTS moves (
            {MOVE_FIELDS},
            PRIMARY KEY (game_id, seq))""",
    ],
    [
        # running games are stored as they happen: ended_at stays null until they end
        "ALTER TABLE games RENAME TO games_v1",
        games_table("games", 2),
        "INSERT INTO games SELECT id, room, game, options, time_control, player0, player1, winner, reason, status,"
        " move_count, started_at, ended_at, NULL, NULL FROM games_v1",
        "DROP TABLE games_v1",
        "CREATE INDEX games_ended ON games (ended_at)",
        "CREATE INDEX games_status ON games (status)",
        "CREATE INDEX games_tournament ON games (tournament)",
        # rooms and tournaments belong to the server (node) that runs them; records and names are shared
        """CREATE TABLE rooms (
            node VARCHAR(64) NOT NULL,
            name VARCHAR(64) NOT NULL,
            snapshot TEXT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (node, name))""",
        """CREATE TABLE identities (
            name VARCHAR(32) PRIMARY KEY,
            digest VARCHAR(128) NOT NULL,
            issued_at DOUBLE PRECISION NOT NULL)""",
        """CREATE TABLE tournaments (
            id VARCHAR(64) PRIMARY KEY,
            node VARCHAR(64) NOT NULL,
            name VARCHAR(64) NOT NULL,
            status VARCHAR(16) NOT NULL,
            snapshot TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL)""",
    ],
    [
        # rated games, and the ratings they make (server/storage/rating_sql.py)
        "ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 0",
        *RATING_TABLES,
    ],
    ANALYSIS_TABLES,  # the analyses of games (server/storage/analysis_sql.py)
    RATED_PLAY_COLUMNS,  # why a game is not rated; where a claim came from; registered names (rating_sql.py)
    MOVES_LOG,  # the moves of the last second, appended, before they join the moves table (server/storage/sql.py)
]
assert len(MIGRATIONS) == SCHEMA_VERSION
