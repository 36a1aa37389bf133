"""The rules of rated play: who is rated, how one rated game moves two ratings, and the replay of them all.

Ratings are Glicko-2 (:mod:`protocol.glicko2`), one per player and game type (time controls share it).
Every rule here is a pure function of the stored rated results taken in the order they were stored, so
that the ratings the server keeps (updated in the same transaction as each result) can be recomputed
from the records at any time and must match them exactly (:func:`replay`; ``plyhall ratings
--recompute`` checks a database).

* **Per-game updates.** Each rated game is a rating period of its own for its two players: both are
  updated at once, each against the other's rating *before* the game, with the pre-game deviation grown
  by the time since that player's previous rated game (``elapsed / RATING_PERIOD`` periods). So ratings
  move after every game, as a bot author watching the leaderboard expects; the price is that the order
  of games matters (Glicko-2's invariance holds within a period, and a period here is one game). The
  order is the order of storing, recorded with each result (its ``seq``).
* **Deviation** stays between ``MIN_DEVIATION`` (so a rating never freezes) and ``MAX_DEVIATION``, and
  grows with inactivity: :func:`current_deviation` is what a leaderboard shows today. A rating is
  **provisional** while that deviation is above ``PROVISIONAL_DEVIATION``.
* **Fair play.** The first ``PAIR_DAILY_LIMIT`` rated games between the same two names within 24 hours
  count fully; each further one counts half as much as the one before, and from the
  ``PAIR_DAILY_LIMIT + PAIR_FADE``-th on not at all (its weight is 0: it is recorded and counted in
  won/drawn/lost, but moves no rating).
* **Played games only.** A game that ended before both players really played (:data:`RATED_PLIES`) is never
  rated, whatever its room says (:func:`too_short`); storage records why with the game.
* **House bots** (names ``house-...``) are never rated, except ladder *anchors*: ``house-LEVEL-GAME``
  (for instance ``house-master-connect4``), whose rating is pinned to what the level was measured at in
  that game (:func:`anchor_rating`, :data:`MEASURED_ANCHORS`) with deviation ``ANCHOR_DEVIATION``: their
  games move only their opponents' ratings.

This module lives in ``protocol`` because the server's core (who is rated), its storage (the update in
the result's transaction) and the tools (the recomputation) all apply the same rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .glicko2 import DEFAULT_DEVIATION, DEFAULT_VOLATILITY, Rating, Result, grown_deviation, update

RATING_PERIOD = 86400.0
"""Seconds in one Glicko-2 rating period: the unit in which a deviation grows with inactivity."""
MIN_DEVIATION = 45.0
"""The smallest deviation a rating keeps, however many games it has (as lichess)."""
MAX_DEVIATION = DEFAULT_DEVIATION
"""A newcomer's deviation, and the most inactivity grows one to."""
PROVISIONAL_DEVIATION = 110.0
"""A rating whose current deviation is above this is provisional (marked ``?`` on the leaderboard)."""
PAIR_DAILY_LIMIT = 20
"""Rated games between the same two names within 24 hours that count fully."""
PAIR_FADE = 4
"""Games past the limit that still count, with weights 1/2, 1/4, ...; later ones count 0."""
PAIR_WINDOW = 86400.0
"""The window, in seconds, of :data:`PAIR_DAILY_LIMIT`."""

RATED_PLIES: dict[str, int] = {"connect4": 4, "magnetic-cave": 4, "amazons": 4, "santorini": 6, "quarto": 5}
"""Moves (plies, both players') a game must have had to be rated: two real moves by each player, as lichess
aborts, unrated, a game with fewer than two moves each. Santorini's two placing moves and Quarto's first move
(only a choice of piece) are not play, so those games need two more, and one more."""
RATED_PLIES_DEFAULT = 4
"""The same for a game type not in :data:`RATED_PLIES`."""

HOUSE_PREFIX = "house-"
ANCHOR_LEVELS: tuple[str, ...] = ("random", "novice", *(f"minimax-{depth}" for depth in range(1, 9)), "master")
"""The house bot levels that may be ladder anchors, weakest first by intent."""
ANCHOR_RATINGS: dict[str, float] = {
    "random": 800.0, "novice": 1000.0,
    "minimax-1": 1100.0, "minimax-2": 1200.0, "minimax-3": 1300.0, "minimax-4": 1400.0,
    "minimax-5": 1500.0, "minimax-6": 1600.0, "minimax-7": 1700.0, "minimax-8": 1800.0,
    "master": 2000.0,
}
"""The convention an anchor is pinned to in a game with no measurement (:data:`MEASURED_ANCHORS` has every game of
ours): points on the scale, the same for every game."""
RANDOM_ANCHOR = 800.0
"""The rating of the ``random`` anchor in every game: the fixed point the measured ratings hang from."""
MAX_ANCHOR_STEP = 400.0
"""The largest step between two adjacent levels that a measurement pins (a 91% score): a level that wins (nearly)
every game of a short run is put this far above the one below; the run cannot tell more."""
UNMEASURED_STEP, MASTER_STEP = 100.0, 200.0
"""The steps above the deepest level measured, by convention: each further minimax depth, and master above
minimax-8."""

