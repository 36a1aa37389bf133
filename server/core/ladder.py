"""The ladder: bots that play rated games for as long as they are connected, paired by rating with variety.

A ``seek`` with ``ladder: true`` puts a name on the ladder of a game (a *rung*); the seek desk keeps the rungs
beside the plain seeks. The hall opens a rated room for every pair :meth:`Ladder.pairings` finds, and when a
ladder game's result is stored (with the ratings it made) both players wait again, paired on their new ratings.
A rung lasts while its player is connected (and through a game it plays while away); ``cancel_seek``, a plain
``seek`` for the same game, or a disconnection while waiting takes it off. Nothing here is stored: after a
restart ``plyhall bot --ladder`` seeks again by itself.

The pairing rules (docs/RATINGS.md states them for bot authors):

* **a window that widens**: a player who has waited ``t`` seconds accepts opponents whose rating is within
  ``max(WINDOW_BASE, its deviation) + WINDOW_GROWTH * t`` points of its own (so a provisional rating, whose
  deviation is large, starts wide). Two players meet when each is within the other's window; an anchor accepts
  anybody (it is there to be played), so only its opponent's window counts; and a bot that has waited
  ``WINDOW_OPEN`` seconds is paired with whoever may meet it, whatever their windows (nobody starves behind
  bots that keep pairing among themselves as they come back);
* **closest first**: the player who has waited longest is paired first, with the closest rating its window
  holds (then the one who waited longest, then by name);
* **variety**: a bot never meets the opponent of its previous ladder game again while anybody else waits for
  that game (an anchor's previous opponent does not count: a bot alone with anchors goes round them);
* two **anchors** never meet (both ratings are pinned: their game would move nothing), nor two names whose game
  would not be rated (names one person may control, an address whose day of rated play with a name is used up:
  ``server.core.rated``);
* **colours** alternate per pair: the seek desk seats first whoever had seat 1 when the two last met.

The time of a ladder game is a time per move for each game (``plyhall serve --ladder-time``, else
``LADDER_TIMES``); a ladder room plays one game, rated, with the server's grace period and illegal-move rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.games import GAMES
from protocol.glicko2 import BASE, DEFAULT_DEVIATION
from protocol.ratings import (
    ANCHOR_DEVIATION,
    ANCHOR_LEVELS,
    HOUSE_PREFIX,
    PROVISIONAL_DEVIATION,
    Standing,
    anchor_level,
    anchor_rating,
    rateable_name,
)

from .ladder_pass import PairingPass, Rung
from .room_settings import RoomSettings

LADDER_TIMES: dict[str, float] = {"connect4": 5.0, "magnetic-cave": 5.0, "quarto": 5.0, "santorini": 10.0,
                                  "amazons": 30.0}
"""Seconds a move in the ladder's games, by game, unless ``plyhall serve --ladder-time`` says otherwise."""
MIN_TIME, MAX_TIME = 0.05, 3600.0
"""The bounds of a ladder time per move, in seconds."""
WINDOW_BASE = 100.0
"""Rating points a waiting player accepts at once (or its deviation, when that is larger)."""
WINDOW_GROWTH = 10.0
"""Rating points the window widens by for each second waited."""
WINDOW_OPEN = 60.0
"""Seconds after which a waiting player accepts anybody."""
GAMES_PER_ADDRESS = 120.0
"""Ladder games the names of one address may start a minute, on average (a name in a game counts once, so a game
between two of its names counts twice); ``GAMES_BURST`` more at once. Past it, its names wait (they are paired
when the address may start games again): whoever churns games, the ladder's work stays the same."""
GAMES_BURST = 20.0
PAIRS_PER_TURN = 16
"""Pairs one pairing of a game's ladder makes at most; the rest are made on the hall's next turn, so a crowd coming
back at once never holds the event loop for long."""
SCAN_STEPS = 2000
"""Candidate opponents one pairing (or one look for the next pairing time) considers at most."""
EPSILON = 1e-6  # seconds added to a computed wake-up, so that rounding never wakes the hall just too early


