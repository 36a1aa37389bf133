"""Standings: ranking, progress and their renderings (text table, crosstable, CSV, JSON).

:func:`compute_standings` turns the list of :class:`~server.tournament.results.ScoredGame`
into a :class:`Standings` value: one :class:`Standing` per entrant, ranked, with
Elo from :func:`~server.tournament.ratings.elo_ratings`; ``to_json`` gives plain
dicts and lists, ``to_text`` the aligned table ``plyhall tournament results``
prints, ``to_csv`` a spreadsheet.

The counting is :mod:`.tally`'s (points, W-D-L, forfeits, byes, crosstable), the
tie-breaks :mod:`.tiebreaks`'. Entrants equal on points are ranked by the
tie-break, then by name; entrants equal on both share a rank number.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.statistics import format_duration

from .ratings import DEFAULT_PRIOR, Rating, elo_ratings
from .results import ScoredGame
from .tally import Crosstable, Scorecard, entrant_names, tally
from .tiebreaks import TIEBREAK_LABELS, TIEBREAKS, tiebreak_value


@dataclass(frozen=True)
class Standing:
    """One entrant's line of the standings (:mod:`.tally` says what each count includes)."""

    rank: int
    name: str
    points: float
    games: int
    played: int
    wins: int
    draws: int
    losses: int
    forfeit_wins: int
    forfeit_losses: int
    byes: int
    tiebreak: float
    elo: float | None
    elo_margin: float | None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"rank": self.rank, "name": self.name, "points": self.points, "games": self.games,
                "played": self.played, "wins": self.wins, "draws": self.draws, "losses": self.losses,
                "forfeit_wins": self.forfeit_wins, "forfeit_losses": self.forfeit_losses, "byes": self.byes,
                "tiebreak": self.tiebreak, "elo": self.elo, "elo_margin": self.elo_margin}


@dataclass(frozen=True)
class Progress:
    """How far the event is: games with a result out of all games, and an estimate of the seconds left."""

    done: int
    total: int
    seconds_left: float | None = None
    forfeits: int = 0  # of the games done, those forfeited (no game played: an entrant never came, or left)

    @property
    def fraction(self) -> float:
        """Share of games done, 0..1 (1 for an event without games)."""
        return self.done / self.total if self.total else 1.0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"done": self.done, "total": self.total, "fraction": self.fraction, "seconds_left": self.seconds_left,
                "forfeits": self.forfeits}

    def words(self) -> str:
        """``6 of 8 games played``, or with forfeits ``6 of 8 games done: 4 played, 2 forfeited``."""
        if not self.forfeits:
            return f"{self.done} of {self.total} games played"
        return f"{self.done} of {self.total} games done: {self.done - self.forfeits} played, {self.forfeits} forfeited"