# Measured by: nice .venv/bin/python benchmarks/ladder.py --anchors --games 30 --jobs 2
LADDER_SCORES: dict[str, tuple[tuple[float, int], ...]] = {
    "connect4": ((0.067, 30), (0.050, 30), (0.350, 30), (0.483, 30), (0.333, 30)),
    "magnetic-cave": ((0.000, 30), (0.233, 30), (0.033, 30), (0.517, 30)),
    "santorini": ((0.033, 30), (0.033, 30), (0.133, 30)),
    "quarto": ((0.000, 30), (0.483, 30), (0.267, 30)),
    "amazons": ((0.567, 30), (0.000, 30)),
}
"""Each game's ladder as ``benchmarks/ladder.py`` measured it: for random vs novice, novice vs minimax-1, ... (as deep
as it plays that game), the lower level's score (wins and half the draws, over the games) and the games."""
MEASURED_ANCHORS: dict[str, dict[str, float]] = {
    "connect4": {
        "random": 800, "novice": 1200, "minimax-1": 1600, "minimax-2": 1708, "minimax-3": 1720, "minimax-4": 1841,
        "minimax-5": 1941, "minimax-6": 2041, "minimax-7": 2141, "minimax-8": 2241, "master": 2441},
    "magnetic-cave": {
        "random": 800, "novice": 1200, "minimax-1": 1407, "minimax-2": 1807, "minimax-3": 1795, "minimax-4": 1895,
        "minimax-5": 1995, "minimax-6": 2095, "minimax-7": 2195, "minimax-8": 2295, "master": 2495},
    "santorini": {
        "random": 800, "novice": 1200, "minimax-1": 1600, "minimax-2": 1926, "minimax-3": 2026, "minimax-4": 2126,
        "minimax-5": 2226, "minimax-6": 2326, "minimax-7": 2426, "minimax-8": 2526, "master": 2726},
    "quarto": {
        "random": 800, "novice": 1200, "minimax-1": 1212, "minimax-2": 1387, "minimax-3": 1487, "minimax-4": 1587,
        "minimax-5": 1687, "minimax-6": 1787, "minimax-7": 1887, "minimax-8": 1987, "master": 2187},
    "amazons": {
        "random": 800, "novice": 753, "minimax-1": 1153, "minimax-2": 1253, "minimax-3": 1353, "minimax-4": 1453,
        "minimax-5": 1553, "minimax-6": 1653, "minimax-7": 1753, "minimax-8": 1853, "master": 2053},
}
"""What each anchor level is pinned to, per game: :func:`anchors_from_scores` of :data:`LADDER_SCORES` (random = 800
in every game, each level from the one below by its score against it; docs/RATINGS.md, "Anchors"), up to the
deepest level measured; the deeper minimax levels and master are spaced by convention above it, not measured.
Changing a value changes what ``plyhall ratings --recompute`` computes for a database with games against that
anchor (its stored ratings were made with the old value)."""
ANCHOR_DEVIATION = 50.0
"""The deviation an anchor is pinned to (an established rating)."""


def anchors_from_scores(scores: Iterable[tuple[float, int]]) -> dict[str, float]:
    """Every anchor level's rating in one game from the scores of its ladder (random vs novice, novice vs minimax-1,
    ... as far as measured: the lower level's score and the games): random at :data:`RANDOM_ANCHOR`, each level
    above the one below by the Elo difference of that score (kept half a game from 0 and 1, the step within
    :data:`MAX_ANCHOR_STEP` either way, rounded), the levels above the deepest measured by the steps of convention."""
    measured = list(scores)
    ratings = {ANCHOR_LEVELS[0]: RANDOM_ANCHOR}
    for index, level in enumerate(ANCHOR_LEVELS[1:]):
        if index < len(measured):
            score, games = measured[index]
            kept = min(max(score, 0.5 / games), 1 - 0.5 / games)
            step = max(-MAX_ANCHOR_STEP, min(MAX_ANCHOR_STEP, 400.0 * math.log10(1.0 / kept - 1.0)))
        else:
            step = MASTER_STEP if level == "master" else UNMEASURED_STEP
        ratings[level] = float(round(ratings[ANCHOR_LEVELS[index]] + step))
    return ratings


