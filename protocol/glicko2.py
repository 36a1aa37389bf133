"""Glicko-2, as Glickman's paper "Example of the Glicko-2 system" (2013) defines it: pure functions.

A player's rating is ``(rating, deviation, volatility)`` on the Glicko scale (1500 for a newcomer,
deviation 350, volatility 0.06). :func:`update` is the paper's whole algorithm (steps 1-8) for one
rating period: the player's results against opponents, each with the opponent's rating *before* the
period. Its result does not depend on the order of the results within the period (up to the last bits
of floating-point sums). Two extensions, both reducing to the paper when left at their defaults:

* ``periods``: how many rating periods passed since the player's last update; the pre-period deviation
  grows by ``periods * volatility**2`` (step 6 with ``periods`` = 1 is the paper's), so a deviation grows
  with inactivity and a second game minutes after the first barely widens it;
* ``weight`` of a result (fair play): a weight ``w`` counts the game as ``w`` of a game in ``v`` and
  ``delta`` (steps 3 and 4), 1 being the paper's and 0 no game at all.

Plyhall updates *per game* (each rated game is a period of its own for its two players, ``periods``
being the time since each one's previous game): see :mod:`protocol.ratings`. This module does no I/O
and imports nothing of Plyhall's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

SCALE = 173.7178
"""Glicko points per Glicko-2 unit (step 2: ``mu = (r - 1500) / 173.7178``)."""
EXPECTED_FLOOR = 1e-12
"""The least expected score the update uses (and 1 less it the most): at a gap of some 6,000 points the
expected score rounds to 0 or 1 exactly, and step 3's variance would divide by zero."""
BASE = 1500.0
"""The rating of a newcomer, and the centre of the scale."""
DEFAULT_DEVIATION = 350.0
"""A newcomer's deviation, and the most any deviation grows to."""
DEFAULT_VOLATILITY = 0.06
"""A newcomer's volatility (the paper's example value)."""
TAU = 0.5
"""The system constant: how much the volatility may change (the paper suggests 0.3 to 1.2; its example uses 0.5)."""
EPSILON = 0.000001
"""The convergence tolerance of the volatility iteration (step 5)."""


@dataclass(frozen=True)
class Rating:
    """A Glicko-2 rating on the Glicko scale."""

    rating: float = BASE
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY


@dataclass(frozen=True)
class Result:
    """One game of a rating period: the opponent's pre-period rating, the player's score (1 a win, 0.5 a draw,
    0 a loss) and the game's weight (1 a full game)."""

    opponent: Rating
    score: float
    weight: float = 1.0


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def expected_score(player: Rating, opponent: Rating) -> float:
    """The score ``player`` expects against ``opponent`` (the paper's ``E``, with the opponent's deviation)."""
    return _expected((player.rating - BASE) / SCALE, (opponent.rating - BASE) / SCALE, opponent.deviation / SCALE)


def grown_deviation(player: Rating, periods: float, ceiling: float = DEFAULT_DEVIATION) -> float:
    """The deviation of ``player`` after ``periods`` rating periods without a game:
    ``sqrt(deviation**2 + periods * (SCALE * volatility)**2)``, at most ``ceiling``."""
    phi = player.deviation / SCALE
    grown = SCALE * math.sqrt(phi * phi + max(0.0, periods) * player.volatility ** 2)
    return min(ceiling, grown)


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois algorithm as the paper gives it."""
    a = math.log(sigma * sigma)
    delta2, phi2 = delta * delta, phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, results: Iterable[Result], periods: float = 1.0, tau: float = TAU,
           floor: float = 0.0, ceiling: float = DEFAULT_DEVIATION) -> Rating:
    """The paper's algorithm: ``player``'s rating after one rating period with ``results`` (against the opponents'
    ratings before the period), ``periods`` periods after its last update.

    With no results (or only weightless ones) only the deviation grows (the paper's step 6 alone). The new
    deviation is kept between ``floor`` and ``ceiling`` (the paper has neither; 0 and 350 keep it as it is
    for any realistic input)."""
    mu = (player.rating - BASE) / SCALE
    phi = player.deviation / SCALE
    games = [r for r in results if r.weight > 0]
    if not games:
        return Rating(player.rating, max(floor, grown_deviation(player, periods, ceiling)), player.volatility)
    inverse_v = 0.0
    improvement = 0.0
    for result in games:  # steps 3 and 4
        mu_j = (result.opponent.rating - BASE) / SCALE
        g = _g(result.opponent.deviation / SCALE)
        e = _expected(mu, mu_j, result.opponent.deviation / SCALE)
        e = min(max(e, EXPECTED_FLOOR), 1.0 - EXPECTED_FLOOR)  # a gap of thousands of points: no division by 0
        inverse_v += result.weight * g * g * e * (1.0 - e)
        improvement += result.weight * g * (result.score - e)
    v = 1.0 / inverse_v
    delta = v * improvement
    sigma = _new_volatility(player.volatility, phi, v, delta, tau)  # step 5
    phi_star = math.sqrt(phi * phi + max(0.0, periods) * sigma * sigma)  # step 6
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)  # step 7
    new_mu = mu + new_phi * new_phi * improvement
    deviation = min(ceiling, max(floor, SCALE * new_phi))  # step 8
    return Rating(SCALE * new_mu + BASE, deviation, sigma)
