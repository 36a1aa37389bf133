"""What a match's games add up to: each game (:class:`MatchGame`), the wins, losses and draws of a side
(:class:`Tally`), the SPRT a match may stop on (:class:`MatchSprt`) and the whole result with the summary
``plyhall match`` prints (:class:`MatchResult`); the games are played by :mod:`client.runner.match`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.statistics import SPRT_MODELS, SprtModel, SprtResult, SprtStatus, pentanomial, sprt_pairs, wilson_interval
from protocol.wording import counted


@dataclass(frozen=True)
class MatchGame:
    """How one game of a match went.

    ``a_seat`` is level A's seat (seat 0 moves first); ``winner`` is ``"A"``,
    ``"B"`` or ``None`` for a draw. ``longest_think`` and ``over_time`` hold
    A's figure then B's: the longest time one move took, in seconds, and how
    many moves took longer than the time per move. ``moves`` is the whole
    game in notation, the first ``opening_plies`` of them random.
    """

    index: int
    a_seat: int
    winner: str | None
    reason: str
    plies: int
    longest_think: tuple[float, float]
    over_time: tuple[int, int]
    moves: tuple[str, ...] = ()
    opening_plies: int = 0

    @property
    def first_player(self) -> str:
        """``"A"`` or ``"B"``: who moved first in this game."""
        return "A" if self.a_seat == 0 else "B"


@dataclass(frozen=True)
class Tally:
    """Wins, losses and draws of one side over some games."""

    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        """Number of games counted."""
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> float:
        """(wins + draws / 2) / games; 0 when no game was counted."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0


