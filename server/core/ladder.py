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
* two **anchors** never meet (both ratings are pinned: their game would move nothing);
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
    ANCHOR_RATINGS,
    HOUSE_PREFIX,
    PROVISIONAL_DEVIATION,
    Standing,
    anchor_level,
    rateable_name,
)

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
            if level not in known or level not in ANCHOR_RATINGS:
                raise ValueError(f"{game}: unknown level {level[:40]!r}; levels: {', '.join(known)}")
            if (game, level) in anchors:
                raise ValueError(f"{game}: the {level} anchor is given twice")
            anchors.append((game, level))
    return anchors


@dataclass(frozen=True)
class LadderConfig:
    """How the operator set the ladder up: seconds a move per game (the others: ``LADDER_TIMES``), and the house
    bots on it as anchors, as (game, level)."""

    times: dict[str, float] = field(default_factory=dict)
    anchors: tuple[tuple[str, str], ...] = ()


@dataclass
class Rung:
    """A name on the ladder of a game: since when it waits (None while it plays, or until its last result is
    stored), and whom it played last."""

    name: str
    game: str
    since: float | None
    last_opponent: str | None = None


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

    def join(self, name: str, game: str, now: float) -> Rung:
        """Put ``name`` on the ladder of ``game`` (a rung it has already stays as it is)."""
        rung = self.rungs.get((game, name))
        if rung is None:
            rung = self.rungs[(game, name)] = Rung(name, game, now)
        return rung

    def leave(self, name: str, game: str | None = None) -> None:
        """Take ``name`` off the ladder of ``game`` (or of every game)."""
        for key in [key for key in self.rungs if key[1] == name and game in (None, key[0])]:
            del self.rungs[key]

    def leave_waiting(self, name: str) -> None:
        """Take ``name`` off every ladder it waits on; a rung in a game stays, to its end (a player back within its
        grace plays on; one not back is taken off when the result is stored)."""
        for key in [key for key, rung in self.rungs.items() if key[1] == name and rung.since is not None]:
            del self.rungs[key]

    def names(self, game: str) -> set[str]:
        """The names on the ladder of ``game``."""
        return {name for (g, name) in self.rungs if g == game}

    def waiting(self) -> int:
        """Rungs waiting to be paired (for the metrics)."""
        return sum(rung.since is not None for rung in self.rungs.values())

    def describe(self, rung: Rung) -> dict[str, Any]:
        """What a ``seeking`` message says of a ladder rung: its rating and the ladder around it."""
        rating, deviation = self.rating(rung.game, rung.name)
        others = [r for r in self.rungs.values() if r.game == rung.game and r is not rung]
        return {"rating": round(rating, 1), "deviation": round(deviation, 1),
                "provisional": deviation > PROVISIONAL_DEVIATION,
                "waiting": sum(r.since is not None for r in others), "playing": sum(r.since is None for r in others)}

    def seek_json(self, game: str) -> dict[str, Any]:
        """A ladder seek as ``seeking.seek`` shows it."""
        return {**self.settings[game].to_json(), "ladder": True}

    # Ratings ---------------------------------------------------------------------------------------

    def rating(self, game: str, name: str) -> tuple[float, float]:
        """The rating and deviation ``name`` is paired by: pinned for an anchor, a newcomer's when unknown."""
        level = anchor_level(name, game)
        if level is not None:
            return ANCHOR_RATINGS[level], ANCHOR_DEVIATION
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
                rung.since = None
                rung.last_opponent = other

    def ended(self, record: str, game: str, players: Iterable[str]) -> None:
        """A ladder game ended (its result, record ``record``, is being stored): its players wait again once it is."""
        self.resting[record] = (game, tuple(players))

    def stored(self, record: str, now: float) -> list[Rung]:
        """The result of ``record`` is stored: its players' rungs (those still on the ladder) wait from ``now``."""
        game, players = self.resting.pop(record, ("", ()))
        back = [self.rungs[(game, name)] for name in players if (game, name) in self.rungs]
        for rung in back:
            rung.since = now
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

    def may_meet(self, a: Rung, b: Rung, waiting: list[Rung]) -> bool:
        """True when ``a`` and ``b`` may be paired whatever their ratings (``waiting``: every rung waiting): not two
        anchors, and not a bot's previous opponent again while anybody else waits for it. Only a bot's own last
        opponent counts (an anchor plays whoever comes: it has no say), so a bot alone with anchors goes round
        them rather than stopping."""
        if anchor_level(a.name, a.game) is not None and anchor_level(b.name, b.game) is not None:
            return False
        for bot, other in ((a, b), (b, a)):
            if bot.last_opponent == other.name and anchor_level(bot.name, bot.game) is None and any(
                    rung is not bot and rung is not other for rung in waiting):
                return False
        return True

    def _long_waiter(self, rung: Rung, now: float) -> bool:
        """True when ``rung``, a bot, has waited ``WINDOW_OPEN`` seconds: anybody it may meet is paired with it."""
        assert rung.since is not None
        return now - rung.since >= WINDOW_OPEN and anchor_level(rung.name, rung.game) is None

    def _acceptable(self, a: Rung, b: Rung, now: float) -> bool:
        """True when the two ratings are close enough now: within both windows, or one of them has waited long."""
        return (self.gap(a, b) <= min(self.window(a, now), self.window(b, now))
                or self._long_waiter(a, now) or self._long_waiter(b, now))

    def _waiting(self, game: str, ready: Ready) -> list[Rung]:
        return sorted((rung for rung in self.rungs.values() if rung.game == game and rung.since is not None
                       and ready(rung.name)), key=lambda rung: (rung.since, rung.name))

    def pairings(self, game: str, now: float, ready: Ready) -> list[tuple[str, str]]:
        """Every pair the rules make of the rungs of ``game`` that wait and are ``ready`` now (each pair marked as
        playing); the longest waiting first."""
        waiting = self._waiting(game, ready)
        pairs: list[tuple[str, str]] = []
        while len(waiting) >= 2:
            found = self._first_pair(waiting, now)
            if found is None:
                break
            a, b = found
            waiting.remove(a)
            waiting.remove(b)
            self.started(game, (a.name, b.name))
            pairs.append((a.name, b.name))
        return pairs

    def _first_pair(self, waiting: list[Rung], now: float) -> tuple[Rung, Rung] | None:
        """The longest-waiting rung that can be paired now, with its closest acceptable opponent."""
        for a in waiting:
            candidates = [b for b in waiting if b is not a and self.may_meet(a, b, waiting)
                          and self._acceptable(a, b, now)]
            if candidates:
                return a, min(candidates, key=lambda b: (self.gap(a, b), b.since, b.name))
        return None

    def _opens(self, rung: Rung, gap: float) -> float:
        """When ``rung``'s window reaches ``gap`` rating points."""
        assert rung.since is not None
        if anchor_level(rung.name, rung.game) is not None:
            return rung.since
        return rung.since + min(WINDOW_OPEN, max(0.0, (gap - self._start(rung)) / WINDOW_GROWTH))

    def next_time(self, now: float, ready: Ready) -> float | None:
        """When a widening window will next make a pair of the rungs waiting now, or None (not by waiting)."""
        soonest = math.inf
        for game in {rung.game for rung in self.rungs.values()}:
            waiting = self._waiting(game, ready)
            for i, a in enumerate(waiting):
                for b in waiting[i + 1:]:
                    if self.may_meet(a, b, waiting):
                        gap = self.gap(a, b)
                        when = max(self._opens(a, gap), self._opens(b, gap))
                        for bot in (a, b):  # a bot that has waited long is paired whatever the other's window
                            if anchor_level(bot.name, bot.game) is None and bot.since is not None:
                                when = min(when, bot.since + WINDOW_OPEN)
                        soonest = min(soonest, when)
        return None if soonest == math.inf else max(soonest, now) + EPSILON
