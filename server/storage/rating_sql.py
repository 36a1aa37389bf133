"""The SQL of ratings: the update a rated result makes in its own transaction, the leaderboard and player reads,
and the check that the stored ratings are what the stored results give (``plyhall ratings --recompute``).

Two tables. ``rating_events`` lists every rated result in the order it was stored (``seq``), with the weight
fair play gave it and both players' ratings after it (their history); ``ratings`` holds each player's current
standing per game type. Both are written in the transaction that stores the game's result (the ``GameEnded``
write), so after a crash at any moment they agree with the stored results; both are a deterministic function
of those results taken in ``seq`` order (:func:`protocol.ratings.replay`), which :meth:`RatingSQL.check_ratings`
recomputes and compares, to the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol.glicko2 import Rating
from protocol.messages import GameStatus
from protocol.ratings import (
    PAIR_WINDOW,
    PROVISIONAL_DEVIATION,
    RATED_PLIES,
    RATED_PLIES_DEFAULT,
    RatedGame,
    RatingChange,
    Standing,
    anchor_level,
    rate,
    replay,
)

from .records import GameRecord

RATING_TABLES = [
    """CREATE TABLE ratings (
        game VARCHAR(32) NOT NULL,
        name VARCHAR(32) NOT NULL,
        rating DOUBLE PRECISION NOT NULL,
        deviation DOUBLE PRECISION NOT NULL,
        volatility DOUBLE PRECISION NOT NULL,
        games INTEGER NOT NULL,
        wins INTEGER NOT NULL,
        draws INTEGER NOT NULL,
        losses INTEGER NOT NULL,
        last_played DOUBLE PRECISION,
        PRIMARY KEY (game, name))""",
    """CREATE TABLE rating_events (
        seq INTEGER PRIMARY KEY,
        game_id VARCHAR(32) NOT NULL UNIQUE,
        game VARCHAR(32) NOT NULL,
        player0 VARCHAR(32) NOT NULL,
        player1 VARCHAR(32) NOT NULL,
        winner INTEGER,
        played_at DOUBLE PRECISION NOT NULL,
        weight DOUBLE PRECISION NOT NULL,
        rating0 DOUBLE PRECISION NOT NULL,
        deviation0 DOUBLE PRECISION NOT NULL,
        volatility0 DOUBLE PRECISION NOT NULL,
        change0 DOUBLE PRECISION NOT NULL,
        rating1 DOUBLE PRECISION NOT NULL,
        deviation1 DOUBLE PRECISION NOT NULL,
        volatility1 DOUBLE PRECISION NOT NULL,
        change1 DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX rating_events_pair ON rating_events (game, player0, player1, played_at)",
    "CREATE INDEX rating_events_player0 ON rating_events (player0, seq)",
    "CREATE INDEX rating_events_player1 ON rating_events (player1, seq)",
    "CREATE INDEX ratings_board ON ratings (game, rating)",
]
"""The tables of ratings (schema version 3)."""

RATED_PLAY_COLUMNS = [
    "ALTER TABLE games ADD COLUMN unrated TEXT",
    "ALTER TABLE players ADD COLUMN claimed_from VARCHAR(64)",
    "ALTER TABLE players ADD COLUMN registered INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE games ADD COLUMN rating_weight DOUBLE PRECISION NOT NULL DEFAULT 1",
]
"""Schema version 5: why an ended game is not rated, the address a name was claimed from, the names the
organiser registered, and the weight a rated game was capped at (``server.core.rated``; ``plyhall names``)."""
UNRATED_LIMIT = 50
"""The most recent unrated games of a rated room ``unrated_games`` returns."""

_STANDING = "SELECT rating, deviation, volatility, games, wins, draws, losses, last_played FROM ratings"
_EVENT = ("SELECT seq, game_id, game, player0, player1, winner, played_at, weight, rating0, deviation0, volatility0,"
          " change0, rating1, deviation1, volatility1, change1 FROM rating_events")
HISTORY_LIMIT = 1000
"""The most rated games of one player's history ``player`` returns per game type (its latest)."""


def _standing(row: Sequence[Any]) -> Standing:
    rating, deviation, volatility, games, wins, draws, losses, last = row
    return Standing(Rating(rating, deviation, volatility), games, wins, draws, losses, last)


def _event_json(row: Sequence[Any], name: str) -> dict[str, Any]:
    """One rated game of ``name``'s history."""
    (seq, game_id, game, p0, p1, winner, played_at, weight, r0, d0, _v0, c0, r1, d1, _v1, c1) = row
    seat = 0 if p0 == name else 1
    score = 0.5 if winner is None else 1.0 if winner == seat else 0.0
    return {"seq": seq, "id": game_id, "game": game, "opponent": p1 if seat == 0 else p0, "seat": seat,
            "score": score, "weight": weight, "played_at": played_at,
            "rating": round(r0 if seat == 0 else r1, 1), "deviation": round(d0 if seat == 0 else d1, 1),
            "change": round(c0 if seat == 0 else c1, 1)}


