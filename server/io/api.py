"""The read-only HTTP routes: health, metrics, and the JSON listings of rooms, games, tournaments and ratings.

Each route answers from the hall (live) or from storage (read on a thread of the server's, never on the
event loop). Writes go over the WebSocket. ``server.io.http`` does the HTTP around them.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from websockets.http11 import Response

import protocol
from protocol.games import GAMES
from protocol.messages import NAME_PATTERN, RoomStatus
from protocol.ratings import PROVISIONAL_DEVIATION, anchor_level, leaderboard_json

from ..tournament.director import Director, slug
from ..tournament.schedule import TournamentSpec
from .analysis import QueueFull
from .http import CLIENT, BadRequest, HttpApi, game_param, int_param, json_response, status_param, text_response
from .metrics import CONTENT_TYPE
from .static_files import STATIC_PREFIX, StaticFiles

if TYPE_CHECKING:
    from .host import Host

GAMES_MAX, PLAYER_GAMES_MAX, RATINGS_MAX = 500, 100, 1000
"""The largest ``limit`` of /api/games, /api/players/NAME (its latest games) and /api/ratings/GAME; a larger one
is refused (400) saying the range."""
CACHE_SECONDS = 1.0
"""Seconds an answer of the heavy listings is kept for the next reader (a game that ends renews them)."""


class Api:
    """The routes of one server (it reads the server's hall, storage, writer and metrics)."""

    def __init__(self, server: Host) -> None:
        self.server = server
        self.http = HttpApi()
        self.web = StaticFiles()
        self.http.version = lambda: server.games_recorded  # a game that ends renews the kept listings
        self.http.route("/healthz", self._healthz, free=True)
        self.http.route("/metrics", self._metrics)
        self.http.route("/api/rooms", self._api_rooms)
        self.http.route("/api/games", self._api_games, cache=CACHE_SECONDS,  # running games change with each move
                        live=lambda query: query.get("status") in ("running", "all"))
        self.http.route("/api/games/*", self._api_game)
        self.http.route("/api/tournaments", self._api_tournaments)
        self.http.route("/api/tournaments/*", self._api_tournament)
        self.http.route("/api/ratings", self._api_rated_games)
        self.http.route("/api/ratings/*", self._api_ratings, cache=CACHE_SECONDS)
        self.http.route("/api/players/*", self._api_player, cache=CACHE_SECONDS)
        self.http.route("/", self.web.index, free=True)
        self.http.route(STATIC_PREFIX + "*", self.web.file, free=True)

    async def _read(self, func: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.server.reads, func, *args)

    async def _healthz(self, path: str, query: dict[str, str]) -> Response:
        writer = self.server.writer
        database = {"ok": writer is None or writer.healthy, "queued": writer.queued if writer else 0}
        if writer is not None and not writer.healthy:
            database["error"] = writer.last_error
        serving = not self.server.stopping and not self.server.deposed
        health = {
            "ok": serving and bool(database["ok"]), "version": protocol.__version__,
            "rooms": len(self.server.hall.rooms), "connections": len(self.server.connections),
            "uptime": round(time.time() - self.server.started, 1), "database": database,
        }
        cluster = self.server.cluster
        if cluster is not None:  # a node without Redis still serves its own rooms and clients: degraded, not down
            health["cluster"] = cluster.status()
            health["degraded"] = not cluster.up or cluster.lock != "held"
        if self.server.deposed:
            health["deposed"] = self.server.deposed
        return json_response(200 if database["ok"] and serving else 503, health)

    async def _metrics(self, path: str, query: dict[str, str]) -> Response:
        return text_response(200, self.server.metrics.render().decode(), CONTENT_TYPE)

    def gauges(self) -> dict[str, Any]:
        """Live values for the metrics scrape."""
        tournaments: dict[str, int] = {}
        for director in self.server.hall.tournaments.values():
            tournaments[director.status] = tournaments.get(director.status, 0) + 1
        hall, house, writer = self.server.hall, self.server.house, self.server.writer
        return {
            "connections": len(self.server.connections), "sessions": len(hall.sessions), "rooms": len(hall.rooms),
            "games_running": sum(room.status == RoomStatus.PLAYING for room in hall.rooms.values()),
            "seeks": hall.seeks.waiting(),
            "ladder_passes": hall.seeks.ladder.passes, "ladder_candidates": hall.seeks.ladder.candidates,
            "house_bots": len(house.running) if house is not None else 0, "tournaments": tournaments,
            "storage_queued": writer.queued if writer else 0, "storage_up": int(writer is None or writer.healthy),
            "storage_commits": writer.commits if writer else 0,
            "gc_pauses": self.server.gc.pauses if self.server.gc is not None else None,
            "deposed": int(self.server.deposed is not None),
            "cluster": self.server.cluster.status() if self.server.cluster is not None else None,
        }

    async def _api_rooms(self, path: str, query: dict[str, str]) -> Response:
        return json_response(200, {"rooms": self.server.hall.listing(game_param(query))})

    async def _api_games(self, path: str, query: dict[str, str]) -> Response:
        limit = int_param(query, "limit", 50, 1, GAMES_MAX)
        offset = int_param(query, "offset", 0, 0, 10**9)
        game, status = game_param(query), status_param(query)
        storage = self.server.storage
        tournament = query.get("tournament")
        if tournament is not None:  # its id, or its name as /api/tournaments/NAME takes it
            tournament = await self._tournament_id(tournament) or tournament
        games = await self._read(lambda: storage.list_games(limit, offset, game, query.get("player"), status,
                                                            tournament))
        return await self._read(json_response, 200, {"games": games, "limit": limit, "offset": offset})  # off the loop

    async def _api_game(self, path: str, query: dict[str, str]) -> Response:
        game_id = unquote(path.removeprefix("/api/games/"))
        if game_id.endswith("/analysis"):
            return await self._api_analysis(game_id.removesuffix("/analysis"), query)
        record = await self._read(self.server.storage.get_game, game_id)
        if record is None:
            return json_response(404, {"error": f"no game with id {game_id[:40]!r}"})
        return json_response(200, record)

    async def _api_analysis(self, game_id: str, query: dict[str, str]) -> Response:
        """A game's analysis (200, status done); 202 with the job's progress while it is queued or runs; 200 with
        status none when there is none (``?request=1`` queues it: asked once, analysed once, stored with the game; asked
        again while it waits, it goes to the front of the asking address's line); 404 for no such game."""
        queue = self.server.analysis
        stored = await self._read(self.server.storage.get_analysis, game_id) or queue.done(game_id)
        if stored is not None:
            return json_response(200, {"game": game_id, "status": "done", "analysis": stored})
        status = queue.status(game_id)
        flag = query.get("request")
        if flag not in (None, "", "0", "1", "false", "true"):
            return json_response(400, {"error": f"request must be 1 (analyse the game if it has no analysis) or 0, "
                                                f"not {flag[:20]!r}"})
        asked = flag in ("1", "true")
        if asked and status is not None and status["status"] == "queued":  # asked again while it waits: the game
            queue.request(game_id, CLIENT.get())  # being looked at goes to the front of this address's line
            status = queue.status(game_id)
        if asked and (status is None or status["status"] == "failed"):
            record = await self._read(self.server.storage.get_game, game_id)
            if record is None:
                return json_response(404, {"error": f"no game with id {game_id[:40]!r}"})
            if record["status"] == "running":
                return json_response(409, {"error": "the game is still running: it is analysed once it has ended"})
            if not record["moves"]:
                return json_response(409, {"error": "the game has no moves: there is nothing to analyse"})
            try:
                queue.request(game_id, CLIENT.get())  # each address has its share of the queue, served in turn
            except QueueFull as exc:
                return json_response(429, {"error": str(exc), "retry_after": exc.retry_after},
                                     [("Retry-After", str(exc.retry_after))])
            status = queue.status(game_id)
        if status is None:
            if await self._read(self.server.storage.get_game, game_id) is None:
                return json_response(404, {"error": f"no game with id {game_id[:40]!r}"})
            return json_response(200, {"game": game_id, "status": "none",
                                       "message": "this game has not been analysed; ask with ?request=1"})
        if status["status"] == "failed":
            return json_response(500, {"game": game_id, **status, "error": f"the analysis failed: {status['error']}; "
                                                                           "ask again with ?request=1"})
        return json_response(202, {"game": game_id, **status})

    async def _api_tournaments(self, path: str, query: dict[str, str]) -> Response:
        """Every tournament in the database (all servers sharing it); this server's own ones live."""
        stored = await self._read(self.server.storage.list_tournaments)
        live = {tid: director.summary() for tid, director in self.server.hall.tournaments.items()}
        listing = [live.pop(snap["id"], None) or _stored_summary(snap) for snap in stored]
        return json_response(200, {"tournaments": listing + list(live.values())})

    async def _tournament_id(self, key: str) -> str | None:
        """The id of the tournament ``key`` names (its id, or its name), or None when there is none."""
        director = self.server.hall.tournaments.get(key) or self.server.hall.tournaments.get(slug(key))
        if director is not None:
            return director.id
        for candidate in dict.fromkeys((key, slug(key))):
            if await self._read(self.server.storage.tournament, candidate) is not None:
                return candidate
        return None

    async def _api_tournament(self, path: str, query: dict[str, str]) -> Response:
        key = unquote(path.removeprefix("/api/tournaments/"))
        if key.endswith("/analysis"):  # each entrant's accuracy over the event's analysed games
            key = key.removesuffix("/analysis")
            tournament_id = await self._tournament_id(key)
            if tournament_id is None:
                return json_response(404, {"error": f"no tournament {key[:40]!r}; /api/tournaments lists them"})
            players = await self._read(self.server.storage.tournament_accuracy, tournament_id)
            return json_response(200, {"tournament": tournament_id, "players": players})
        now = time.monotonic()
        director = self.server.hall.tournaments.get(key) or self.server.hall.tournaments.get(slug(key))
        if director is None:  # another server's event (or a finished one from before a restart)
            found = await self._read(self.server.storage.tournament, slug(key))
            if found is None:
                return json_response(404, {"error": f"no tournament {key[:40]!r}; /api/tournaments lists them"})
            director = Director.restore(*found)
        form = query.get("format", "json")
        if form == "text":
            return text_response(200, director.to_text(now))
        if form == "csv":
            return text_response(200, director.standings(now).to_csv(), "text/csv; charset=utf-8")
        if form != "json":
            raise BadRequest("format must be json, text or csv")
        return json_response(200, self.server.hall.tournament_view(director, now))

    async def _api_rated_games(self, path: str, query: dict[str, str]) -> Response:
        """The game types with rated players."""
        games = await self._read(self.server.storage.rated_games)
        return json_response(200, {"games": games, "provisional_deviation": PROVISIONAL_DEVIATION})

    async def _api_ratings(self, path: str, query: dict[str, str]) -> Response:
        """A game's leaderboard: rank, name, rating, deviation (as of now), games, W-D-L, last played, provisional,
        anchor, and whether the player is on this server's ladder now; and the latest games of rated rooms that were
        not rated, with why (``unrated``)."""
        game = unquote(path.removeprefix("/api/ratings/"))
        if game not in GAMES:
            return json_response(404, {"error": f"no game {game[:40]!r}; games: {', '.join(GAMES)}"})
        limit = int_param(query, "limit", 500, 1, RATINGS_MAX)
        board = await self._read(self.server.storage.leaderboard, game)
        on = self.server.hall.seeks.ladder.names(game)  # on this server's ladder now
        players = [{**row, "ladder": row["name"] in on} for row in leaderboard_json(board, time.time())[:limit]]
        unrated = await self._read(self.server.storage.unrated_games, game)
        return await self._read(json_response, 200, {"game": game, "players": players,
                                                     "provisional_deviation": PROVISIONAL_DEVIATION,
                                                     "unrated": unrated})

    async def _api_player(self, path: str, query: dict[str, str]) -> Response:
        """A player's rating in each game type with its history (the rated games, oldest first), and its latest
        games, rated or not."""
        name = unquote(path.removeprefix("/api/players/"))
        if not _NAME.fullmatch(name):
            return json_response(404, {"error": f"no player {name[:40]!r}: names are 1 to 32 letters (a-z, A-Z), "
                                                "digits and _ . - (starting with a letter or digit)"})
        limit = int_param(query, "limit", 20, 1, PLAYER_GAMES_MAX)
        storage = self.server.storage
        found = await self._read(storage.player_ratings, name)
        recent = await self._read(lambda: storage.list_games(limit, 0, None, name))
        if not found and not recent:
            return json_response(404, {"error": f"no player {name!r} has played here"})
        now = time.time()
        ratings = {game: {**standing.to_json(now, pinned=anchor_level(name, game) is not None), "history": history}
                   for game, (standing, history) in found.items()}
        return await self._read(json_response, 200, {"name": name, "ratings": ratings, "recent": recent})


_NAME = re.compile(NAME_PATTERN)


def _stored_summary(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The short form of a tournament known only from its stored snapshot (another server runs it)."""
    settings = snapshot["settings"]
    done = snapshot["games_done"]
    total = done if snapshot.get("stopped_early") else TournamentSpec.from_json(settings["spec"]).total_games
    return {"id": snapshot["id"], "name": snapshot["name"], "game": settings["game"],
            "format": settings["spec"]["format"], "status": snapshot["status"],
            "entrants": settings["spec"]["entrants"],
            "progress": {"done": done, "total": total, "fraction": done / total if total else 1.0}}
