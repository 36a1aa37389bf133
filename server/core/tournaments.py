"""The hall's tournament desk: the events of this server, who watches each, and the organiser's requests.

The desk decides what a ``tournament_create`` or ``tournament_control`` request does (checking the
entrants, defining the event, starting its house bots through the house desk) and answers refusals in
the outbox it is given; the hall then opens the rooms of the games due (it holds the rooms). A
:class:`~server.tournament.director.Director` runs each event; the desk only keeps them and their
watchers, and never calls back into the hall.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from protocol.games import OptionError
from protocol.messages import NAME_PATTERN, ErrorCode
from protocol.requests import TournamentControl, TournamentCreate

from ..tournament.director import Director, TournamentError, TournamentStatus, define, slug
from .house import HOUSE_LEVEL, HOUSE_LEVELS, HOUSE_PREFIX, HouseDesk
from .logins import NAME_HELP
from .outbox import HallOutbox, Refusal
from .room import RoomSettings

log = logging.getLogger("plyhall.hall")

NAME = re.compile(NAME_PATTERN)
GOING_ON = (TournamentStatus.CREATED, TournamentStatus.RUNNING, TournamentStatus.PAUSED)  # entries hold their names
UNDER_WAY = (TournamentStatus.RUNNING, TournamentStatus.PAUSED)  # an event whose house entrants run
VIEW_KEPT = 1.0  # seconds an event's view is kept while nothing in it changes


class TournamentDesk:
    """Every tournament of this server, by id, and the connections watching each."""

    def __init__(self, room_defaults: dict[str, Any]) -> None:
        self.room_defaults = room_defaults
        self.tournaments: dict[str, Director] = {}
        self.watchers: dict[str, set[int]] = {}  # tournament id -> connections watching it
        self.pending_due: set[str] = set()  # restored events whose due games are opened once the server runs
        self.views: dict[str, tuple[float, dict[str, Any]]] = {}  # tournament id -> its full view, and when made

    # Queries -----------------------------------------------------------------------------------

    def find(self, out: HallOutbox, conn: int, key: str) -> Director | None:
        """The tournament called or numbered ``key``, or None (and an error naming the tournaments)."""
        director = self.tournaments.get(key) or self.tournaments.get(slug(key))
        if director is None:
            known = ", ".join(sorted(self.tournaments)) or "none yet"
            out.error(conn, ErrorCode.NO_SUCH_TOURNAMENT, f"there is no tournament {key[:40]!r}; tournaments: {known}")
        return director

    def entrant(self, name: str) -> Director | None:
        """The tournament not over yet that ``name`` is an entrant of, if any (its entry holds the name)."""
        for director in self.tournaments.values():
            if director.status in GOING_ON and name in director.entrants:
                return director
        return None

    def entered_in(self, name: str) -> Director | None:
        """The tournament not over yet (created, running or paused) in which ``name`` still has games, if any."""
        for director in self.tournaments.values():
            if director.status in GOING_ON and director.has_games_for(name):
                return director
        return None

    def seek_refusal(self, name: str) -> str | None:
        """Why ``name`` may not seek a game now (it has games to play in an event, even one not started yet: an
        early entrant is never paired in the lobby while it waits for its event), or None when it may."""
        director = self.entered_in(name)
        if director is None:
            return None
        event = director.settings.name
        if director.status == TournamentStatus.CREATED:
            return (f"you are an entrant of the tournament {event}, which has not started yet; once the organiser "
                    "starts it the server seats you in each of your games (stay logged in and wait; do not seek)")
        return (f"you have games to play in the tournament {event}; the server seats you in each of them (log in and "
                "wait)")

    def room_closed(self, tournament: str, room: str) -> Director | None:
        """``room`` of ``tournament`` closed: the event's director when a game of it lost its room without a result
        (it is opened again: the hall asks for the games due), else None."""
        director = self.tournaments.get(tournament)
        if director is None or director.room_closed(room) is None:
            return None
        log.warning("tournament %s: room %s closed without a result; its game is played again", director.settings.name,
                    room)
        return director

    def restored(self) -> list[Director]:
        """The events taken back at start whose due games are still to be opened (each once)."""
        pending, self.pending_due = sorted(self.pending_due), set()
        return [self.tournaments[tid] for tid in pending if tid in self.tournaments]

    def summaries(self) -> list[dict[str, Any]]:
        """Every event in short (the ``tournaments`` reply)."""
        return [director.summary() for director in self.tournaments.values()]

    def view(self, director: Director, now: float, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``director``'s full view, as ``make`` makes it, kept until the event changes (:meth:`changed`) or for
        :data:`VIEW_KEPT` seconds (its running games' clocks): an event of 100 entrants takes 11 ms to show, and
        its watchers and entrants all ask for it."""
        kept = self.views.get(director.id)
        if kept is None or now - kept[0] >= VIEW_KEPT or now < kept[0]:
            kept = self.views[director.id] = (now, make())
        return kept[1]

    def changed(self, director: Director) -> None:
        """``director``'s event changed: its view is made again when next asked for."""
        self.views.pop(director.id, None)

    # Watchers ----------------------------------------------------------------------------------

    def watch(self, conn: int, director: Director, on: bool) -> None:
        """``conn`` starts (or stops) watching ``director``'s event."""
        watching = self.watchers.setdefault(director.id, set())
        if on:
            watching.add(conn)
        else:
            watching.discard(conn)

    def gone(self, conn: int) -> None:
        """The connection closed: it watches nothing any more."""
        for watching in self.watchers.values():
            watching.discard(conn)

    def moved(self, old: int, new: int) -> None:
        """A name's session moved from connection ``old`` to ``new`` (it logged in again): what it watched, it
        watches on."""
        for watching in self.watchers.values():
            if old in watching:
                watching.discard(old)
                watching.add(new)

    def watching(self, tournament: str) -> list[int]:
        """The connections watching ``tournament``, in order."""
        return sorted(self.watchers.get(tournament, ()))

    # Requests ----------------------------------------------------------------------------------

    def create(self, out: HallOutbox, conn: int, msg: TournamentCreate, house: HouseDesk,
               held: Callable[[str], bool], wall_clock: float) -> Director | None:
        """Define the event ``msg`` asks for (and start it, when asked): the new director, or None with the reason
        in ``out``."""
        local_levels = msg.get("local", [])
        refusal = self._bad_entrants(msg.get("players", []), local_levels, house)
        if refusal is not None:
            out.error(conn, ErrorCode.BAD_OPTION, refusal)
            return None
        local = {house.name(level, held): level for level in local_levels}
        try:
            settings = define(msg, [*msg.get("players", []), *local], local, wall_clock)
            RoomSettings.parse(settings.game, settings.room["options"], settings.room["time_control"],
                               settings.room["illegal_move"], settings.room["grace"], 1, self.room_defaults)
        except (TournamentError, OptionError) as exc:
            out.error(conn, ErrorCode.BAD_OPTION, str(exc))
            return None
        if settings.id in self.tournaments:
            there = self.tournaments[settings.id]
            out.error(conn, ErrorCode.BAD_OPTION, f"a tournament called {there.settings.name} exists already "
                      f"({there.status.value}); choose another name, or follow that one to its end with: plyhall "
                      f"tournament follow {there.id}")
            return None
        busy = [(player, other) for player in msg.get("players", []) if (other := self.entrant(player)) is not None]
        if busy:  # its bot would be seated in both events' games (of two games: it stopped, and forfeited both)
            player, other = busy[0]
            out.error(conn, ErrorCode.BAD_OPTION, f"{player} is an entrant of {other.settings.name} ({other.status}), "
                      "which is not over: an entrant plays one event at a time")
            return None
        director = Director(settings)
        if msg.get("start") and not self._start(out, conn, director, house):
            return None
        self.tournaments[director.id] = director
        log.info("tournament %s created: %s %s, %d entrants, %d games", settings.name, settings.game,
                 settings.spec.format, len(director.entrants), director.schedule.total_games)
        return director

    def control(self, out: HallOutbox, conn: int, msg: TournamentControl, house: HouseDesk) -> Director | None:
        """Start, pause, resume or cancel an event: its director, or None with the reason in ``out``. A cancelled
        event's house bots are stopped (the hall dissolves its rooms)."""
        director = self.find(out, conn, msg["tournament"])
        if director is None:
            return None
        action = msg["action"]
        if action == "start" and director.status == TournamentStatus.CREATED:
            if not self._start(out, conn, director, house):
                return None
        else:
            try:
                director.control(action)
            except TournamentError as exc:
                out.error(conn, ErrorCode.BAD_OPTION, str(exc))
                return None
        log.info("tournament %s: %s", director.settings.name, action)
        if director.status == TournamentStatus.CANCELLED:
            out.house_stop.extend(name for name in director.settings.local if name in house.running)
        return director

    def restore(self, snapshot: dict[str, Any], games: list[dict[str, Any]]) -> Director | None:
        """Take an event back after a restart (None, logged, when it cannot be rebuilt)."""
        try:
            director = Director.restore(snapshot, games)
        except Exception:  # one broken event must not keep the server (or the other events) from starting
            log.exception("could not restore tournament %s", snapshot.get("id"))
            return None
        self.tournaments[director.id] = director
        self.pending_due.add(director.id)
        return director

    # Internals ---------------------------------------------------------------------------------

    def _bad_entrants(self, players: list[Any], levels: list[Any], house: HouseDesk) -> str | None:
        bad = [p for p in players if not isinstance(p, str) or not NAME.fullmatch(p) or p.startswith(HOUSE_PREFIX)]
        if bad:
            return (f"{str(bad[0])[:40]!r} is not a player name: use {NAME_HELP} (names starting with "
                    f"{HOUSE_PREFIX} are the server's own bots: list those in local)")
        bad = [level for level in levels if not isinstance(level, str) or not HOUSE_LEVEL.fullmatch(level)]
        if bad:
            return f"unknown bot level {str(bad[0])[:40]!r} in local; levels: {', '.join(HOUSE_LEVELS)}"
        if levels and not house.limit:
            return ("this server starts no house bots: list players only, or start the server with plyhall serve "
                    "--house-bots N")
        return None

    def _start(self, out: HallOutbox, conn: int, director: Director, house: HouseDesk) -> bool:
        """Start an event and its house entrants (an event holds no house bot until it starts); False, with a
        ``busy`` error, when not all of them can start now."""
        local = director.settings.local
        free = house.free_for(len(local))
        if free is not None:
            out.refuse(conn, Refusal.HOUSE_BUSY, ErrorCode.BUSY, f"the tournament needs {len(local)} house bots to "
                       f"start; this server can start {free} more now (plyhall serve --house-bots N sets the limit; "
                       "games against house bots end first)")
            return False
        director.control("start")
        out.house += house.start_entrants(director.id, director.settings.game, local)
        return True