def parse_ladder_times(text: str) -> dict[str, float]:
    """``connect4=5,amazons=30``: seconds a move per game for the ladder; ValueError says what is wrong."""
    times: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        game, sep, value = item.partition("=")
        game = game.strip()
        if not sep:
            raise ValueError(f"{item[:40]!r} is not GAME=SECONDS (for instance connect4=5)")
        if game not in GAMES:
            raise ValueError(f"unknown game {game[:40]!r}; games: {', '.join(GAMES)}")
        if game in times:
            raise ValueError(f"{game} is given twice")
        try:
            seconds = float(value)
        except ValueError:
            raise ValueError(f"{game}: {value.strip()[:40]!r} is not a number of seconds") from None
        if not MIN_TIME <= seconds <= MAX_TIME:
            raise ValueError(f"{game}: the time per move must be {MIN_TIME:g} to {MAX_TIME:g} seconds, not {seconds:g}")
        times[game] = seconds
    return times


def parse_anchors(values: Iterable[str], levels: Iterable[str]) -> list[tuple[str, str]]:
    """``connect4:random,novice,master`` (one value a game): the (game, level) of every ladder anchor; ValueError
    says what is wrong (``levels``: the house bot levels there are)."""
    known = list(levels)
    anchors: list[tuple[str, str]] = []
    for value in values:
        game, sep, listed = value.partition(":")
        game = game.strip()
        if not sep or not listed.strip():
            raise ValueError(f"{value[:40]!r} is not GAME:LEVEL,LEVEL,... (for instance connect4:random,novice,master)")
        if game not in GAMES:
            raise ValueError(f"unknown game {game[:40]!r}; games: {', '.join(GAMES)}")
        for level in (part.strip() for part in listed.split(",")):
            if level not in known or level not in ANCHOR_LEVELS:
                raise ValueError(f"{game}: unknown level {level[:40]!r}; levels: {', '.join(known)}")
            if (game, level) in anchors:
                raise ValueError(f"{game}: the {level} anchor is given twice")
            anchors.append((game, level))
    return anchors


@dataclass(frozen=True)
class LadderConfig:
    """How the operator set the ladder up: seconds a move per game (the others: ``LADDER_TIMES``), the house
    bots on it as anchors, as (game, level), and the ladder games the names of one address may start a minute
    (``plyhall serve --ladder-games-per-address``; 0: no limit)."""

    times: dict[str, float] = field(default_factory=dict)
    anchors: tuple[tuple[str, str], ...] = ()
    games_per_address: float = GAMES_PER_ADDRESS


Ready = Callable[[str], bool]
"""Whether a name may be paired now (connected, and holding no seat in a room whose games go on)."""


