"""Ratings and match statistics: Elo for a whole field, per-pairing figures, SPRT.

Everything here is a pure function of counts or game scores, in Elo units of
the logistic model, where a rating difference ``D`` gives the stronger side the
expected score ``1 / (1 + 10 ** (-D / 400))``.

``elo_ratings``
    Elo for every entrant from all played games at once, by maximum likelihood
    (the Bradley-Terry model with score fractions, as Ordo and BayesElo fit
    it), with virtual draws as a prior so that an entrant who won or lost
    everything still gets a finite rating, and 95% intervals from the inverse
    of the Fisher information.
``match_stats``
    One pairing's figures as cutechess-cli prints them after a match: score,
    Elo difference +/- 95% margin, likelihood of superiority (LOS), draw ratio.
``sprt``
    The sequential probability ratio test of cutechess-cli (and fishtest's
    legacy BayesElo SPRT): log-likelihood ratio, bounds and decision.

Forfeits and byes are not games: leave them out (``GameResult.is_played``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist
from typing import Any

import numpy as np

ELO_PER_NATURAL_UNIT = 400.0 / math.log(10.0)
"""Elo points per unit of the natural-log logistic scale: ``r_elo = ELO_PER_NATURAL_UNIT * r``."""

Z95 = NormalDist().inv_cdf(0.975)
"""The two-sided 95% quantile of the standard normal law, 1.95996..."""

DEFAULT_PRIOR = 2.0
"""Virtual draws per entrant in :func:`elo_ratings` (BayesElo's default ``prior`` is 2 virtual draws)."""


def _json_number(value: float) -> float | None:
    """``value`` for JSON: ``None`` in place of infinities and NaN, which JSON cannot hold."""
    return value if math.isfinite(value) else None


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
                "points": self.points, "score": _json_number(self.score),
                "elo_diff": _json_number(self.elo_diff), "margin": _json_number(self.margin),
                "los": _json_number(self.los), "draw_ratio": _json_number(self.draw_ratio)}

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
    if wins + draws + losses == 0 or (min(counts) == 0 and not regularize):
        return result(0.0, None)
    if regularize:
        counts = [c if c > 0 else 1e-3 for c in counts]
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
    return result(llr, draw_elo)


# ---------------------------------------------------------------------------
# Elo for a whole field by maximum likelihood


