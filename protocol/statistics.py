"""Match statistics, in one place: every figure ``plyhall match`` and the tournaments print.

Pure functions of counts (wins, draws, losses) or a score fraction, in Elo
units of the logistic model, where a rating difference ``D`` gives the
stronger side the expected score ``1 / (1 + 10 ** (-D / 400))``:

``Z95``
    the two-sided 95% quantile of the normal law, the one z-value every
    interval here uses.
``wilson_interval``
    the Wilson score interval of a score fraction (``plyhall match``).
``expected_score`` / ``elo_from_score``
    the logistic Elo curve and its inverse.
``match_stats`` / ``elo_margin`` / ``likelihood_of_superiority``
    one pairing's figures as cutechess-cli prints them after a match: score,
    Elo difference +/- 95% margin, likelihood of superiority (LOS), draw ratio.
``sprt``
    the sequential probability ratio test of cutechess-cli (and fishtest's
    legacy BayesElo SPRT): log-likelihood ratio, bounds and decision.
``format_duration``
    a time left as progress lines print it (a tournament's standings, the
    Connect Four book's generator).

Elo for a whole field of entrants (a maximum-likelihood fit) is the
tournaments' own: ``server.tournament.ratings``.

This module lives in ``protocol`` because both the client (``plyhall match``,
the bots) and the server (tournaments) use it and ``protocol`` is the one package both
may import; it imports nothing else of Plyhall's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist
from typing import Any

Z95 = NormalDist().inv_cdf(0.975)
"""The two-sided 95% quantile of the standard normal law, 1.95996..."""


def finite_or_none(value: float) -> float | None:
    """``value`` for JSON: ``None`` in place of infinities and NaN, which JSON cannot hold."""
    return value if math.isfinite(value) else None


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


def wilson_interval(score: float, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``score`` observed over ``games`` trials.

    A draw counts as half a win. ``(0.0, 1.0)`` when there are no games.
    """
    if games <= 0:
        return 0.0, 1.0
    z2 = z * z
    denominator = 1 + z2 / games
    centre = (score + z2 / (2 * games)) / denominator
    half = z / denominator * math.sqrt(max(score * (1 - score), 0.0) / games + z2 / (4 * games * games))
    return max(0.0, centre - half), min(1.0, centre + half)


def expected_score(diff: float) -> float:
    """Expected score of the side rated ``diff`` Elo above its opponent.

    The logistic Elo curve, E = 1 / (1 + 10^(-D/400)) (Elo 1978; the
    "fundamental formula" BayesElo's documentation starts from).
    """
    return 1.0 / (1.0 + 10.0 ** (-diff / 400.0))


def elo_from_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (0..1); +/-inf at 1 and 0, NaN outside.

    cutechess-cli ``Elo::diff``: -400 * log10(1/p - 1), the inverse of :func:`expected_score`.
    """
    if math.isnan(score) or not 0.0 <= score <= 1.0:
        return math.nan
    if score == 1.0:
        return math.inf
    if score == 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


# ---------------------------------------------------------------------------
# One pairing: Elo difference, margin, LOS (cutechess-cli's Elo class)


@dataclass(frozen=True)
class MatchStats:
    """One side's results against another, with the figures cutechess-cli prints.

    ``elo_diff`` is +inf/-inf after a perfect score either way and NaN with no
    games; ``margin`` is then NaN or inf too (``to_json`` turns those into
    ``None``).
    """

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        for name in ("wins", "draws", "losses"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0, not {value!r}")

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """Points scored: a win 1, a draw 1/2."""
        return self.wins + self.draws / 2.0

    @property
    def score(self) -> float:
        """Score fraction, points per game (NaN with no games)."""
        return self.points / self.games if self.games else math.nan

    @property
    def draw_ratio(self) -> float:
        """Share of games drawn (NaN with no games)."""
        return self.draws / self.games if self.games else math.nan

    @property
    def elo_diff(self) -> float:
        """Elo difference from the score fraction (cutechess-cli ``Elo::diff``)."""
        return elo_from_score(self.score)

    @property
    def margin(self) -> float:
        """Half-width of the 95% interval of :attr:`elo_diff` (cutechess-cli ``Elo::errorMargin``)."""
        return elo_margin(self.wins, self.draws, self.losses)

    @property
    def los(self) -> float:
        """Likelihood of superiority, 0..1 (cutechess-cli ``Elo::LOS`` divided by 100)."""
        return likelihood_of_superiority(self.wins, self.losses)

    def to_json(self) -> dict[str, Any]:
        """Counts and figures as plain JSON values (non-finite numbers as ``None``)."""
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses, "games": self.games,
                "points": self.points, "score": finite_or_none(self.score),
                "elo_diff": finite_or_none(self.elo_diff), "margin": finite_or_none(self.margin),
                "los": finite_or_none(self.los), "draw_ratio": finite_or_none(self.draw_ratio)}

    def describe(self, first: str, second: str) -> str:
        """cutechess-cli's two summary lines, for ``first`` (whose wins these are) against ``second``."""
        score = f"{self.score:.3f}" if self.games else "-"
        return (f"Score of {first} vs {second}: {self.wins} - {self.losses} - {self.draws}  [{score}] {self.games}\n"
                f"Elo difference: {self.elo_diff:.1f} +/- {self.margin:.1f}, LOS: {100 * self.los:.1f} %, "
                f"DrawRatio: {100 * self.draw_ratio:.1f} %")