@dataclass(frozen=True)
class MatchSprt:
    """The SPRT a match may stop on: H0 Elo = ``elo0`` against H1 Elo = ``elo1`` for A, on its colour-swapped
    pairs of games, in the ``normalized`` (default) or ``logistic`` Elo model."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = SprtModel.NORMALIZED.value

    HELP = "elo0=E,elo1=E[,alpha=P,beta=P,model=normalized|logistic], e.g. elo0=0,elo1=20"

    def __post_init__(self) -> None:
        if self.model not in (SprtModel.NORMALIZED, SprtModel.LOGISTIC):
            raise ValueError(f"the SPRT model of a match is normalized or logistic, not {self.model!r}")
        self.test((0, 0, 0, 0, 0))  # ValueError naming a bad bound, alpha or beta

    @classmethod
    def parse(cls, text: str) -> MatchSprt:
        """From ``elo0=0,elo1=20,alpha=0.05,beta=0.05,model=normalized`` (alpha, beta, model optional); ValueError
        saying what is wrong (without the flag's name: ``plyhall match`` adds it, as argparse does)."""
        values: dict[str, Any] = {}
        for item in text.split(","):
            key, equals, value = (part.strip() for part in item.partition("="))
            if not equals or key not in ("elo0", "elo1", "alpha", "beta", "model") or key in values:
                raise ValueError(f"{text!r} is not a test: use {cls.HELP}")
            try:
                values[key] = value if key == "model" else float(value)
            except ValueError:
                raise ValueError(f"{key} must be a number, not {value!r}") from None
        if not {"elo0", "elo1"} <= set(values):
            raise ValueError(f"a test needs elo0 and elo1: {cls.HELP}")
        if values.get("model", SprtModel.NORMALIZED.value) not in SPRT_MODELS:
            raise ValueError(f"model is normalized or logistic, not {values['model']!r}")
        return cls(**values)

    def test(self, counts: tuple[int, ...]) -> SprtResult:
        """The test on A's pentanomial ``counts`` (see :meth:`MatchResult.pair_counts`)."""
        return sprt_pairs(counts, elo0=self.elo0, elo1=self.elo1, alpha=self.alpha, beta=self.beta,
                          model=self.model)


@dataclass
class MatchResult:
    """The games of a match between level A and level B, and their totals."""

    game_id: str
    level_a: str
    level_b: str
    seed: int
    planned: int
    time_per_move: float | None = None
    opening_plies: int = 0
    records: list[MatchGame] = field(default_factory=list)
    sprt: SprtResult | None = None  # the SPRT's state after the last game, when the match has one

    def pair_counts(self) -> tuple[int, int, int, int, int]:
        """A's colour-swapped pairs (games 2k and 2k+1) as pentanomial counts (LL, LD, LW+DD, DW, WW), over the
        pairs in order up to the first one not complete: the same whatever order workers finish games in."""
        by_index = {record.index: record for record in self.records}
        points = []
        while (first := by_index.get(2 * len(points))) and (second := by_index.get(2 * len(points) + 1)):
            points.append(sum(1.0 if r.winner == "A" else 0.5 if r.winner is None else 0.0 for r in (first, second)))
        return pentanomial(points)

    def _tally(self, side: str, keep: Callable[[MatchGame], bool] = lambda record: True) -> Tally:
        wins = losses = draws = 0
        for record in self.records:
            if not keep(record):
                continue
            if record.winner is None:
                draws += 1
            elif record.winner == side:
                wins += 1
            else:
                losses += 1
        return Tally(wins, losses, draws)

    @property
    def a(self) -> Tally:
        """Level A's results over all games."""
        return self._tally("A")

    @property
    def b(self) -> Tally:
        """Level B's results over all games."""
        return self._tally("B")

    @property
    def a_first(self) -> Tally:
        """Level A's results in the games where A moved first."""
        return self._tally("A", lambda record: record.first_player == "A")

    @property
    def a_second(self) -> Tally:
        """Level A's results in the games where B moved first."""
        return self._tally("A", lambda record: record.first_player == "B")

    @property
    def first_player(self) -> Tally:
        """Results of whoever moved first, over all games."""
        wins = sum(1 for r in self.records if r.winner is not None and r.winner == r.first_player)
        draws = sum(1 for r in self.records if r.winner is None)
        return Tally(wins, len(self.records) - wins - draws, draws)

    @property
    def second_player(self) -> Tally:
        """Results of whoever moved second, over all games."""
        first = self.first_player
        return Tally(first.losses, first.wins, first.draws)

    @property
    def a_score(self) -> float:
        """A's score, (wins + draws / 2) / games."""
        return self.a.score

    def distinct_games(self) -> int:
        """How many of the games differ in at least one move.

        Bots that search deterministically play the same two games over and
        over; then the games are not independent trials and the interval
        overstates what the match shows. Random openings fix that.
        """
        return len({record.moves for record in self.records})

    def a_interval(self) -> tuple[float, float]:
        """The 95% Wilson score interval of A's score."""
        return wilson_interval(self.a.score, self.a.games)

    def table(self) -> str:
        """The summary a person reads at the end of ``plyhall match``."""
        rows = [
            (f"A  {self.level_a}", self.a),
            (f"B  {self.level_b}", self.b),
            ("A moving first", self.a_first),
            ("A moving second", self.a_second),
            ("first player", self.first_player),
            ("second player", self.second_player),
        ]
        width = max(len(name) for name, _ in rows) + 2
        lines = [
            f"{self.game_id}: A = {self.level_a}, B = {self.level_b}, "
            f"{counted(len(self.records), 'game')}, seed {self.seed}",
            "",
            f"{'':<{width}}{'games':>6}{'wins':>7}{'losses':>8}{'draws':>7}{'score':>8}",
        ]
        for name, tally in rows:
            lines.append(
                f"{name:<{width}}{tally.games:>6}{tally.wins:>7}{tally.losses:>8}{tally.draws:>7}"
                f"{tally.score:>8.3f}"
            )
        low, high = self.a_interval()
        lines += [
            "",
            f"A's score {self.a_score:.3f}, 95% interval {low:.3f} to {high:.3f} "
            "(Wilson score interval; a draw counts half a win)",
        ]
        if self.records:
            lines.append(f"distinct games: {self.distinct_games()} of {len(self.records)}")
            if self.opening_plies:
                lines[-1] += (
                    f" (each pair of games, one per seating, starts with the same "
                    f"{counted(self.opening_plies, 'random move')})"
                )
            longest = [max(r.longest_think[side] for r in self.records) for side in (0, 1)]
            lines.append(f"longest move: A {longest[0]:.2f} s, B {longest[1]:.2f} s")
        if self.time_per_move is not None:
            over = [sum(r.over_time[side] for r in self.records) for side in (0, 1)]
            lines.append(f"moves over {self.time_per_move:g} s: A {over[0]}, B {over[1]} (not forfeited)")
        if self.sprt is not None:
            lines.append(self.sprt.describe())
            if self.sprt.status is not SprtStatus.CONTINUE:
                lines.append(f"stopped after {len(self.records)} of at most {self.planned} games: "
                             f"{self.sprt.status.value} accepted")
        return "\n".join(lines)