@dataclass(frozen=True)
class Rating:
    """An entrant's Elo estimate: ``elo`` +/- ``margin`` (95%), from ``games`` played games worth ``points``."""

    elo: float
    margin: float
    games: int
    points: float

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (a non-finite margin as ``None``)."""
        return {"elo": _json_number(self.elo), "margin": _json_number(self.margin), "games": self.games,
                "points": self.points}


def elo_ratings(games: Iterable[tuple[str, str, float]], *, prior: float = DEFAULT_PRIOR,
                anchor: str | None = None, anchor_elo: float = 0.0, z: float = Z95,
                tolerance: float = 1e-9, max_iterations: int = 200) -> dict[str, Rating]:
    """Elo ratings of every entrant from all played games, by maximum likelihood.

    ``games`` are ``(white, black, white_score)`` with a score of 1, 1/2 or 0
    (played games only: no forfeits, no byes). Entrants without a played game
    are not in the result.

    The model (Bradley-Terry with score fractions, as Ordo and BayesElo without
    its draw and advantage parameters): entrant ``i`` scores against ``j`` with
    expectation p_ij = 1 / (1 + 10^((r_j - r_i)/400)), and the log-likelihood
    sum over games of s ln p + (1 - s) ln(1 - p) is maximised (Zermelo 1929;
    Bradley and Terry 1952; Hunter 2004, "MM algorithms for generalized
    Bradley-Terry models", Ann. Statist. 32, for the existence condition
    below). A draw counts as half a win for each side. For two entrants the
    estimate is -400 log10(1/p - 1), p the score fraction.

    The prior: a perfect (or null) score has no finite maximum, so ``prior``
    virtual draws are added per entrant, spread evenly over the opponents it
    met, in the manner of BayesElo's ``prior`` (default 2 virtual draws):
    a pair that met gets prior/2 * (1/m_i + 1/m_j) virtual draws, m the number
    of distinct opponents. Between two entrants that is ``prior`` virtual draws.
    ``prior=0`` is the pure maximum-likelihood estimate; it raises
    ``ValueError`` when some group of entrants scored 100% (or 0%) against the
    rest (Ford 1957 / Hunter 2004 assumption 1: no finite maximum exists).

    The solution: Newton's method on the concave log-likelihood, one entrant of
    each connected group held fixed, with step halving, to ``tolerance`` in Elo.

    Anchoring: the entrant ``anchor`` is set to ``anchor_elo``; without an
    anchor (or if the anchor has no played game) the mean of each connected
    group of entrants is ``anchor_elo``. Groups that never met (directly or
    through others) are not comparable and are each centred on their own.

    The margins: the ratings' covariance is the inverse of the Fisher
    information (the negative Hessian of the log-likelihood; for this model the
    observed and expected information are equal), its pseudo-inverse under the
    mean constraint, or the inverse of the other entrants' block under an
    anchor (whose own margin is then 0); margin = ``z`` (1.96) * standard
    deviation. This is the normal (Laplace) approximation: BayesElo computes
    asymmetric intervals from the exact posterior instead.
    """
    if not (isinstance(prior, (int, float)) and prior >= 0 and math.isfinite(prior)):
        raise ValueError(f"prior must be a number of virtual draws >= 0, not {prior!r}")
    names: list[str] = []
    index: dict[str, int] = {}
    rows: list[tuple[int, int, float]] = []
    for white, black, score in games:
        if white == black:
            raise ValueError(f"{white!r} cannot play against itself")
        if not (isinstance(score, (int, float)) and 0.0 <= score <= 1.0):
            raise ValueError(f"a game's score must lie between 0 and 1, not {score!r} ({white} - {black})")
        for name in (white, black):
            if name not in index:
                index[name] = len(names)
                names.append(name)
        rows.append((index[white], index[black], float(score)))
    n = len(names)
    if n == 0:
        return {}

    played = np.zeros((n, n))  # games between i and j (symmetric)
    scored = np.zeros((n, n))  # points i scored against j
    for i, j, s in rows:
        played[i, j] += 1.0
        played[j, i] += 1.0
        scored[i, j] += s
        scored[j, i] += 1.0 - s
    games_of = played.sum(axis=1)
    points_of = scored.sum(axis=1)

    met = played > 0
    if prior > 0:
        opponents = met.sum(axis=1)
        virtual = prior / 2.0 * (1.0 / opponents[:, None] + 1.0 / opponents[None, :]) * met
        played_fit = played + virtual
        scored_fit = scored + virtual / 2.0
    else:
        played_fit, scored_fit = played, scored

    ratings = np.zeros(n)
    margins = np.zeros(n)
    for group in _connected_groups(met):
        if prior == 0:
            _check_finite_maximum(group, scored, names)
        sub_played = played_fit[np.ix_(group, group)]
        sub_scored = scored_fit[np.ix_(group, group)]
        natural = _newton(sub_played, sub_scored, tolerance / ELO_PER_NATURAL_UNIT, max_iterations)
        info = _information(sub_played, natural)
        local = {g: k for k, g in enumerate(group)}
        if anchor is not None and anchor in index and index[anchor] in local:
            a = local[index[anchor]]
            natural -= natural[a]
            keep = [k for k in range(len(group)) if k != a]
            variance = np.zeros(len(group))
            if keep:
                variance[keep] = np.diag(np.linalg.inv(info[np.ix_(keep, keep)]))
        else:
            natural -= natural.mean()
            variance = np.diag(np.linalg.pinv(info, hermitian=True))
        ratings[group] = anchor_elo + ELO_PER_NATURAL_UNIT * natural
        margins[group] = z * ELO_PER_NATURAL_UNIT * np.sqrt(np.clip(variance, 0.0, None))
    return {name: Rating(float(ratings[i]), float(margins[i]), int(games_of[i]), float(points_of[i]))
            for i, name in enumerate(names)}


def _connected_groups(met: np.ndarray) -> list[list[int]]:
    """The entrants' connected groups (who met whom, directly or through others), each sorted."""
    n = len(met)
    seen = [False] * n
    groups = []
    for start in range(n):
        if seen[start]:
            continue
        seen[start] = True
        stack, group = [start], []
        while stack:
            i = stack.pop()
            group.append(i)
            for j in np.flatnonzero(met[i]):
                if not seen[j]:
                    seen[j] = True
                    stack.append(int(j))
        groups.append(sorted(group))
    return groups