def match_stats(wins: int, draws: int, losses: int) -> MatchStats:
    """The figures of one side's ``wins``/``draws``/``losses`` against another (see :class:`MatchStats`)."""
    return MatchStats(wins, draws, losses)


def elo_margin(wins: int, draws: int, losses: int, z: float = Z95) -> float:
    """Half-width of the confidence interval of the Elo difference, as cutechess-cli computes it.

    cutechess-cli ``Elo::Elo`` and ``Elo::errorMargin`` (projects/lib/src/elo.cpp):
    mu = w + d/2 (score fraction), per-game variance
    sigma^2 = w(1-mu)^2 + l(0-mu)^2 + d(1/2-mu)^2 with w, d, l the fractions of
    wins, draws and losses, stdev = sigma / sqrt(n); the interval of mu is
    mu +/- z * stdev, mapped through :func:`elo_from_score`, and the margin is
    half its width. cutechess-cli takes z from an approximation of erf^-1
    (1.9572 for 95%); we use the exact quantile 1.95996, so our margins are
    0.14% wider than cutechess-cli's printout.
    """
    n = wins + draws + losses
    if n == 0:
        return math.nan
    w, d, l = wins / n, draws / n, losses / n
    mu = w + d / 2.0
    stdev = math.sqrt(w * (1.0 - mu) ** 2 + l * (0.0 - mu) ** 2 + d * (0.5 - mu) ** 2) / math.sqrt(n)
    return (elo_from_score(mu + z * stdev) - elo_from_score(mu - z * stdev)) / 2.0


def likelihood_of_superiority(wins: int, losses: int) -> float:
    """Probability (0..1) that the side with ``wins`` is the stronger one; draws carry no information.

    cutechess-cli ``Elo::LOS``: 0.5 * (1 + erf((wins - losses) / sqrt(2 * (wins + losses)))),
    the normal approximation of the win-loss difference. With no decisive game it is 0.5
    (cutechess-cli would print NaN).
    """
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


# ---------------------------------------------------------------------------
# SPRT (cutechess-cli's Sprt class, fishtest's legacy BayesElo test)


class SprtStatus(StrEnum):
    """The SPRT decision: H0 accepted, H1 accepted, or play on."""

    CONTINUE = "continue"
    ACCEPT_H0 = "H0"
    ACCEPT_H1 = "H1"


