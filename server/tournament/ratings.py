"""Elo for a whole field of entrants, by maximum likelihood.

``elo_ratings`` rates every entrant from all played games at once (the
Bradley-Terry model with score fractions, as Ordo and BayesElo fit it), with
virtual draws as a prior so that an entrant who won or lost everything still
gets a finite rating, and 95% intervals from the inverse of the Fisher
information. Elo units are those of the logistic model, as in
:mod:`protocol.statistics`, which holds the per-pairing figures (cutechess-cli's
match statistics) and the SPRT.

Forfeits and byes are not games: leave them out (``ScoredGame.is_played``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocol.statistics import Z95, finite_or_none

ELO_PER_NATURAL_UNIT = 400.0 / math.log(10.0)
"""Elo points per unit of the natural-log logistic scale: ``r_elo = ELO_PER_NATURAL_UNIT * r``."""

DEFAULT_PRIOR = 2.0
"""Virtual draws per entrant in :func:`elo_ratings` (BayesElo's default ``prior`` is 2 virtual draws)."""


@dataclass(frozen=True)
class Rating:
    """An entrant's Elo estimate: ``elo`` +/- ``margin`` (95%), from ``games`` played games worth ``points``."""

    elo: float
    margin: float
    games: int
    points: float

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (a non-finite margin as ``None``)."""
        return {"elo": finite_or_none(self.elo), "margin": finite_or_none(self.margin), "games": self.games,
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
    names, rows = _index_games(games)
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
    played_fit, scored_fit = _with_prior(played, scored, met, prior)

    anchor_index = names.index(anchor) if anchor is not None and anchor in names else None
    ratings = np.zeros(n)
    margins = np.zeros(n)
    for group in _connected_groups(met):
        if prior == 0:
            _check_finite_maximum(group, scored, names)
        natural, variance = _fit_group(group, played_fit, scored_fit, anchor_index, tolerance, max_iterations)
        ratings[group] = anchor_elo + ELO_PER_NATURAL_UNIT * natural
        margins[group] = z * ELO_PER_NATURAL_UNIT * np.sqrt(np.clip(variance, 0.0, None))
    return {name: Rating(float(ratings[i]), float(margins[i]), int(games_of[i]), float(points_of[i]))
            for i, name in enumerate(names)}


def _index_games(games: Iterable[tuple[str, str, float]]) -> tuple[list[str], list[tuple[int, int, float]]]:
    """The entrants in order of appearance, and each game as (white index, black index, white's score)."""
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
    return names, rows


def _with_prior(played: np.ndarray, scored: np.ndarray, met: np.ndarray,
                prior: float) -> tuple[np.ndarray, np.ndarray]:
    """Games and points with ``prior`` virtual draws per entrant spread over the opponents it met."""
    if prior <= 0:
        return played, scored
    opponents = met.sum(axis=1)
    virtual = prior / 2.0 * (1.0 / opponents[:, None] + 1.0 / opponents[None, :]) * met
    return played + virtual, scored + virtual / 2.0


def _fit_group(group: list[int], played: np.ndarray, scored: np.ndarray, anchor: int | None, tolerance: float,
               max_iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """Ratings (natural units) of one connected group and their variances: the anchor at 0 when it is in the
    group (its variance 0), else the group's mean at 0."""
    sub_played = played[np.ix_(group, group)]
    sub_scored = scored[np.ix_(group, group)]
    natural = _newton(sub_played, sub_scored, tolerance / ELO_PER_NATURAL_UNIT, max_iterations)
    info = _information(sub_played, natural)
    if anchor is not None and anchor in group:
        a = group.index(anchor)
        natural -= natural[a]
        keep = [k for k in range(len(group)) if k != a]
        variance = np.zeros(len(group))
        if keep:
            variance[keep] = np.diag(np.linalg.inv(info[np.ix_(keep, keep)]))
    else:
        natural -= natural.mean()
        variance = np.diag(np.linalg.pinv(info, hermitian=True))
    return natural, variance


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