def anchor_rating(level: str, game: str) -> float:
    """The rating the anchor of ``level`` is pinned to in ``game`` (:data:`MEASURED_ANCHORS`; the convention of
    :data:`ANCHOR_RATINGS` for a game with no measurement)."""
    return MEASURED_ANCHORS.get(game, ANCHOR_RATINGS)[level]


_ANCHOR = re.compile(r"^house-(random|novice|master|minimax-[1-8])-([a-z0-9][a-z0-9-]*)$")


def anchor_name(level: str, game: str) -> str:
    """The name of the ladder anchor of ``level`` for ``game``: ``house-LEVEL-GAME``."""
    if level not in ANCHOR_LEVELS:
        raise ValueError(f"unknown anchor level {level[:40]!r}; levels: {', '.join(ANCHOR_LEVELS)}")
    return f"{HOUSE_PREFIX}{level}-{game}"


def anchor_level(name: str, game: str) -> str | None:
    """The level of ``name`` when it is the ladder anchor for ``game``, else None."""
    found = _ANCHOR.match(name)
    return found.group(1) if found and found.group(2) == game else None


def rateable_name(name: str, game: str, claimed: bool) -> bool:
    """True when ``name`` may play rated games of ``game``: a claimed name that is not a house bot's, or an anchor."""
    if name.startswith(HOUSE_PREFIX):
        return anchor_level(name, game) is not None
    return claimed


def too_short(game: str, plies: int) -> str | None:
    """Why a game of ``game`` that ended after ``plies`` moves is not rated (it ended before both players had really
    played: :data:`RATED_PLIES`), or None when it was long enough."""
    needed = RATED_PLIES.get(game, RATED_PLIES_DEFAULT)
    if plies >= needed:
        return None
    return (f"too short to rate: {plies} move{'s' * (plies != 1)} played, and a {game} game is rated from its "
            f"{needed}th move on (two real moves by each player)")


def score_of(winner: int | None) -> float:
    """Seat 0's score in a game won by seat ``winner`` (None: a draw)."""
    return 0.5 if winner is None else 1.0 if winner == 0 else 0.0


def pair_weight(earlier: int) -> float:
    """The weight of a rated game between two names that played ``earlier`` rated games of the same game type
    in the 24 hours before it."""
    past = earlier - PAIR_DAILY_LIMIT + 1
    if past <= 0:
        return 1.0
    return 0.5 ** past if past <= PAIR_FADE else 0.0


@dataclass(frozen=True)
class Standing:
    """A player's rating in one game type, with its games: what the leaderboard shows."""

    rating: Rating = field(default_factory=Rating)
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    last_played: float | None = None

    def deviation_at(self, now: float) -> float:
        """The deviation as of ``now``: grown by the time since the last game."""
        return current_deviation(self.rating, self.last_played, now)

    def to_json(self, now: float, pinned: bool = False) -> dict[str, Any]:
        """The standing as the HTTP API shows it: the deviation as of ``now`` (as stored when ``pinned``: an
        anchor's)."""
        deviation = self.rating.deviation if pinned else self.deviation_at(now)
        return {"rating": round(self.rating.rating, 1), "deviation": round(deviation, 1),
                "volatility": round(self.rating.volatility, 6), "games": self.games, "wins": self.wins,
                "draws": self.draws, "losses": self.losses, "last_played": self.last_played,
                "provisional": deviation > PROVISIONAL_DEVIATION}


def current_deviation(rating: Rating, last_played: float | None, now: float) -> float:
    """``rating``'s deviation ``now``, grown with inactivity since ``last_played``, within the bounds."""
    if last_played is None:
        return rating.deviation
    return grown_deviation(rating, (now - last_played) / RATING_PERIOD, MAX_DEVIATION)


def anchor_standing(level: str, game: str, prior: Standing | None) -> Standing:
    """The pinned rating of ``game``'s anchor of ``level``, with its games so far (``prior``)."""
    pinned = Rating(anchor_rating(level, game), ANCHOR_DEVIATION, DEFAULT_VOLATILITY)
    return replace(prior or Standing(), rating=pinned)


@dataclass(frozen=True)
class RatedGame:
    """A rated result as stored: the game, its type, the two names (seat 0 first), the winner's seat (None: a
    draw), when it ended, and the weight the server capped it at (1: a full game)."""

    game_id: str
    game: str
    players: tuple[str, str]
    winner: int | None
    played_at: float
    cap: float = 1.0  # the most this game may count (the server's rules of rated play may count it less: its weight)


@dataclass(frozen=True)
class RatingChange:
    """What one rated game did: its weight and each seat's standing after it, and the rating change."""

    game_id: str
    weight: float
    after: tuple[Standing, Standing]
    change: tuple[float, float]