@dataclass(frozen=True)
class SprtResult:
    """The state of an SPRT: the log-likelihood ratio against its bounds, and the decision.

    ``draw_elo`` is the BayesElo draw parameter estimated from the games
    (``None`` while the counts do not allow an estimate).
    """

    llr: float
    lower_bound: float
    upper_bound: float
    status: SprtStatus
    elo0: float
    elo1: float
    alpha: float
    beta: float
    draw_elo: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values; ``status`` is ``"continue"``, ``"H0"`` or ``"H1"``."""
        return {"llr": self.llr, "lower_bound": self.lower_bound, "upper_bound": self.upper_bound,
                "status": self.status.value, "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha,
                "beta": self.beta, "draw_elo": self.draw_elo}

    def describe(self) -> str:
        """One line in cutechess-cli's manner.

        ``SPRT: llr 2.96 (100.5%), lbound -2.94, ubound 2.94 - H1 was accepted``
        """
        share = 100.0 * self.llr / (self.upper_bound if self.llr >= 0 else -self.lower_bound)
        text = f"SPRT: llr {self.llr:.3g} ({share:.1f}%), lbound {self.lower_bound:.3g}, ubound {self.upper_bound:.3g}"
        if self.status is SprtStatus.ACCEPT_H1:
            return text + " - H1 was accepted"
        if self.status is SprtStatus.ACCEPT_H0:
            return text + " - H0 was accepted"
        return text


def _bayes_probabilities(bayes_elo: float, draw_elo: float) -> tuple[float, float, float]:
    """Win, loss and draw probabilities of the BayesElo model (cutechess-cli ``SprtProbability(BayesElo)``).

    P(win) = 1 / (1 + 10^((drawElo - bayesElo)/400)),
    P(loss) = 1 / (1 + 10^((drawElo + bayesElo)/400)), P(draw) = 1 - P(win) - P(loss)
    (Coulom, BayesElo's draw model; fishtest ``stat_util.bayeselo_to_proba``).
    """
    p_win = 1.0 / (1.0 + 10.0 ** ((draw_elo - bayes_elo) / 400.0))
    p_loss = 1.0 / (1.0 + 10.0 ** ((draw_elo + bayes_elo) / 400.0))
    return p_win, p_loss, 1.0 - p_win - p_loss


def sprt(wins: int, draws: int, losses: int, *, elo0: float, elo1: float, alpha: float = 0.05,
         beta: float = 0.05, regularize: bool = True) -> SprtResult:
    """The SPRT of H0: Elo difference = ``elo0`` against H1: = ``elo1``, on one side's results.

    cutechess-cli ``Sprt::status`` (projects/lib/src/sprt.cpp), step by step:

    1. the empirical win/loss/draw frequencies give the BayesElo parameters
       bayesElo = 200 log10(pW/pL * (1-pL)/(1-pW)) and
       drawElo = 200 log10((1-pL)/pL * (1-pW)/pW) (``BayesElo(SprtProbability)``);
    2. the hypotheses, in logistic Elo, are turned into BayesElo by dividing by
       scale = 4x / (1+x)^2 with x = 10^(-drawElo/400) (``BayesElo::scale``);
    3. each hypothesis gives win/loss/draw probabilities (see
       :func:`_bayes_probabilities`) and
       llr = W ln(pW1/pW0) + L ln(pL1/pL0) + D ln(pD1/pD0);
    4. Wald's bounds: lower = ln(beta / (1 - alpha)), upper = ln((1 - beta) / alpha);
       H1 is accepted when llr > upper, H0 when llr < lower.

    cutechess-cli plays on (llr 0) until wins, draws and losses are all non-zero.
    Santorini and the Amazons cannot end in a draw, so by default
    (``regularize=True``) a zero count is replaced by 0.001 when estimating
    drawElo, as fishtest's ``LLRcalc.regularize`` does; with no draws the
    model then has (almost) no draw probability and the test reduces to the
    logistic one on wins and losses. ``regularize=False`` is cutechess-cli's
    behaviour exactly.
    """
    for name, value in (("wins", wins), ("draws", draws), ("losses", losses)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, not {value!r}")
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError(f"alpha and beta must lie strictly between 0 and 1 (got alpha={alpha}, beta={beta})")
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1 (got elo0={elo0}, elo1={elo1})")
    lower = math.log(beta / (1.0 - alpha))
    upper = math.log((1.0 - beta) / alpha)

    def result(llr: float, draw_elo: float | None) -> SprtResult:
        status = SprtStatus.ACCEPT_H1 if llr > upper else SprtStatus.ACCEPT_H0 if llr < lower else SprtStatus.CONTINUE
        return SprtResult(llr, lower, upper, status, elo0, elo1, alpha, beta, draw_elo)

    counts = [float(wins), float(losses), float(draws)]
    if wins + losses == 0 or (min(counts) == 0 and not regularize):
        return result(0.0, None)  # without a decisive game the data says nothing about the difference: play on
    if regularize:
        counts = [c if c > 0 else 1e-3 for c in counts]
    try:
        llr, draw_elo = _llr(wins, draws, losses, counts, elo0, elo1)
    except (ValueError, OverflowError, ZeroDivisionError):  # the model cannot be evaluated on so lopsided a sample
        return result(0.0, None)
    return result(llr, draw_elo)


def _llr(wins: int, draws: int, losses: int, counts: list[float], elo0: float, elo1: float) -> tuple[float, float]:
    """The log-likelihood ratio of :func:`sprt` (steps 1 to 3), and the draw Elo it used."""
    total = sum(counts)
    p_win, p_loss = counts[0] / total, counts[1] / total
    # step 1: drawElo out of sample (the bayesElo of the data is not needed)
    draw_elo = 200.0 * math.log10((1.0 - p_loss) / p_loss * (1.0 - p_win) / p_win)
    # step 2: BayesElo::scale
    x = 10.0 ** (-draw_elo / 400.0)
    scale = 4.0 * x / ((1.0 + x) * (1.0 + x))
    # step 3: probability laws under H0 and H1, and the log-likelihood ratio
    p0 = _bayes_probabilities(elo0 / scale, draw_elo)
    p1 = _bayes_probabilities(elo1 / scale, draw_elo)
    llr = 0.0
    for count, q1, q0 in zip((wins, losses, draws), p1, p0, strict=True):
        if count:  # a count of zero adds nothing (and its probabilities may be ~0)
            llr += count * math.log(q1 / q0)
    return llr, draw_elo
