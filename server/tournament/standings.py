"""Standings: points, W-D-L, crosstable, tie-breaks, ranking, progress, and their renderings.

:func:`compute_standings` turns the list of :class:`~server.tournament.results.GameResult`
into a :class:`Standings` value: one :class:`Standing` per entrant, ranked, with
Elo from :func:`~server.tournament.ratings.elo_ratings`; ``to_json`` gives plain
dicts and lists, ``to_text`` the aligned table ``plyhall tournament results``
prints, ``to_csv`` a spreadsheet.

Scoring: a win is 1 point, a draw 1/2, a loss 0. A forfeit scores a win for
the present entrant and a loss for the absent one (both lose a double
forfeit, ``0-0``); a bye game slot scores a win. W-D-L and ``games`` count
every scored game, forfeits and byes included (so points = W + D/2);
``played`` counts only the games actually played, the ones Elo and SPRT use.

Tie-breaks (``TIEBREAKS``), the usual ones of the FIDE Handbook's tie-break regulations,
computed from final points:

``sonneborn-berger``
    the sum, over the entrant's games, of its score in the game times the
    opponent's points: beating strong entrants counts more (round robins).
``buchholz``
    the sum of the opponents' points, one term per meeting (a round's
    pairing, or each game when results carry no round) (Swiss).
``median-buchholz``
    Buchholz without its highest and lowest terms (when there are at least 3).

Forfeited games count in the tie-breaks as their result; a bye has no
opponent and adds nothing. Entrants equal on points are ranked by the
tie-break, then by name; entrants equal on both share a rank number.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .ratings import DEFAULT_PRIOR, MatchStats, elo_ratings
from .results import GameResult

TIEBREAKS: dict[str, str] = {
    "sonneborn-berger": "sum of (score x opponent's points) over the games",
    "buchholz": "sum of the opponents' points",
    "median-buchholz": "Buchholz without the highest and lowest opponent",
    "none": "no tie-break: equal points share a rank",
}
"""Tie-break name -> description."""

TIEBREAK_LABELS = {"sonneborn-berger": "SB", "buchholz": "Buch", "median-buchholz": "MBuch", "none": "-"}


def default_tiebreak(format: str) -> str:
    """The usual tie-break of a tournament format: Buchholz for swiss, Sonneborn-Berger otherwise."""
    return "buchholz" if format == "swiss" else "sonneborn-berger"


@dataclass(frozen=True)
class Standing:
    """One entrant's line of the standings (see the module docstring for what each count includes)."""

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

    @property
    def fraction(self) -> float:
        """Share of games done, 0..1 (1 for an event without games)."""
        return self.done / self.total if self.total else 1.0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"done": self.done, "total": self.total, "fraction": self.fraction, "seconds_left": self.seconds_left}


@dataclass(frozen=True)
class Standings:
    """The ranked standings, crosstable and progress of an event.

    ``crosstable[name][opponent]`` lists ``name``'s results against
    ``opponent`` in round order: ``"1"`` win, ``"="`` draw, ``"0"`` loss,
    ``"+"`` forfeit win, ``"-"`` forfeit loss.
    """

    rows: tuple[Standing, ...]
    crosstable: dict[str, dict[str, list[str]]]
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
            text = f"{self.progress.done} of {self.progress.total} games played"
            if self.progress.seconds_left is not None and self.progress.done < self.progress.total:
                text += f", about {format_duration(self.progress.seconds_left)} left"
            lines.append(text)
        return "\n".join(lines)

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