@dataclass(frozen=True)
class Standings:
    """The ranked standings, crosstable and progress of an event.

    ``crosstable[name][opponent]`` lists ``name``'s results against
    ``opponent`` in round order: ``"1"`` win, ``"="`` draw, ``"0"`` loss,
    ``"+"`` forfeit win, ``"-"`` forfeit loss.
    """

    rows: tuple[Standing, ...]
    crosstable: Crosstable
    tiebreak: str
    progress: Progress | None = None

    def __getitem__(self, name: str) -> Standing:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values: rows, crosstable, tie-break name and progress."""
        return {"tiebreak": self.tiebreak, "rows": [row.to_json() for row in self.rows],
                "crosstable": {name: {opp: list(marks) for opp, marks in row.items()}
                               for name, row in self.crosstable.items()},
                "progress": self.progress.to_json() if self.progress else None}

    def to_text(self) -> str:
        """An aligned table: rank, name, points, games, W-D-L, Elo +/- margin, tie-break (and progress)."""
        header = ["Rank", "Name", "Points", "Games", "W-D-L", "Elo", "+/-", TIEBREAK_LABELS[self.tiebreak]]
        body = []
        for row in self.rows:
            elo = "-" if row.elo is None else f"{round(row.elo):+d}" if round(row.elo) else "0"
            margin = "-" if row.elo_margin is None else f"{row.elo_margin:.0f}"
            tiebreak = "-" if self.tiebreak == "none" else _number(row.tiebreak)
            body.append([str(row.rank), row.name, _number(row.points), str(row.games),
                         f"{row.wins}-{row.draws}-{row.losses}", elo, margin, tiebreak])
        widths = [max(len(line[k]) for line in [header, *body]) for k in range(len(header))]
        left = {1}  # the name column reads best left-aligned; numbers right-aligned
        lines = ["  ".join(cell.ljust(widths[k]) if k in left else cell.rjust(widths[k])
                           for k, cell in enumerate(line)).rstrip() for line in [header, *body]]
        if self.progress is not None:
            text = self.progress.words()
            if self.progress.seconds_left is not None and self.progress.done < self.progress.total:
                text += f", about {format_duration(self.progress.seconds_left)} left"
            lines.append(text)
        return "\n".join(lines)

    def first_place(self) -> str:
        """Who finished first, as a sentence: ``alice wins with 3 points``, or, when rank 1 is shared (equal on
        points and on every tie-break), ``alice and bob share first place with 3 points``."""
        first = [row.name for row in self.rows if row.rank == 1]
        if not first:
            return "nobody finished first: the event had no entrants"
        points = self.rows[0].points
        score = f"{_number(points)} point{'' if points == 1 else 's'}"
        if len(first) == 1:
            return f"{first[0]} wins with {score}"
        names = ", ".join(first[:-1]) + f" and {first[-1]}"
        return f"{names} share first place with {score}"

    def challenger(self, name: str) -> str:
        """A gauntlet's result, as a sentence: its challenger ``name``'s score against the field (it plays every game,
        the others a pairing each: its 3 points of 10 games outranked an opponent's 2 of 2)."""
        row = self[name]
        share = f" ({100 * row.points / row.games:.0f}%)" if row.games else ""
        return (f"{name}, the gauntlet's challenger, scores {_number(row.points)} of {row.games} game"
                f"{'' if row.games == 1 else 's'}{share} against the field")

    def to_csv(self) -> str:
        """The rows as CSV with a header line (Elo blank when unknown)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        fields = ["rank", "name", "points", "games", "played", "wins", "draws", "losses", "forfeit_wins",
                  "forfeit_losses", "byes", "elo", "elo_margin", self.tiebreak]
        writer.writerow(fields)
        for row in self.rows:
            data = row.to_json()
            data[self.tiebreak] = data.pop("tiebreak")
            for key in ("elo", "elo_margin"):
                data[key] = None if data[key] is None else round(data[key], 1)
            writer.writerow(["" if data[f] is None else data[f] for f in fields])
        return out.getvalue()

    def crosstable_text(self) -> str:
        """The crosstable as an aligned grid, entrants in rank order, numbered columns."""
        names = [row.name for row in self.rows]
        cells = [[" ".join(self.crosstable[a].get(b, [])) if a != b else "*" for b in names] for a in names]
        width = max([len(str(len(names)))] + [len(c) for line in cells for c in line])
        name_width = max(len(n) for n in names)
        head = " " * (len(str(len(names))) + 2 + name_width) + "  " + "  ".join(
            str(k + 1).rjust(width) for k in range(len(names)))
        lines = [head.rstrip()]
        for k, (name, line) in enumerate(zip(names, cells, strict=True)):
            label = f"{str(k + 1).rjust(len(str(len(names))))}. {name.ljust(name_width)}"
            lines.append((label + "  " + "  ".join(c.rjust(width) for c in line)).rstrip())
        return "\n".join(lines)


def _number(value: float) -> str:
    """Points as people write them: ``5``, ``5.5``, ``20.25``."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def compute_standings(results: Iterable[ScoredGame], entrants: Sequence[str] = (), *,
                      tiebreak: str = "sonneborn-berger", total_games: int | None = None,
                      concurrency: int = 1, running_elapsed: Sequence[float] = (),
                      prior: float = DEFAULT_PRIOR, estimate: bool = True, by_share: bool = False) -> Standings:
    """The standings after ``results``.

    ``entrants`` lists everyone in the event (those without a result yet get a
    line too); empty, the entrants are those named in the results. A result
    naming someone outside a non-empty ``entrants`` raises ``ValueError``.
    ``tiebreak`` is one of ``TIEBREAKS`` (``default_tiebreak(format)``).
    With ``total_games`` (``Schedule.total_games``) the standings carry a
    :class:`Progress`, whose time estimate uses the ``duration`` of finished
    games, ``concurrency`` and the ``running_elapsed`` seconds of the games
    in progress (see :func:`estimate_time_left`); none with ``estimate`` false
    (an event paused or cancelled). ``prior`` goes to
    :func:`~server.tournament.ratings.elo_ratings`. ``by_share`` ranks by the share of the points played for
    (a gauntlet, where the first entrant plays every game and the others one pairing each).
    """
    if tiebreak not in TIEBREAKS:
        raise ValueError(f"unknown tie-break {tiebreak!r}; tie-breaks: {', '.join(TIEBREAKS)}")
    results = sorted(results, key=lambda r: r.round if r.round is not None else 0)  # stable: input order in a round
    names = entrant_names(results, entrants)
    cards, crosstable = tally(results, names)
    points = {n: cards[n].points for n in names}
    tiebreaks = {n: tiebreak_value(tiebreak, n, results, points) for n in names}
    ratings = elo_ratings(((r.white, str(r.black), r.score(r.white)) for r in results if r.is_played), prior=prior)
    rows = _ranked_rows(names, cards, tiebreaks, ratings, by_share)
    progress = None
    if total_games is not None:
        done = sum(1 for r in results if not r.is_bye)
        forfeits = sum(1 for r in results if not r.is_bye and not r.is_played)
        durations = [r.duration for r in results if r.is_played and r.duration is not None]
        seconds = estimate_time_left(durations, total_games - done, concurrency, running_elapsed) if estimate \
            else None
        progress = Progress(done, total_games, seconds, forfeits)
    return Standings(tuple(rows), crosstable, tiebreak, progress)


