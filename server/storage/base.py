"""The storage interface: what the server stores and reads back, whatever the database.

``Storage`` is the small interface the server needs; ``server.storage.sql`` holds all the SQL,
written once in a portable dialect, for SQLite (``sqlite``) and PostgreSQL (``postgres``).
The server reaches storage only through this interface (``open_storage`` in the package makes
one from a ``--db`` value). Calls block: the server calls them off the event loop, but for
SQLite's commits, which are quick enough to run on it (``commits_inline``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from protocol.ratings import RatedGame, Standing

from .records import GameRecord, Restored, Write

TABLES: dict[str, tuple[str, ...]] = {
    "players": ("name", "salt", "digest", "claimed_at", "claimed_from", "registered"),
    "identities": ("name", "digest", "issued_at"),
    "games": ("id", "room", "game", "options", "time_control", "player0", "player1", "winner", "reason", "status",
              "move_count", "started_at", "ended_at", "tournament", "tournament_game", "rated",
              "unrated", "rating_weight"),
    "moves": ("game_id", "seq", "seat", "move", "think_ms", "clock0", "clock1"),
    "rooms": ("node", "name", "snapshot", "updated_at"),
    "tournaments": ("id", "node", "name", "status", "snapshot", "created_at"),
    "ratings": ("game", "name", "rating", "deviation", "volatility", "games", "wins", "draws", "losses",
                "last_played"),
    "rating_events": ("seq", "game_id", "game", "player0", "player1", "winner", "played_at", "weight", "rating0",
                      "deviation0", "volatility0", "change0", "rating1", "deviation1", "volatility1", "change1"),
    "analyses": ("game_id", "version", "nodes", "data", "created_at"),
}
"""Every table with its columns, for copies between databases."""


class StorageError(Exception):
    """The database cannot be used (wrong file, newer schema, unreachable server)."""


def database_error(exc: BaseException) -> bool:
    """True when ``exc`` is the database's failing (a storage error, or one of its driver's: PostgreSQL away, a
    locked or unreadable SQLite file), not a mistake of the server's."""
    return isinstance(exc, StorageError) or type(exc).__module__.split(".")[0] in ("psycopg", "sqlite3")


class Deposed(StorageError):
    """This server no longer owns its rooms: another server adopted them (or took this node's name), so the
    database refuses its writes (the fencing token it writes with is not the current one)."""


class Storage:
    """What the server stores. Every method may block; the server calls them off the event loop."""

    def apply(self, writes: Sequence[Write]) -> None:
        """Commit ``writes`` in one transaction, in order (all or none)."""
        raise NotImplementedError

    def load(self, node: str | None = None) -> Restored:
        """Everything a starting server takes back: claims, identities of seat holders, open rooms with
        their running games (and moves), tournaments."""
        raise NotImplementedError

    def save_game(self, record: GameRecord) -> None:
        """Store a whole game with its moves (for copies between databases and for tools)."""
        raise NotImplementedError

    def list_games(self, limit: int = 50, offset: int = 0, game: str | None = None, player: str | None = None,
                   status: str | None = None, tournament: str | None = None) -> list[dict[str, Any]]:
        """Summaries of stored games, newest first; ended games unless ``status`` asks for running ones."""
        raise NotImplementedError

    def get_game(self, game_id: str) -> dict[str, Any] | None:
        """One stored game (running or ended) with its moves, or None."""
        raise NotImplementedError

    def iter_games(self, tournament: str | None = None, game: str | None = None) -> Iterator[dict[str, Any]]:
        """Every ended game with its moves, oldest first."""
        raise NotImplementedError

    def count_games(self) -> int:
        """Number of ended games."""
        raise NotImplementedError

    def get_claim(self, name: str) -> tuple[str, str] | None:
        """The stored claim of ``name`` (salt, digest), or None: a name claimed through another server."""
        raise NotImplementedError

    def name_claim(self, name: str) -> tuple[str, str, bool] | None:
        """The stored claim of ``name`` (salt, digest) and whether the organiser registered it (``plyhall names
        add``), or None."""
        raise NotImplementedError

    def list_tournaments(self) -> list[dict[str, Any]]:
        """The stored snapshot of every tournament, of every server, oldest first."""
        raise NotImplementedError

    def tournament(self, tournament_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """One tournament's snapshot and the summaries of its games, or None."""
        raise NotImplementedError

    def get_analysis(self, game_id: str) -> dict[str, Any] | None:
        """A game's stored analysis (``bots.analysis``' JSON), or None."""
        raise NotImplementedError

    def tournament_accuracy(self, tournament_id: str) -> dict[str, dict[str, Any]]:
        """Each player's accuracy and counts (blunders, mistakes, inaccuracies) over a tournament's analysed games."""
        raise NotImplementedError

    def rated_games(self) -> list[str]:
        """The game types that have ratings."""
        raise NotImplementedError

    def leaderboard(self, game: str) -> list[tuple[str, Standing, bool]]:
        """Every rated player of ``game``: (name, standing, is a ladder anchor), highest rating first."""
        raise NotImplementedError

    def leaderboards(self) -> dict[str, list[tuple[str, Standing, bool]]]:
        """The leaderboard of every game type with ratings (what the ladder pairs by when the server starts)."""
        return {game: self.leaderboard(game) for game in self.rated_games()}

    def player_ratings(self, name: str) -> dict[str, tuple[Standing, list[dict[str, Any]]]]:
        """``name``'s standing per game type, each with its rated games (oldest first)."""
        raise NotImplementedError

    def rated_results(self) -> list[RatedGame]:
        """Every rated result, as the games' records have it, in the order it was rated."""
        raise NotImplementedError

    def check_ratings(self) -> tuple[int, list[str]]:
        """Recompute every rating from the rated results: how many there are, and every disagreement with the
        stored ratings."""
        raise NotImplementedError

    @property
    def shared(self) -> bool:
        """True when other servers may use the same database at once (names must be looked up there)."""
        return False

    @property
    def commits_inline(self) -> bool:
        """True when a commit is quick enough to run on the event loop (no network in between)."""
        return False

    def checkpoint_in_background(self, interval: float = 1.0) -> None:
        """Do the database's housekeeping off the writer's path (nothing to do for most databases)."""

    def own(self) -> None:
        """Become the one server that writes here (for this node): StorageError naming the other server
        when one does already. Held until :meth:`close`."""

    @property
    def epoch(self) -> int | None:
        """The fencing token this server writes with (a database shared by several servers checks it in the
        transaction of every write; None where no other server can write: the check holds trivially)."""
        return None

    def check_ownership(self) -> str:
        """Prove this server still owns its rooms: ``"held"``, or ``"retaken"`` when the connection holding its
        lock had dropped and the lock was taken again, with a new epoch, before anyone adopted its rooms.
        Raises :class:`Deposed` when another server took them, StorageError while the database cannot say.
        Trivially ``"held"`` for a database only this server uses."""
        return "held"

    def nodes(self) -> list[str]:
        """Every node with rooms or tournaments stored here (only a database shared by several servers has
        others than this one)."""
        return []

    def adopt(self, node: str) -> Restored | None:
        """Take over the rooms and tournaments of ``node``, another server of this database that has stopped
        (a cluster node that died): None, changing nothing, while that node still runs. Only a database
        shared by several servers has other nodes."""
        return None

    @property
    def spill_path(self) -> str | None:
        """Where a server that cannot reach this database at shutdown keeps the writes it could not commit
        (replayed at the next start), or None."""
        return None

    def close(self) -> None:
        """Release the database."""