def format_duration(seconds: float) -> str:
    """``"2h 05m"``, ``"12m 30s"`` or ``"45s"``."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def _mark(result: GameResult, name: str) -> str:
    points = result.score(name)
    if result.forfeit:
        return "+" if points == 1.0 else "-"
    return {1.0: "1", 0.5: "=", 0.0: "0"}[points]


def compute_standings(results: Iterable[GameResult], entrants: Sequence[str] = (), *,
                      tiebreak: str = "sonneborn-berger", total_games: int | None = None,
                      concurrency: int = 1, running_elapsed: Sequence[float] = (),
                      prior: float = DEFAULT_PRIOR) -> Standings:
    """The standings after ``results``.

    ``entrants`` lists everyone in the event (those without a result yet get a
    line too); empty, the entrants are those named in the results. A result
    naming someone outside a non-empty ``entrants`` raises ``ValueError``.
    ``tiebreak`` is one of ``TIEBREAKS`` (``default_tiebreak(format)``).
    With ``total_games`` (``Schedule.total_games``) the standings carry a
    :class:`Progress`, whose time estimate uses the ``duration`` of finished
    games, ``concurrency`` and the ``running_elapsed`` seconds of the games
    in progress (see :func:`estimate_time_left`). ``prior`` goes to
    :func:`~server.tournament.ratings.elo_ratings`.
    """
    if tiebreak not in TIEBREAKS:
        raise ValueError(f"unknown tie-break {tiebreak!r}; tie-breaks: {', '.join(TIEBREAKS)}")
    results = sorted(results, key=lambda r: r.round if r.round is not None else 0)  # stable: input order in a round
    names = list(entrants)
    if names:
        known = set(names)
        strangers = sorted({p for r in results for p in r.players if p not in known})
        if strangers:
            raise ValueError(f"results name entrants who are not in the event: {', '.join(strangers)}")
    else:
        for r in results:
            for p in r.players:
                if p not in names:
                    names.append(p)

    tally: dict[str, dict[str, float]] = {n: defaultdict(float) for n in names}
    crosstable: dict[str, dict[str, list[str]]] = {n: {} for n in names}
    for r in results:
        for name in r.players:
            points = r.score(name)
            t = tally[name]
            t["points"] += points
            t["games"] += 1
            t["wins" if points == 1.0 else "draws" if points == 0.5 else "losses"] += 1
            if r.is_bye:
                t["byes"] += 1
            elif r.forfeit:
                t["forfeit_wins" if points == 1.0 else "forfeit_losses"] += 1
                crosstable[name].setdefault(str(r.opponent(name)), []).append(_mark(r, name))
            else:
                t["played"] += 1
                crosstable[name].setdefault(str(r.opponent(name)), []).append(_mark(r, name))

    points = {n: tally[n]["points"] for n in names}
    tiebreaks = {n: _tiebreak(tiebreak, n, results, points) for n in names}
    ratings = elo_ratings(((r.white, str(r.black), r.score(r.white)) for r in results if r.is_played), prior=prior)

    order = sorted(names, key=lambda n: (-points[n], -tiebreaks[n], n))
    rows: list[Standing] = []
    for k, name in enumerate(order):
        tie = rows and (rows[-1].points, rows[-1].tiebreak) == (points[name], tiebreaks[name])
        t = tally[name]
        rating = ratings.get(name)
        rows.append(Standing(
            rank=rows[-1].rank if tie else k + 1, name=name, points=points[name], games=int(t["games"]),
            played=int(t["played"]), wins=int(t["wins"]), draws=int(t["draws"]), losses=int(t["losses"]),
            forfeit_wins=int(t["forfeit_wins"]), forfeit_losses=int(t["forfeit_losses"]), byes=int(t["byes"]),
            tiebreak=tiebreaks[name], elo=None if rating is None else rating.elo,
            elo_margin=None if rating is None or not math.isfinite(rating.margin) else rating.margin))

    progress = None
    if total_games is not None:
        done = sum(1 for r in results if not r.is_bye)
        durations = [r.duration for r in results if r.is_played and r.duration is not None]
        seconds = estimate_time_left(durations, total_games - done, concurrency, running_elapsed)
        progress = Progress(done, total_games, seconds)
    return Standings(tuple(rows), crosstable, tiebreak, progress)


def _tiebreak(kind: str, name: str, results: Sequence[GameResult], points: dict[str, float]) -> float:
    if kind == "none":
        return 0.0
    if kind == "sonneborn-berger":
        # Sonneborn-Berger (FIDE Handbook, tie-break regulations): sum of (result x opponent's final score)
        return sum(r.score(name) * points[str(r.opponent(name))]
                   for r in results if name in r.players and not r.is_bye)
    meetings: dict[Any, float] = {}
    for k, r in enumerate(results):
        if name in r.players and not r.is_bye:
            opponent = str(r.opponent(name))
            meetings[(r.round, opponent) if r.round is not None else k] = points[opponent]
    terms = sorted(meetings.values())
    if kind == "median-buchholz" and len(terms) >= 3:
        terms = terms[1:-1]  # Median Buchholz (FIDE Handbook, tie-break regulations): cut the best and worst
    return float(sum(terms))


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


def head_to_head(results: Iterable[GameResult], first: str, second: str) -> MatchStats:
    """``first``'s played wins, draws and losses against ``second`` (forfeits left out), with cutechess figures."""
    wins = draws = losses = 0
    for r in results:
        if r.is_played and {r.white, r.black} == {first, second}:
            points = r.score(first)
            if points == 1.0:
                wins += 1
            elif points == 0.5:
                draws += 1
            else:
                losses += 1
    return MatchStats(wins, draws, losses)
