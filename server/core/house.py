"""What the hall knows of house bots: our own bots, which the server starts as separate ``plyhall bot``
processes (``server.io.supervisor`` runs them; they connect through the client SDK like any remote bot,
and the server never imports ``bots``).

The hall decides which bot to start (:class:`HouseStart` in its outbox) and how many may run at once.
House bots log in under names starting with ``house-``, which only the server's own processes may use:
they prove it with a secret made when the server starts, which reaches them through their environment
(``PLYHALL_SECRET``), never their command line. A name is never handed out while anything holds it.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from protocol.messages import ErrorCode
from protocol.ratings import anchor_level, anchor_name

from . import words
from .refusals import Refusal

log = logging.getLogger("plyhall.house")

HOUSE_PREFIX = "house-"
SECRET_VARIABLE = "PLYHALL_SECRET"  # the environment variable `plyhall bot` reads its secret from
HOUSE_LEVELS: tuple[str, ...] = ("random", "novice", *(f"minimax-{n}" for n in range(1, 9)), "master")
"""The levels a house bot can play (``plyhall bot --level``); tests check them against ``bots``."""
HOUSE_LEVEL = re.compile(r"^(random|novice|master|minimax-[1-8])$")


@dataclass(frozen=True)
class HouseStart:
    """Start a house bot ``name`` playing ``level`` at ``game``: in ``room`` (``games`` games), as an entrant of
    ``tournament`` (waiting to be seated, game after game), or on the ladder as an anchor (``ladder``)."""

    name: str
    game: str
    level: str
    room: str | None = None
    games: int = 1
    tournament: str | None = None
    ladder: bool = False

    def argv(self, url: str) -> list[str]:
        """The ``plyhall bot`` command line of this bot (its secret reaches it through the environment)."""
        argv = [sys.executable, "-P", "-m", "plyhall", "bot", "--game", self.game, "--level", self.level,
                "--name", self.name, "--url", url]
        if self.tournament is not None:
            argv += ["--tournament", self.tournament]
        elif self.ladder:
            argv += ["--ladder"]
        else:
            assert self.room is not None
            argv += ["--room", self.room, "--games", str(self.games), "--series", str(self.games)]
        return argv


HOUSE_ARRIVAL = 120.0  # seconds a house bot process has to start and sit down (a master warms its engine up)
HOUSE_RESTARTS = 3  # times a tournament's house entrant (or an anchor, without a game in between) is started again
HOUSE_MAX_GAMES = 10  # games in one room against a house bot


@dataclass(frozen=True)
class HouseRefusal:
    """Why a house bot cannot be had now: an error code, the sentence, and the reason the metrics count
    (None: a bad request, not a quota)."""

    code: str
    text: str
    reason: Refusal | None = None


class HouseDesk:
    """The house bots the hall has asked for: which run (and for which room or event), whose game each plays,
    the names handed out, and the restarts of tournament entrants. It decides; the hall opens rooms and
    the I/O edge runs the processes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit  # processes that may run at once (0: none): plyhall serve's --house-bots plus its anchors
        self.running: dict[str, str] = {}  # bot name -> the room it was started for ("tournament ID" for events)
        self.games: dict[str, tuple[str, str]] = {}  # bot name -> (its opponent's name, that one's address)
        self.serial = 0  # names count on: a name is not handed out twice in one run
        self.restarts: dict[str, int] = {}  # tournament house entrant or anchor -> times started again
        self.anchors: dict[str, tuple[str, str]] = {}  # ladder anchor's name -> (game, level), for as long as we run

    @property
    def for_players(self) -> bool:
        """True when players may open rooms against house bots: the limit leaves room beside the ladder's anchors."""
        return self.limit > len(self.anchors)

    def refusal(self, level: str, timed: bool, games: int, name: str, address: str,
                max_per_name: int, max_per_address: int) -> HouseRefusal | None:
        """Why ``name`` (from ``address``) cannot play a house bot of ``level`` in a room of ``games`` games (timed
        or not), or None when it can."""
        bad = ErrorCode.BAD_OPTION
        if not self.for_players:
            if self.anchors:
                return HouseRefusal(bad, f"this server's {len(self.anchors)} house bots are the ladder's anchors, "
                                    "played on the ladder (seek with ladder: true); for rooms against house bots the "
                                    "organiser can allow more with plyhall serve --house-bots N")
            return HouseRefusal(bad, "this server starts no house bots (the organiser can allow them with plyhall "
                                "serve --house-bots N)")
        if not HOUSE_LEVEL.fullmatch(level):
            return HouseRefusal(bad, f"unknown bot level {level[:40]!r}; levels: {', '.join(HOUSE_LEVELS)}")
        if not timed:
            return HouseRefusal(bad, "a game against a house bot must be timed: give time_control per_move or initial "
                                "(an untimed game would keep the bot for ever)")
        if games > HOUSE_MAX_GAMES:
            return HouseRefusal(bad, f"a room against a house bot plays at most {HOUSE_MAX_GAMES} games")
        by_name = sum(opponent == name for opponent, _ in self.games.values())
        if by_name >= max_per_name:
            return HouseRefusal(ErrorCode.BUSY, f"you are playing {by_name} house bot game"
                                f"{'' if by_name == 1 else 's'} already, the limit per name; finish it first",
                                Refusal.HOUSE_PER_NAME)
        by_address = sum(where == address for _, where in self.games.values())
        if max_per_address and by_address >= max_per_address:
            return HouseRefusal(ErrorCode.BUSY, f"{by_address} house bot games are being played from your address, "
                                "its limit; try again when one ends", Refusal.HOUSE_PER_ADDRESS)
        if len(self.running) >= self.limit:
            return HouseRefusal(ErrorCode.BUSY, words.house_bots_busy(self.limit - len(self.anchors)),
                                Refusal.HOUSE_BUSY)
        return None

    def anchor_refusal(self, level: str, game: str, held: Callable[[str], bool]) -> HouseRefusal | None:
        """Why the ladder anchor of ``level`` cannot play a rated room of ``game`` now (it is playing), or None."""
        name = anchor_name(level, game)
        if name in self.anchors:
            return HouseRefusal(ErrorCode.BUSY, f"{name}, the rated {level} bot, plays on this server's ladder: meet "
                                "it there (seek with ladder: true), or play this level unrated (rated: false)",
                                Refusal.HOUSE_BUSY)
        if name in self.running or held(name):
            return HouseRefusal(ErrorCode.BUSY, f"{name}, the rated {level} bot, is playing; try again when its game "
                                "ends, or play it unrated (rated: false)", Refusal.HOUSE_BUSY)
        return None

    def anchor(self, game: str, level: str) -> HouseStart:
        """Start the ladder anchor of ``level`` for ``game``: it plays on the ladder for as long as the server runs
        (its place is one of its own: plyhall serve adds the anchors to --house-bots)."""
        name = anchor_name(level, game)
        self.anchors[name] = (game, level)
        self.running[name] = "the ladder"
        return HouseStart(name, game, level, ladder=True)

    def restart_anchor(self, name: str) -> HouseStart | None:
        """Start a ladder anchor whose process ended again, unless it ended often without playing a game since."""
        game, level = self.anchors[name]
        if not self._may_restart(name, "the ladder"):
            return None
        return self.anchor(game, level)

    def anchor_played(self, name: str) -> None:
        """A ladder anchor finished a game: its process works, and the count of its restarts begins anew."""
        self.restarts.pop(name, None)

    def room_bot(self, level: str, game: str, room: str, games: int, opponent: str, address: str,
                 held: Callable[[str], bool], name: str | None = None) -> HouseStart:
        """Hand out a bot for ``room``, against ``opponent``: the start request for the I/O edge (``name``: the
        bot's name, when it must be a given one, as a ladder anchor's)."""
        name = name or self.name(level, held)
        self.running[name] = room
        self.games[name] = (opponent, address)
        return HouseStart(name, game, level, room, games)

    def name(self, level: str, held: Callable[[str], bool]) -> str:
        """A name for a bot of ``level`` that nothing holds (``held``: a seat, a session, an entry, in the hall)."""
        while True:
            self.serial += 1
            name = f"{HOUSE_PREFIX}{level}-{self.serial}"
            if name not in self.running and not held(name):
                return name

    def free_for(self, count: int) -> int | None:
        """None when ``count`` more bots can start now (a tournament's entrants), else how many can."""
        free = max(0, self.limit - len(self.running))
        return None if count <= free else free

    def start_entrants(self, tournament: str, game: str, local: dict[str, str]) -> list[HouseStart]:
        """Start a tournament's house entrants (those not running already), as many as the limit lets run (a server
        restarted with fewer house bots, or none: the others are said, and their games forfeited after the grace)."""
        starts, left_out = [], []
        for name, level in local.items():
            if name in self.running:
                continue
            if len(self.running) >= self.limit:
                left_out.append(name)
                continue
            self.running[name] = f"tournament {tournament}"
            starts.append(HouseStart(name, game, level, tournament=tournament))
        if left_out:
            log.error("tournament %s: its house entrant%s %s cannot start: this server runs %d house bots at most "
                      "(plyhall serve --house-bots N); %s games are forfeited once their grace has run",
                      tournament, "s" if len(left_out) > 1 else "", ", ".join(left_out), self.limit,
                      "their" if len(left_out) > 1 else "its")
        return starts

    def exited(self, name: str) -> None:
        """``name``'s process ended: its slot is free."""
        self.running.pop(name, None)
        self.games.pop(name, None)

    def restart(self, name: str, tournament: str, game: str, level: str) -> HouseStart | None:
        """Start a tournament's house entrant again (its event goes on), unless it was restarted often already."""
        if not self._may_restart(name, f"tournament {tournament}"):
            return None
        self.running[name] = f"tournament {tournament}"
        return HouseStart(name, game, level, tournament=tournament)

    def _may_restart(self, name: str, what: str) -> bool:
        """True (and counted, and logged) when house bot ``name`` of ``what``, whose process ended, may start again."""
        restarts = self.restarts.get(name, 0)
        if restarts >= HOUSE_RESTARTS:
            log.error("house bot %s of %s ended %d times in a row: it is not started again", name, what, restarts + 1)
            return False
        self.restarts[name] = restarts + 1
        log.warning("house bot %s of %s ended while it is needed: starting it again (%d of %d)", name, what,
                    restarts + 1, HOUSE_RESTARTS)
        return True

    def room_over(self, room: str) -> None:
        """``room`` is gone: the game its bot plays is over (the slot frees when the process ends)."""
        for bot in [bot for bot, where in self.running.items() if where == room]:
            self.games.pop(bot, None)

    def restored_room(self, name: str, room: str, game: str, games: int, opponent: str | None) -> HouseStart | None:
        """A restored room's seat belongs to house bot ``name``: start it again (its process did not outlive the
        old server's secret)."""
        level = anchor_level(name, game) or name.removeprefix(HOUSE_PREFIX).rsplit("-", 1)[0]
        if not HOUSE_LEVEL.fullmatch(level) or name in self.anchors:  # a ladder anchor resumes the room itself
            return None
        self.running[name] = room
        self.games[name] = (opponent or "", "?")
        return HouseStart(name, game, level, room, games)

    def count_on_from(self, names: Iterable[str]) -> None:
        """After a restart, number new bots on from the highest number held (``names``: every held name)."""
        numbers = [int(n.rsplit("-", 1)[1]) for n in names
                   if n.startswith(HOUSE_PREFIX) and n.rsplit("-", 1)[1].isdigit()]
        self.serial = max([self.serial, *numbers])