def _effective(standing: Standing | None, anchor: str | None, game: str, played_at: float) -> Rating:
    """The rating an opponent meets in ``game``: pinned for an anchor, else with the deviation grown until
    ``played_at``."""
    if anchor is not None:
        return anchor_standing(anchor, game, standing).rating
    if standing is None:
        return Rating()
    grown = current_deviation(standing.rating, standing.last_played, played_at)
    return Rating(standing.rating.rating, grown, standing.rating.volatility)


def _counted(standing: Standing, score: float, played_at: float) -> Standing:
    return replace(standing, games=standing.games + 1, wins=standing.wins + (score == 1.0),
                   draws=standing.draws + (score == 0.5), losses=standing.losses + (score == 0.0),
                   last_played=played_at)


def rate(game: RatedGame, priors: tuple[Standing | None, Standing | None], earlier_pair_games: int) -> RatingChange:
    """One rated game: both players' standings after it, from their standings before (None: a first rated game of
    this type) and the number of rated games the two played in the 24 hours before (fair play)."""
    weight = pair_weight(earlier_pair_games) * game.cap
    score0 = score_of(game.winner)
    anchors = (anchor_level(game.players[0], game.game), anchor_level(game.players[1], game.game))
    met = (_effective(priors[0], anchors[0], game.game, game.played_at),
           _effective(priors[1], anchors[1], game.game, game.played_at))
    after: list[Standing] = []
    changes: list[float] = []
    for seat in (0, 1):
        prior = priors[seat]
        score = score0 if seat == 0 else 1.0 - score0
        anchor = anchors[seat]
        if anchor is not None:
            standing = anchor_standing(anchor, game.game, prior)
        else:
            base = prior or Standing()
            periods = 0.0 if base.last_played is None else (game.played_at - base.last_played) / RATING_PERIOD
            new = update(base.rating, [Result(met[1 - seat], score, weight)], periods, floor=MIN_DEVIATION,
                         ceiling=MAX_DEVIATION)
            standing = replace(base, rating=new)
        before = standing.rating.rating if anchor is not None else (prior or Standing()).rating.rating
        after.append(_counted(standing, score, game.played_at))
        changes.append(standing.rating.rating - before)
    return RatingChange(game.game_id, weight, (after[0], after[1]), (changes[0], changes[1]))


@dataclass
class Book:
    """Every standing and the recent games of every pair, as the rated results are replayed in order."""

    standings: dict[tuple[str, str], Standing] = field(default_factory=dict)  # (game, name) -> standing
    pair_games: dict[tuple[str, frozenset[str]], list[float]] = field(default_factory=dict)  # -> when they played

    def earlier(self, game: RatedGame) -> int:
        """Rated games of the same type between ``game``'s two players in the 24 hours before it."""
        since = game.played_at - PAIR_WINDOW
        return sum(1 for at in self.pair_games.get((game.game, frozenset(game.players)), ()) if at > since)

    def add(self, game: RatedGame) -> RatingChange:
        """Rate ``game`` after every game added before it."""
        keys = ((game.game, game.players[0]), (game.game, game.players[1]))
        change = rate(game, (self.standings.get(keys[0]), self.standings.get(keys[1])), self.earlier(game))
        self.standings[keys[0]], self.standings[keys[1]] = change.after
        self.pair_games.setdefault((game.game, frozenset(game.players)), []).append(game.played_at)
        return change


def replay(games: Iterable[RatedGame]) -> tuple[dict[tuple[str, str], Standing], list[RatingChange]]:
    """Every standing, and every game's change, from the rated results in the order they were stored."""
    book = Book()
    changes = [book.add(game) for game in games]
    return book.standings, changes


def leaderboard_json(entries: Iterable[tuple[str, Standing, bool]], now: float) -> list[dict[str, Any]]:
    """A leaderboard as the HTTP API and ``plyhall ratings`` show it: (name, standing, is an anchor) rows, the
    established ratings first and then the provisional ones (a name with one lucky win is no leader), each highest
    rating first, ranked 1, 2, ... (equal ratings share a rank), deviations as of ``now``."""
    shown = [(name, standing, anchor, standing.to_json(now, pinned=anchor)) for name, standing, anchor in entries]
    rows: list[dict[str, Any]] = []
    for name, standing, anchor, figures in sorted(shown, key=lambda e: (e[3]["provisional"], -e[1].rating.rating,
                                                                         e[0])):
        rank = len(rows) + 1
        if rows and (rows[-1]["rating_exact"], rows[-1]["provisional"]) == (standing.rating.rating,
                                                                            figures["provisional"]):
            rank = rows[-1]["rank"]
        rows.append({"rank": rank, "name": name, **figures, "anchor": anchor, "rating_exact": standing.rating.rating})
    for row in rows:
        del row["rating_exact"]
    return rows
