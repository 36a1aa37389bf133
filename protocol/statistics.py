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
``sprt_pairs`` / ``pentanomial`` / ``llr_normalized`` / ``llr_logistic``
    fishtest's generalized SPRT on colour-swapped game pairs (pentanomial
    counts), in the normalized or the logistic Elo model: what tournaments use.
``sprt``
    the legacy sequential probability ratio test of cutechess-cli (BayesElo
    model, single games): log-likelihood ratio, bounds and decision.
``format_duration``
    a time left as progress lines print it (a tournament's standings, the
    Connect Four book's generator).

Elo for a whole field of entrants (a maximum-likelihood fit) is the
tournaments' own: ``server.tournament.ratings``.

This module lives in ``protocol`` because both the client (``plyhall match``,
the bots) and the server (tournaments) use it and ``protocol`` is the one package both
may import; it imports nothing else of Plyhall's. It is long because it is that one place, so that a
match and a tournament can never print two figures for the same games; its parts are independent pure
functions, each read on its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
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
        line = f"Score of {first} vs {second}: {self.wins} - {self.losses} - {self.draws}  [{score}] {self.games}\n"
        if not self.games:
            return line + "no games played yet: no Elo difference"
        if math.isinf(self.elo_diff):  # cutechess-cli prints -inf +/- nan
            elo = (f"Elo difference: none yet ({first if self.elo_diff > 0 else second} won every game; a "
                   "figure needs a game it did not win)")
        elif math.isfinite(self.margin):
            elo = f"Elo difference: {self.elo_diff:.1f} +/- {self.margin:.1f}"
        else:  # the 95% interval reaches past a score of 0 or 1
            elo = f"Elo difference: {self.elo_diff:.1f} +/- ? (too few games for a margin)"
        return line + f"{elo}, LOS: {100 * self.los:.1f} %, DrawRatio: {100 * self.draw_ratio:.1f} %"


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
# SPRT: fishtest's pentanomial GSPRT (the default), and cutechess-cli's BayesElo test


class SprtStatus(StrEnum):
    """The SPRT decision: H0 accepted, H1 accepted, or play on."""

    CONTINUE = "continue"
    ACCEPT_H0 = "H0"
    ACCEPT_H1 = "H1"


class SprtModel(StrEnum):
    """What the SPRT's ``elo0`` and ``elo1`` mean and which data it reads.

    ``normalized`` (the default, fishtest's SPRT since 2020) and ``logistic`` read colour-swapped game pairs
    (the pentanomial counts); ``bayeselo`` is the legacy test of cutechess-cli on single games.
    """

    NORMALIZED = "normalized"
    LOGISTIC = "logistic"
    BAYESELO = "bayeselo"


SPRT_MODELS = tuple(model.value for model in SprtModel)
"""Every SPRT model, as text."""
MIN_SPRT_PAIRS = 10
"""Game pairs (20 games) a pentanomial SPRT needs before it may decide: below them the normal approximation
the GSPRT rests on, and the variance it estimates, are not to be trusted (see :func:`sprt_pairs`)."""
NELO_PER_NT = 800.0 / math.log(10.0)
"""Normalized Elo per unit of normalized t-value, 347.4... (fishtest ``LLRcalc.nelo_divided_by_nt``)."""
PAIR_RESULTS = ("LL", "LD", "LW+DD", "DW", "WW")
"""What each of the five pentanomial counts holds: a pair's score of 0, 1/2, 1, 3/2 or 2 points."""


@dataclass(frozen=True)
class SprtResult:
    """The state of an SPRT: the log-likelihood ratio against its bounds, and the decision.

    ``model`` says how ``elo0``/``elo1`` are read (:class:`SprtModel`); ``pentanomial`` holds the game pairs
    the test counted (``None`` for the BayesElo test); ``draw_elo`` is the BayesElo draw parameter estimated
    from the games (BayesElo test only, ``None`` while the counts do not allow an estimate); ``waiting`` says
    why the test cannot decide yet (empty once it may).
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
    model: str = SprtModel.BAYESELO.value
    pentanomial: tuple[int, ...] | None = None
    waiting: str = ""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values; ``status`` is ``"continue"``, ``"H0"`` or ``"H1"``."""
        return {"llr": self.llr, "lower_bound": self.lower_bound, "upper_bound": self.upper_bound,
                "status": self.status.value, "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha,
                "beta": self.beta, "draw_elo": self.draw_elo, "model": self.model,
                "pentanomial": list(self.pentanomial) if self.pentanomial is not None else None,
                "waiting": self.waiting or None}

    def describe(self) -> str:
        """One line in cutechess-cli's manner, naming the model (and the pairs, for a pentanomial test).

        ``SPRT (normalized Elo, pentanomial 0-3-10-9-4): llr 2.96 (100.5%), lbound -2.94, ubound 2.94 - H1 was
        accepted``
        """
        share = 100.0 * self.llr / (self.upper_bound if self.llr >= 0 else -self.lower_bound)
        what = f"{self.model} Elo" if self.model != SprtModel.BAYESELO else "BayesElo"
        if self.pentanomial is not None:
            what += ", pentanomial " + "-".join(str(n) for n in self.pentanomial)
        text = (f"SPRT ({what}): llr {self.llr:.3g} ({share:.1f}%), lbound {self.lower_bound:.3g}, "
                f"ubound {self.upper_bound:.3g}")
        if self.status is SprtStatus.ACCEPT_H1:
            return text + " - H1 was accepted"
        if self.status is SprtStatus.ACCEPT_H0:
            return text + " - H0 was accepted"
        return text + (f" ({self.waiting})" if self.waiting else "")


def _check_sprt(alpha: float, beta: float, elo0: float, elo1: float) -> tuple[float, float]:
    """Wald's bounds (lower, upper) of an SPRT; ``ValueError`` for parameters no test can have."""
    for name, value in (("alpha", alpha), ("beta", beta), ("elo0", elo0), ("elo1", elo1)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, not {value!r}")
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError(f"alpha and beta must lie strictly between 0 and 1 (got alpha={alpha}, beta={beta})")
    if alpha + beta >= 1.0:  # the bounds would meet or cross: any first game would decide, either way
        raise ValueError(f"alpha + beta must be below 1 (got alpha={alpha}, beta={beta}; 0.05 each is usual)")
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1 (got elo0={elo0}, elo1={elo1})")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _check_counts(counts: Any, size: int, what: str) -> tuple[int, ...]:
    if not isinstance(counts, (list, tuple)) or len(counts) != size:
        raise ValueError(f"{what} must be {size} counts, not {counts!r}")
    for value in counts:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{what} must be whole numbers >= 0, not {counts!r}")
    return tuple(counts)


# The generalized SPRT of fishtest (Michel Van den Bergh), re-implemented from the published functions of
# official-stockfish/fishtest, server/fishtest/stats/LLRcalc.py: ``regularize``, ``results_to_pdf``, ``secular``,
# ``MLE_expected``, ``MLE_t_value``, ``LLR``, ``LLR_logistic`` and ``LLR_normalized``. A distribution is a list
# of (value, probability) pairs; the results are the pentanomial counts, a pair's score 0, 1/4, ..., 1.
# Theory: https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf and normalized_elo_practical.pdf.


def _regularized_pdf(results: Sequence[int]) -> tuple[float, list[tuple[float, float]]]:
    """fishtest ``results_to_pdf``: a count of 0 becomes 1e-3 (``regularize``), then frequencies."""
    counts = [float(c) if c > 0 else 1e-3 for c in results]
    total = sum(counts)
    last = len(counts) - 1
    return total, [(i / last, c / total) for i, c in enumerate(counts)]


def _mean_variance(pdf: Sequence[tuple[float, float]]) -> tuple[float, float]:
    mean = sum(p * a for a, p in pdf)
    return mean, sum(p * (a - mean) ** 2 for a, p in pdf)


def _secular(pdf: Sequence[tuple[float, float]]) -> float:
    """The root x of sum p_i a_i / (1 + x a_i) = 0 between -1/max(a) and -1/min(a) (fishtest ``secular``).

    The sum falls strictly in x there, so bisection finds it to the last bit (fishtest uses Brent's method).
    """
    values = [a for a, _ in pdf]
    low, high = min(values), max(values)
    if not low * high < 0:
        raise ValueError("the hypothesis lies outside the observed results")
    epsilon = 1e-9
    left, right = -1.0 / high + epsilon, -1.0 / low - epsilon

    def f(x: float) -> float:
        return sum(p * a / (1.0 + x * a) for a, p in pdf)

    for _ in range(200):
        middle = (left + right) / 2.0
        if middle in (left, right):
            break
        if f(middle) > 0:
            left = middle
        else:
            right = middle
    return (left + right) / 2.0


def _mle_expected(pdf: Sequence[tuple[float, float]], s: float) -> list[tuple[float, float]]:
    """The most likely distribution with expectation ``s`` given the observed ``pdf`` (fishtest ``MLE_expected``)."""
    x = _secular([(a - s, p) for a, p in pdf])
    return [(a, p / (1.0 + x * (a - s))) for a, p in pdf]


def _mle_t_value(pdf: Sequence[tuple[float, float]], ref: float, t: float) -> list[tuple[float, float]]:
    """The most likely distribution with t-value (mu - ref) / sigma = ``t`` given ``pdf`` (fishtest
    ``MLE_t_value``: ten fixed-point steps at most, from the uniform distribution)."""
    mle = [(a, 1.0 / len(pdf)) for a, _ in pdf]
    for _ in range(10):
        previous = mle
        mu, var = _mean_variance(mle)
        sigma = math.sqrt(var)
        shifted = [(a - ref - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0, p) for a, p in pdf]
        x = _secular(shifted)
        mle = [(a, p / (1.0 + x * b)) for (a, p), (b, _) in zip(pdf, shifted, strict=True)]
        if max(abs(p0 - p1) for (_, p0), (_, p1) in zip(previous, mle, strict=True)) < 1e-9:
            break
    return mle


def _llr_per_sample(pdf: Sequence[tuple[float, float]], h0: list[tuple[float, float]],
                    h1: list[tuple[float, float]]) -> float:
    """fishtest ``LLR``: the mean over the observed ``pdf`` of log(P1/P0)."""
    return sum(p * (math.log(q1) - math.log(q0)) for (_, p), (_, q0), (_, q1) in zip(pdf, h0, h1, strict=True))


def llr_logistic(elo0: float, elo1: float, results: Sequence[int]) -> float:
    """The generalized log-likelihood ratio of Elo = ``elo1`` against ``elo0`` (logistic Elo) on ``results``:
    5 pentanomial counts (LL, LD, LW+DD, DW, WW) or 3 (losses, draws, wins). fishtest ``LLR_logistic``."""
    total, pdf = _regularized_pdf(results)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return total * _llr_per_sample(pdf, _mle_expected(pdf, s0), _mle_expected(pdf, s1))


def llr_normalized(nelo0: float, nelo1: float, results: Sequence[int]) -> float:
    """The generalized log-likelihood ratio of normalized Elo = ``nelo1`` against ``nelo0`` on ``results``
    (5 pentanomial counts or 3 trinomial ones). fishtest ``LLR_normalized``: a pair's t-value is sqrt(2)
    times a game's."""
    if len(results) not in (3, 5):
        raise ValueError("results are 3 counts (losses, draws, wins) or 5 (pentanomial)")
    scale = 1.0 if len(results) == 3 else math.sqrt(2.0)
    t0, t1 = (nelo / NELO_PER_NT * scale for nelo in (nelo0, nelo1))
    total, pdf = _regularized_pdf(results)
    return total * _llr_per_sample(pdf, _mle_t_value(pdf, 0.5, t0), _mle_t_value(pdf, 0.5, t1))


def pentanomial(pair_points: Iterable[float]) -> tuple[int, int, int, int, int]:
    """The pentanomial counts of colour-swapped game pairs, from each pair's points (0, 0.5, 1, 1.5 or 2) for
    the tested side: how many pairs scored LL, LD, LW+DD, DW and WW."""
    counts = [0, 0, 0, 0, 0]
    for points in pair_points:
        index = points * 2
        if isinstance(points, bool) or not isinstance(points, (int, float)) or index not in (0, 1, 2, 3, 4):
            raise ValueError(f"a game pair scores 0, 0.5, 1, 1.5 or 2 points, not {points!r}")
        counts[int(index)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def sprt_pairs(counts: Sequence[int], *, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
               model: str = SprtModel.NORMALIZED.value) -> SprtResult:
    """fishtest's SPRT on colour-swapped game pairs: H0 Elo = ``elo0`` against H1 Elo = ``elo1``.

    ``counts`` are the pentanomial counts (LL, LD, LW+DD, DW, WW: see :func:`pentanomial`); ``model`` is
    ``normalized`` (the bounds in normalized Elo, :func:`llr_normalized`, fishtest's default) or ``logistic``
    (:func:`llr_logistic`). A pair shares its opening, so the pairs are independent where single games are not,
    and a pair's variance is measured, not assumed. Wald's bounds as in :func:`sprt`.

    Small samples cannot decide: the test plays on (status ``continue``, ``waiting`` saying why) until it has
    :data:`MIN_SPRT_PAIRS` pairs. fishtest's regularization (a count of 0 taken as 1e-3) already keeps a short
    run of identical pairs from deciding at the usual bounds (40 won pairs in a row are needed for
    ``elo0=0, elo1=20``); the minimum covers wide bounds too (``elo1=200`` would otherwise accept after 4 pairs).
    """
    lower, upper = _check_sprt(alpha, beta, elo0, elo1)
    counts = _check_counts(counts, 5, "pentanomial counts (LL, LD, LW+DD, DW, WW)")
    if model not in (SprtModel.NORMALIZED, SprtModel.LOGISTIC):
        raise ValueError(f"a test on game pairs uses the normalized or the logistic Elo model, not {model!r}")
    try:
        llr = llr_normalized(elo0, elo1, counts) if model == SprtModel.NORMALIZED else llr_logistic(elo0, elo1, counts)
    except ValueError:  # a hypothesis no distribution on these five results can have (elo1 of several hundred)
        return SprtResult(0.0, lower, upper, SprtStatus.CONTINUE, elo0, elo1, alpha, beta, None, str(model), counts,
                          f"elo0={elo0:g} or elo1={elo1:g} is out of the {model} model's reach on these results")
    pairs = sum(counts)
    waiting = ""
    if pairs < MIN_SPRT_PAIRS:
        waiting = f"no decision before {MIN_SPRT_PAIRS} game pairs; {pairs} so far"
        status = SprtStatus.CONTINUE
    else:
        status = SprtStatus.ACCEPT_H1 if llr > upper else SprtStatus.ACCEPT_H0 if llr < lower else SprtStatus.CONTINUE
    return SprtResult(llr, lower, upper, status, elo0, elo1, alpha, beta, None, str(model), counts, waiting)


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
         beta: float = 0.05) -> SprtResult:
    """The legacy SPRT of H0: Elo difference = ``elo0`` against H1: = ``elo1``, on one side's single games.

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

    As cutechess-cli, the test plays on (llr 0) until wins, draws and losses are all non-zero: with a count of
    zero, drawElo is not defined, and regularizing it (a zero count taken as 0.001) makes drawElo huge and every
    game worth a large step (2 wins and 2 draws used to accept H1). So this test never decides in a game
    without draws (Santorini, the Amazons): use :func:`sprt_pairs`, the default of tournaments.
    """
    for name, value in (("wins", wins), ("draws", draws), ("losses", losses)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, not {value!r}")
    lower, upper = _check_sprt(alpha, beta, elo0, elo1)

    def result(llr: float, draw_elo: float | None, waiting: str = "") -> SprtResult:
        status = SprtStatus.ACCEPT_H1 if llr > upper else SprtStatus.ACCEPT_H0 if llr < lower else SprtStatus.CONTINUE
        return SprtResult(llr, lower, upper, status, elo0, elo1, alpha, beta, draw_elo, waiting=waiting)

    if min(wins, draws, losses) == 0:
        return result(0.0, None, "no decision while wins, draws or losses is zero (cutechess-cli's rule)")
    try:
        llr, draw_elo = _llr(wins, draws, losses, elo0, elo1)
    except (ValueError, OverflowError, ZeroDivisionError):  # the model cannot be evaluated on so lopsided a sample
        return result(0.0, None, "the BayesElo model cannot be evaluated on these counts")
    return result(llr, draw_elo)


def _llr(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> tuple[float, float]:
    """The log-likelihood ratio of :func:`sprt` (steps 1 to 3), and the draw Elo it used."""
    total = wins + draws + losses
    p_win, p_loss = wins / total, losses / total
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
        llr += count * math.log(q1 / q0)
    return llr, draw_elo