def _check_finite_maximum(group: list[int], scored: np.ndarray, names: list[str]) -> None:
    """``ValueError`` unless everyone in ``group`` can reach everyone through "scored against" links.

    Hunter (2004), assumption 1 (after Ford 1957): the maximum-likelihood
    estimate exists iff, for every split of the entrants in two, each side
    scored some points against the other, i.e. the directed graph i -> j
    ("i scored against j") is strongly connected.
    """
    def reach(start: int, forward: bool) -> set[int]:
        seen = {start}
        stack = [start]
        while stack:
            i = stack.pop()
            for j in group:
                if j not in seen and (scored[i, j] > 0 if forward else scored[j, i] > 0):
                    seen.add(j)
                    stack.append(j)
        return seen

    everyone = set(group)
    for forward in (True, False):
        missing = everyone - reach(group[0], forward)
        if missing:
            side = sorted(names[i] for i in (missing if forward else everyone - missing))
            raise ValueError(f"ratings have no finite maximum-likelihood value: {', '.join(side)} scored nothing "
                             "against the others (or everything); use prior > 0")


def _probabilities(natural: np.ndarray) -> np.ndarray:
    """p[i, j]: expected score of i against j for ratings on the natural-log scale."""
    return 1.0 / (1.0 + np.exp(natural[None, :] - natural[:, None]))


def _information(played: np.ndarray, natural: np.ndarray) -> np.ndarray:
    """The Fisher information (negative Hessian) in natural units: a weighted graph Laplacian."""
    p = _probabilities(natural)
    weight = played * p * (1.0 - p)
    return np.diag(weight.sum(axis=1)) - weight


def _log_likelihood(played: np.ndarray, scored: np.ndarray, natural: np.ndarray) -> float:
    """The log-likelihood: sum over ordered pairs of S_ij ln p_ij.

    A game in which i scores s adds s ln p_ij + (1 - s) ln p_ji.
    """
    p = _probabilities(natural)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(scored > 0, scored * np.log(p), 0.0)
    return float(terms.sum())


def _newton(played: np.ndarray, scored: np.ndarray, tolerance: float, max_iterations: int) -> np.ndarray:
    """Maximise the log-likelihood of one connected group, its first entrant held at 0 (natural units)."""
    size = len(played)
    natural = np.zeros(size)
    if size == 1:
        return natural
    current = _log_likelihood(played, scored, natural)
    for _ in range(max_iterations):
        p = _probabilities(natural)
        gradient = (scored - played * p).sum(axis=1)
        info = _information(played, natural)
        step = np.zeros(size)
        step[1:] = np.linalg.solve(info[1:, 1:], gradient[1:])
        factor = 1.0
        while True:  # step halving keeps every step uphill (the log-likelihood is concave)
            trial = natural + factor * step
            value = _log_likelihood(played, scored, trial)
            if value >= current - 1e-12 or factor < 1e-8:
                break
            factor /= 2.0
        natural, current = trial, value
        if np.max(np.abs(factor * step)) < tolerance:
            return natural
    raise ArithmeticError("the Elo fit did not converge; the results may be degenerate")