class Ladder:
    """The rungs of every game's ladder, the ratings they are paired by, and the ladder games whose results are being
    stored (their players wait again once they are)."""

    def __init__(self, config: LadderConfig | None = None, room_defaults: dict[str, Any] | None = None) -> None:
        config = config or LadderConfig()
        self.times = {**LADDER_TIMES, **config.times}
        self.settings = {game: RoomSettings.parse(game, None, {"per_move": seconds}, None, None, 1,
                                                  room_defaults or {}, True) for game, seconds in self.times.items()}
        self.rungs: dict[tuple[str, str], Rung] = {}  # (game, name) -> its rung
        self.ratings: dict[tuple[str, str], tuple[float, float]] = {}  # (game, name) -> (rating, deviation)
        self.resting: dict[str, tuple[str, tuple[str, ...]]] = {}  # game record -> (game, players) until stored
        self.by_game: dict[str, dict[str, Rung]] = {}  # game -> name -> its rung
        self.waiting_by_game: dict[str, dict[str, Rung]] = {}  # game -> name -> its rung, while it waits
        self.unfinished: set[str] = set()  # games whose last pairing stopped at its bound: more pairs may wait
        self.resume: dict[str, tuple[float | None, str]] = {}  # game -> (since, name) of the rung a pass stopped at
        self.passes = 0  # pairing passes and looks for the next pairing time made (for the metrics)
        self.rate = config.games_per_address / 60.0  # games a second an address may start (0: no limit)
        self.buckets: dict[str, tuple[float, float]] = {}  # address -> (games it may start, as of when)
        self.candidates = 0  # candidate opponents they looked at (for the metrics)
        self.unrated: Callable[[str, tuple[str, str], float], str | None] | None = None
        """Why a game of a game between two names would not be rated now, or None (the hall's rules of rated play:
        :meth:`~server.core.rated_games.RatedGames.pair_unrated`); such names are never paired."""

    # Who is on it ---------------------------------------------------------------------------------

    def refusal(self, name: str, msg: Mapping[str, Any], claimed: bool) -> str | None:
        """Why ``name`` (``claimed``: logged in with a secret) cannot have the ladder seek ``msg``, or None."""
        game = msg["game"]
        if game not in self.settings:
            return f"unknown game {game[:40]!r}; games: {', '.join(GAMES)}"
        fixed = [key for key in ("options", "time_control", "games") if key in msg]
        if fixed:
            return (f"a ladder seek takes no {' or '.join(fixed)}: the ladder plays {game} at {self.times[game]:g} s a "
                    "move, one game a room, with the game's standard options (plyhall serve --ladder-time sets its "
                    "times)")
        if msg.get("rated", True) is not True:
            return "the ladder's games are all rated: leave rated out of a ladder seek (or send true)"
        if rateable_name(name, game, claimed):
            return None
        if name.startswith(HOUSE_PREFIX):
            return "house bots play on the ladder only as its anchors (plyhall serve --ladder-anchors)"
        return (f"the ladder plays rated games, and only claimed names are rated: log in as {name} with a secret "
                "(plyhall bot --secret, or $PLYHALL_SECRET)")

    def address_refusal(self, name: str, address: str, limit: int) -> str | None:
        """Why ``name`` may not go on the ladder from ``address`` (which has ``limit`` names there at most; 0: no
        limit), or None: a name already on it may always seek again."""
        if not limit or address == "?":
            return None
        names = self.names_from(address)
        if name in names or len(names) < limit:
            return None
        return (f"{len(names)} names from your address are on the ladder already, its limit ({limit}): take one off "
                "(cancel_seek, or disconnect it) first; the operator sets the limit with plyhall serve "
                "--max-ladder-names-per-address")

    def join(self, name: str, game: str, now: float, address: str = "?") -> Rung:
        """Put ``name`` (its seek from ``address``) on the ladder of ``game`` (a rung it has already stays as it is,
        its address brought up to date)."""
        rung = self.rungs.get((game, name))
        if rung is None:
            rung = self.rungs[(game, name)] = Rung(name, game, None)
            self.by_game.setdefault(game, {})[name] = rung
            self._set_since(rung, now)
        rung.address = address
        return rung

    def leave(self, name: str, game: str | None = None) -> None:
        """Take ``name`` off the ladder of ``game`` (or of every game)."""
        for key in [(g, name) for g in ((game,) if game is not None else tuple(self.by_game))]:
            rung = self.rungs.pop(key, None)
            if rung is not None:
                self._set_since(rung, None)
                del self.by_game[rung.game][name]

    def leave_waiting(self, name: str) -> None:
        """Take ``name`` off every ladder it waits on; a rung in a game stays, to its end (a player back within its
        grace plays on; one not back is taken off when the result is stored)."""
        for game in [g for g in self.by_game if (g, name) in self.rungs and self.rungs[(g, name)].since is not None]:
            self.leave(name, game)

    def names(self, game: str) -> set[str]:
        """The names on the ladder of ``game``."""
        return set(self.by_game.get(game, ()))

    def names_from(self, address: str) -> set[str]:
        """The names on the ladder (of any game) whose seek came from ``address``."""
        return {rung.name for rung in self.rungs.values() if rung.address == address}

    def games(self) -> list[str]:
        """The games whose ladder has rungs waiting, in order."""
        return sorted(game for game, waiting in self.waiting_by_game.items() if waiting)

    def waiting(self) -> int:
        """Rungs waiting to be paired (for the metrics)."""
        return sum(len(waiting) for waiting in self.waiting_by_game.values())

    def _set_since(self, rung: Rung, since: float | None) -> None:
        """``rung`` waits from ``since`` (None: it plays), kept in its game's waiting rungs."""
        rung.since = since
        waiting = self.waiting_by_game.setdefault(rung.game, {})
        if since is None:
            waiting.pop(rung.name, None)
        else:
            waiting[rung.name] = rung

    def describe(self, rung: Rung) -> dict[str, Any]:
        """What a ``seeking`` message says of a ladder rung: its rating and the ladder around it."""
        rating, deviation = self.rating(rung.game, rung.name)
        waiting = len(self.waiting_by_game.get(rung.game, ())) - (rung.since is not None)
        others = len(self.by_game.get(rung.game, ())) - 1
        return {"rating": round(rating, 1), "deviation": round(deviation, 1),
                "provisional": deviation > PROVISIONAL_DEVIATION, "waiting": waiting, "playing": others - waiting}

    def seek_json(self, game: str) -> dict[str, Any]:
        """A ladder seek as ``seeking.seek`` shows it."""
        return {**self.settings[game].to_json(), "ladder": True}

    # Ratings ---------------------------------------------------------------------------------------

    def rating(self, game: str, name: str) -> tuple[float, float]:
        """The rating and deviation ``name`` is paired by: pinned for an anchor, a newcomer's when unknown."""
        level = anchor_level(name, game)
        if level is not None:
            return anchor_rating(level, game), ANCHOR_DEVIATION
        return self.ratings.get((game, name), (BASE, DEFAULT_DEVIATION))

    def learn_boards(self, boards: Mapping[str, Iterable[tuple[str, Standing, bool]]], now: float) -> None:
        """Take the stored ratings (each game's leaderboard), deviations as of ``now`` (Unix seconds)."""
        for game, board in boards.items():
            for name, standing, _anchor in board:
                self.ratings[(game, name)] = (standing.rating.rating, standing.deviation_at(now))

    def learn(self, game: str, players: Iterable[str], ratings: Iterable[dict[str, Any]]) -> None:
        """Take the ratings a stored rated result made (``game_over.ratings``: by seat)."""
        for name, rated in zip(players, ratings, strict=True):
            self.ratings[(game, name)] = (rated["rating"], rated["deviation"])

    # Games -----------------------------------------------------------------------------------------

    def started(self, game: str, names: tuple[str, str]) -> None:
        """Two rungs were paired: they play, each the other's last opponent."""
        for name, other in (names, names[::-1]):
            rung = self.rungs.get((game, name))
            if rung is not None:
                self._set_since(rung, None)
                rung.last_opponent = other

    def ended(self, record: str, game: str, players: Iterable[str]) -> None:
        """A ladder game ended (its result, record ``record``, is being stored): its players wait again once it is."""
        self.resting[record] = (game, tuple(players))

    def stored(self, record: str, now: float) -> list[Rung]:
        """The result of ``record`` is stored: its players' rungs (those still on the ladder) wait from ``now``."""
        game, players = self.resting.pop(record, ("", ()))
        back = [self.rungs[(game, name)] for name in players if (game, name) in self.rungs]
        for rung in back:
            self._set_since(rung, now)
        return back

    # Pairing ---------------------------------------------------------------------------------------

    def _start(self, rung: Rung) -> float:
        return max(WINDOW_BASE, self.rating(rung.game, rung.name)[1])

    def window(self, rung: Rung, now: float) -> float:
        """Rating points around its own that ``rung`` accepts now (infinite for an anchor, and once it has waited
        long enough)."""
        assert rung.since is not None
        waited = max(0.0, now - rung.since)
        if waited >= WINDOW_OPEN or anchor_level(rung.name, rung.game) is not None:
            return math.inf
        return self._start(rung) + WINDOW_GROWTH * waited

    def gap(self, a: Rung, b: Rung) -> float:
        """The rating points between two rungs' players."""
        return abs(self.rating(a.game, a.name)[0] - self.rating(b.game, b.name)[0])

    def may_meet(self, a: Rung, b: Rung, waiting: int, now: float) -> bool:
        """True when ``a`` and ``b`` may be paired at ``now`` whatever their ratings (``waiting``: how many rungs wait,
        these two included): not two anchors, a game that would be rated (:attr:`unrated`), and not a bot's previous
        opponent again while anybody else waits for it. Only a bot's own last opponent counts (an anchor plays
        whoever comes: it has no say), so a bot alone with anchors goes round them rather than stopping."""
        a_anchor, b_anchor = anchor_level(a.name, a.game) is not None, anchor_level(b.name, b.game) is not None
        if a_anchor and b_anchor:
            return False
        if self.unrated is not None and self.unrated(a.game, (a.name, b.name), now) is not None:
            return False
        if waiting <= 2:
            return True
        return not ((a.last_opponent == b.name and not a_anchor) or (b.last_opponent == a.name and not b_anchor))

    def long_waiter(self, rung: Rung, now: float) -> bool:
        """True when ``rung``, a bot, has waited ``WINDOW_OPEN`` seconds: anybody it may meet is paired with it."""
        assert rung.since is not None
        return now - rung.since >= WINDOW_OPEN and anchor_level(rung.name, rung.game) is None

    def _waiting(self, game: str, ready: Ready) -> list[Rung]:
        return sorted((rung for rung in self.waiting_by_game.get(game, {}).values() if ready(rung.name)),
                      key=lambda rung: (rung.since, rung.name))

    def allowance(self, address: str, now: float) -> float:
        """Ladder games the names of ``address`` may start now (infinite without a limit)."""
        if not self.rate or address == "?":
            return math.inf
        tokens, at = self.buckets.get(address, (GAMES_BURST, now))
        return min(GAMES_BURST, tokens + (now - at) * self.rate)

    def _charge(self, address: str, now: float) -> None:
        """One ladder game started by a name of ``address``."""
        allowance = self.allowance(address, now)
        if allowance != math.inf:
            self.buckets[address] = (allowance - 1.0, now)
        if len(self.buckets) > 4 * len(self.rungs) + 64:  # forget the addresses whose allowance is full again
            self.buckets = {key: (tokens, at) for key, (tokens, at) in self.buckets.items()
                            if tokens + (now - at) * self.rate < GAMES_BURST}

    def _able(self, waiting: list[Rung], now: float) -> list[Rung]:
        """The rungs of ``waiting`` whose addresses may start a ladder game now (the others wait as if away)."""
        return [rung for rung in waiting if self.allowance(rung.address, now) >= 1]

    def _refilled(self, waiting: list[Rung], now: float) -> float:
        """When an address of ``waiting`` rungs that may not start a game (or a game between two of its names) now
        may again (inf: no such address)."""
        short = [2.0 - allowance for allowance in (self.allowance(rung.address, now) for rung in waiting)
                 if allowance < 2]
        return now + min(short) / self.rate if short else math.inf

    def pairings(self, game: str, now: float, ready: Ready, most: int = PAIRS_PER_TURN) -> list[tuple[str, str]]:
        """The pairs the rules make of the rungs of ``game`` that wait and are ``ready`` now (each pair marked as
        playing), the longest waiting first: at most ``most`` pairs and ``SCAN_STEPS`` candidates looked at, so one
        call costs a bounded amount of work however many wait (:meth:`next_time` is then at once, and the next call
        goes on from the rung this one stopped at)."""
        waiting = self._able(self._waiting(game, ready), now)
        self.unfinished.discard(game)
        if len(waiting) < 2:
            return []
        search = PairingPass(self, waiting, now)
        pairs: list[tuple[str, str]] = []
        for a in search.rotated(self.resume.pop(game, None)):
            if search.steps >= SCAN_STEPS or len(pairs) >= most:
                self.unfinished.add(game)
                self.resume[game] = (a.since, a.name)
                break
            if not search.alive(a) or not search.may_start(a, 1.0):
                continue
            b = search.closest(a)
            if b is not None:
                search.take(a, b)
                pairs.append((a.name, b.name))
        else:
            if search.left == 2:  # the last two may be each other's last opponents: with nobody else, they meet
                a, b = search.remaining()
                if search.may_start(a, 1.0) and search.acceptable(a, b):
                    search.take(a, b)
                    pairs.append((a.name, b.name))
        for a_name, b_name in pairs:
            self.started(game, (a_name, b_name))
            for name in (a_name, b_name):
                self._charge(self.rungs[(game, name)].address, now)
        self.passes += 1
        self.candidates += search.steps
        return pairs

    def _opens(self, rung: Rung, gap: float) -> float:
        """When ``rung``'s window reaches ``gap`` rating points."""
        assert rung.since is not None
        if anchor_level(rung.name, rung.game) is not None:
            return rung.since
        return rung.since + min(WINDOW_OPEN, max(0.0, (gap - self._start(rung)) / WINDOW_GROWTH))

    def next_time(self, now: float, ready: Ready) -> float | None:
        """When a widening window (or a long wait) will next make a pair of the rungs waiting now, or None (not by
        waiting); at once when the last pairing stopped at its bound. It looks at ``SCAN_STEPS`` pairs at most: past
        that it answers a second from now, never later than the truth, and looks again then."""
        soonest = math.inf
        for game in self.games():
            waiting = self._waiting(game, ready)
            if len(waiting) < 2:
                continue
            if game in self.unfinished:
                return now + EPSILON
            able = self._able(waiting, now)
            soonest = min(soonest, self._soonest(able, now), self._refilled(waiting, now))
        return None if soonest == math.inf else max(soonest, now) + EPSILON

    def _meets(self, a: Rung, b: Rung, count: int, now: float) -> bool:
        """True when ``a`` and ``b`` may meet (``count`` waiting) and their addresses may start the game now."""
        return self.may_meet(a, b, count, now) and (a.address != b.address or self.allowance(a.address, now) >= 2)

    def _soonest(self, waiting: list[Rung], now: float) -> float:
        """When the first pair of ``waiting`` (rungs of one game whose addresses may start a game) will be acceptable,
        by the windows or a long wait."""
        count = len(waiting)
        soonest = math.inf
        for a in waiting:  # the longest waiting bot that may meet anybody is paired once it has waited long
            if anchor_level(a.name, a.game) is None and any(self._meets(a, b, count, now) for b in waiting
                                                            if b is not a):
                assert a.since is not None
                soonest = a.since + WINDOW_OPEN
                break
        order = sorted(waiting, key=lambda rung: self.rating(rung.game, rung.name)[0])
        ratings = [self.rating(rung.game, rung.name)[0] for rung in order]
        steps = 0
        for i, a in enumerate(order):  # each pair once, from its lower-rated side; farther pairs open later
            for j in range(i + 1, len(order)):
                gap = ratings[j] - ratings[i]
                if self._opens(a, gap) >= soonest:
                    break
                steps += 1
                if steps > SCAN_STEPS:
                    soonest = min(soonest, now + 1.0)
                    break
                b = order[j]
                if self._meets(a, b, count, now):
                    soonest = min(soonest, max(self._opens(a, gap), self._opens(b, gap)))
            if steps > SCAN_STEPS:
                break
        self.passes += 1
        self.candidates += steps
        return soonest