def _ranked_rows(names: Sequence[str], cards: dict[str, Scorecard], tiebreaks: dict[str, float],
                 ratings: dict[str, Rating], by_share: bool = False) -> list[Standing]:
    """The standings' lines: by points (``by_share``: their share of the games, then points), then tie-break, then
    name; equal on those, a rank is shared."""
    def share(name: str) -> float:
        return cards[name].points / cards[name].games if by_share and cards[name].games else 0.0

    order = sorted(names, key=lambda n: (-share(n), -cards[n].points, -tiebreaks[n], n))
    rows: list[Standing] = []
    for k, name in enumerate(order):
        card = cards[name]
        tie = rows and (share(rows[-1].name), rows[-1].points, rows[-1].tiebreak) == (
            share(name), card.points, tiebreaks[name])
        rating = ratings.get(name)
        rows.append(Standing(
            rank=rows[-1].rank if tie else k + 1, name=name, points=card.points, games=card.games,
            played=card.played, wins=card.wins, draws=card.draws, losses=card.losses,
            forfeit_wins=card.forfeit_wins, forfeit_losses=card.forfeit_losses, byes=card.byes,
            tiebreak=tiebreaks[name], elo=None if rating is None else rating.elo,
            elo_margin=None if rating is None or not math.isfinite(rating.margin) else rating.margin))
    return rows


def estimate_time_left(durations: Sequence[float], games_left: int, concurrency: int = 1,
                       running_elapsed: Sequence[float] = ()) -> float | None:
    """Seconds until the last game ends, estimated; ``None`` before any game has a duration.

    Each game is expected to last the mean ``d`` of the finished games'
    ``durations``. Of the ``games_left``, those in progress (their elapsed
    times in ``running_elapsed``) still need ``max(d - elapsed, 0)``, the others
    ``d``; ``concurrency`` games run at once, so the estimate is the work left
    divided by the concurrency, but never less than the longest single game
    still to finish.
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a whole number >= 1, not {concurrency!r}")
    if games_left < 0 or len(running_elapsed) > games_left:
        raise ValueError(f"{len(running_elapsed)} games running but only {games_left} left")
    if games_left == 0:
        return 0.0
    if not durations:
        return None
    mean = sum(durations) / len(durations)
    running = [max(mean - elapsed, 0.0) for elapsed in running_elapsed]
    waiting = games_left - len(running)
    work = sum(running) + waiting * mean
    longest = max(running + ([mean] if waiting else []))
    return max(work / concurrency, longest)