def rating_json(players: tuple[str, str], change: RatingChange) -> list[dict[str, Any]]:
    """Each seat's rating after a rated game, as ``game_over.ratings`` shows it."""
    return [{"name": name, "rating": round(float(standing.rating.rating), 1),  # (an anchor's pinned one is an int)
             "deviation": round(float(standing.rating.deviation), 1), "change": round(float(delta), 1),
             "provisional": standing.rating.deviation > PROVISIONAL_DEVIATION}
            for name, standing, delta in zip(players, change.after, change.change, strict=True)]


class RatingSQL:
    """Ratings, for :class:`server.storage.sql.SQLStorage` (which provides ``_sql`` and ``_read``)."""

    _sql: Any
    _read: Any
    _snapshot: Any
    _write_lock: Any
    _transaction: Any

    def _lock_ratings(self, cur: Any) -> None:
        """Serialise rating updates among the servers sharing a database (nothing to do for one writer)."""

    def _rate(self, cur: Any, record: GameRecord) -> None:
        """Rate a stored rated result: both players' standings and the event, in the caller's transaction (once per
        game: storing the same result again changes nothing)."""
        if not record.rated or record.status != GameStatus.FINISHED or record.ended_at is None:
            return
        sql = self._sql
        self._lock_ratings(cur)
        cur.execute(sql("SELECT seq FROM rating_events WHERE game_id = ?"), (record.id,))
        if cur.fetchone() is not None:
            return
        p0, p1 = record.players
        priors = []
        for name in (p0, p1):
            cur.execute(sql(_STANDING + " WHERE game = ? AND name = ?"), (record.game, name))
            row = cur.fetchone()
            priors.append(None if row is None else _standing(row))
        cur.execute(sql("SELECT COUNT(*) FROM rating_events WHERE game = ? AND ((player0 = ? AND player1 = ?) OR"
                        " (player0 = ? AND player1 = ?)) AND played_at > ?"),
                    (record.game, p0, p1, p1, p0, record.ended_at - PAIR_WINDOW))
        earlier = int(cur.fetchone()[0])
        game = RatedGame(record.id, record.game, (p0, p1), record.winner, record.ended_at, record.rating_weight)
        change = rate(game, (priors[0], priors[1]), earlier)
        cur.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM rating_events")
        seq = int(cur.fetchone()[0])
        self._insert_event(cur, seq, game, change)
        record.ratings = rating_json((p0, p1), change)
        for name, standing in zip((p0, p1), change.after, strict=True):
            r = standing.rating
            cur.execute(sql(
                "INSERT INTO ratings (game, name, rating, deviation, volatility, games, wins, draws, losses,"
                " last_played) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (game, name) DO UPDATE SET"
                " rating = excluded.rating, deviation = excluded.deviation, volatility = excluded.volatility,"
                " games = excluded.games, wins = excluded.wins, draws = excluded.draws, losses = excluded.losses,"
                " last_played = excluded.last_played"),
                (record.game, name, r.rating, r.deviation, r.volatility, standing.games, standing.wins,
                 standing.draws, standing.losses, standing.last_played))

    def _insert_event(self, cur: Any, seq: int, game: RatedGame, change: RatingChange) -> None:
        a, b = change.after
        cur.execute(self._sql(
            "INSERT INTO rating_events (seq, game_id, game, player0, player1, winner, played_at, weight, rating0,"
            " deviation0, volatility0, change0, rating1, deviation1, volatility1, change1)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            (seq, game.game_id, game.game, game.players[0], game.players[1], game.winner, game.played_at,
             change.weight, a.rating.rating, a.rating.deviation, a.rating.volatility, change.change[0],
             b.rating.rating, b.rating.deviation, b.rating.volatility, change.change[1]))

    # Names -------------------------------------------------------------------------------

    def register_name(self, name: str, salt: str, digest: str, now: float) -> bool:
        """Store ``name`` as registered by the organiser, with the claim of its token; False when the name is claimed
        already (registered or not: a claim is never taken from its owner)."""
        with self._write_lock, self._transaction() as cur:
            cur.execute(self._sql("INSERT INTO players (name, salt, digest, claimed_at, registered) VALUES"
                                  " (?, ?, ?, ?, 1) ON CONFLICT (name) DO NOTHING"), (name, salt, digest, now))
            return bool(cur.rowcount)

    def name_claim(self, name: str) -> tuple[str, str, bool] | None:
        """The stored claim of ``name`` (salt, digest) and whether the organiser registered it, or None."""
        rows = self._read("SELECT salt, digest, registered FROM players WHERE name = ?", (name,))
        return (rows[0][0], rows[0][1], bool(rows[0][2])) if rows else None

    def rated_names(self) -> tuple[dict[str, str], list[str]]:
        """Where each claim came from (name -> address, for claims that recorded one) and the registered names."""
        rows = self._read("SELECT name, claimed_from, registered FROM players WHERE claimed_from IS NOT NULL OR"
                          " registered = 1 ORDER BY name")
        return {n: a for n, a, _ in rows if a is not None}, [n for n, _, registered in rows if registered]

    def unrated_games(self, game: str, limit: int = UNRATED_LIMIT) -> list[dict[str, Any]]:
        """The latest games of ``game`` that a rated room played but that were not rated, with why (newest first)."""
        rows = self._read("SELECT id, player0, player1, winner, move_count, ended_at, unrated FROM games WHERE game = ?"
                          " AND unrated IS NOT NULL AND unrated <> 'an unrated room' ORDER BY ended_at DESC LIMIT ?",
                          (game, limit))
        return [{"id": gid, "players": [p0, p1], "winner": winner, "move_count": count, "ended_at": ended,
                 "unrated": why} for gid, p0, p1, winner, count, ended, why in rows]

    # Reads -------------------------------------------------------------------------------

    def rated_games(self) -> list[str]:
        """The game types that have ratings, sorted."""
        return [game for (game,) in self._read("SELECT DISTINCT game FROM ratings ORDER BY game")]

    def leaderboard(self, game: str) -> list[tuple[str, Standing, bool]]:
        """Every rated player of ``game``: (name, standing, is an anchor), highest rating first."""
        rows = self._read("SELECT name, rating, deviation, volatility, games, wins, draws, losses, last_played FROM"
                          " ratings WHERE game = ? ORDER BY rating DESC, name", (game,))
        return [(row[0], _standing(row[1:]), anchor_level(row[0], game) is not None) for row in rows]

    def player_ratings(self, name: str) -> dict[str, tuple[Standing, list[dict[str, Any]]]]:
        """``name``'s standing in each game type it is rated in, with its rated games (oldest first, the latest
        ``HISTORY_LIMIT``)."""
        found = {}
        for row in self._read("SELECT game, rating, deviation, volatility, games, wins, draws, losses, last_played"
                              " FROM ratings WHERE name = ? ORDER BY game", (name,)):
            history = self._read(_EVENT + " WHERE game = ? AND (player0 = ? OR player1 = ?) ORDER BY seq DESC"
                                 " LIMIT ?", (row[0], name, name, HISTORY_LIMIT))
            found[row[0]] = (_standing(row[1:]), [_event_json(event, name) for event in reversed(history)])
        return found

    def rated_results(self) -> list[RatedGame]:
        """Every rated result, from the games' own records, in the order they were rated."""
        rows = self._read("SELECT g.id, g.game, g.player0, g.player1, g.winner, g.ended_at, g.rating_weight FROM"
                          " rating_events e JOIN games g ON g.id = e.game_id ORDER BY e.seq")
        return [RatedGame(gid, game, (p0, p1), winner, ended, cap) for gid, game, p0, p1, winner, ended, cap in rows]

    def check_ratings(self) -> tuple[int, list[str]]:
        """Recompute every rating from the stored rated results and compare with what is stored: the number of
        rated results, and every disagreement (none for a consistent database). Its reads share one snapshot, so
        a running server storing results meanwhile changes nothing."""
        with self._snapshot():
            return self._check_ratings()

    def _check_ratings(self) -> tuple[int, list[str]]:
        problems = []
        missing = self._read("SELECT id FROM games WHERE rated = 1 AND status = 'finished' AND id NOT IN"
                             " (SELECT game_id FROM rating_events)")
        problems += [f"rated game {gid} has no rating event" for (gid,) in missing]
        strays = self._read("SELECT e.game_id FROM rating_events e LEFT JOIN games g ON g.id = e.game_id WHERE"
                            " g.id IS NULL OR g.rated <> 1 OR g.status <> 'finished'")
        problems += [f"rating event of {gid} has no rated finished game" for (gid,) in strays]
        short = self._read("SELECT id, game, move_count FROM games WHERE rated = 1 AND status = 'finished'")
        problems += [f"rated game {gid} ended after {count} moves: a {game} game is rated from move "
                     f"{RATED_PLIES.get(game, RATED_PLIES_DEFAULT)} on (rated by an older Plyhall?)"
                     for gid, game, count in short if count < RATED_PLIES.get(game, RATED_PLIES_DEFAULT)]
        results = self.rated_results()
        standings, changes = replay(results)
        events = self._read(_EVENT + " ORDER BY seq")
        for result, change, event in zip(results, changes, events, strict=False):
            stored = (event[3], event[4], event[5], event[6], event[7], *event[8:])
            after = [(s.rating.rating, s.rating.deviation, s.rating.volatility, c)
                     for s, c in zip(change.after, change.change, strict=True)]
            expected = (*result.players, result.winner, result.played_at, change.weight, *after[0], *after[1])
            if stored != expected:
                problems.append(f"rating event {event[0]} (game {event[1]}) differs from its recomputation")
        stored_standings = {(row[0], row[1]): _standing(row[2:]) for row in self._read(
            "SELECT game, name, rating, deviation, volatility, games, wins, draws, losses, last_played FROM ratings")}
        for key in sorted(set(stored_standings) | set(standings)):
            if stored_standings.get(key) != standings.get(key):
                problems.append(f"the rating of {key[1]} in {key[0]} differs from its recomputation: stored "
                                f"{stored_standings.get(key)}, recomputed {standings.get(key)}")
        return len(results), problems
