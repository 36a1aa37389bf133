"""How the Amazons search judges positions and picks the moves it looks at, and the compiled search.

Selective search. The opening position has 2,176 turns, so even two plies of
full width cost millions of evaluations. The search here is full width only
at the root; below it :func:`generate_moves` keeps the ``width`` best turns by
a cheap static score (the queen's gain in mobility, plus how many squares the
queen and the arrow take from the opposing queens' lines), with a width that
shrinks with the ply (``BEAM``). The root may be narrowed as well, by a full
evaluation of every child (``ROOT_WIDTH``).

Evaluation (after J. Lieberum, "An evaluation function for the game of
Amazons", 2005): breadth-first queen-move and king-move distances from each
side's queens give, over the empty squares, the territories ``t1`` (queen
moves) and ``t2`` (king moves) each side reaches first (a tie counts a little
for the side to move), the position terms ``c1`` (sum of 2^-distance
differences) and ``c2`` (king-distance differences, clipped), and ``w``, how
contested the board still is. Early on (large ``w``) ``t2``, ``c1``, ``c2``
and queen mobility carry weight; as ``w`` falls towards the end, ``t1``
takes over. A separated endgame is scored by its race (``endgame.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..search import MATE_BOUND, RUNNING, make_search
from .endgame import game_result, race
from .position import (
    ARROW,
    BEAM,
    BEAM_PLIES,
    BEST,
    EMPTY,
    INF,
    LINES,
    MY_KING_DIST,
    MY_QUEEN_DIST,
    NEIGHBOUR,
    PLY,
    QUEENS,
    QUEUE,
    ROOT_WIDTH,
    SQUARES,
    THEIR_KING_DIST,
    THEIR_QUEEN_DIST,
    TO_MOVE,
    VALUES,
    key,
    legal_moves,
    play,
    undo,
)

POWER = np.array([1024 >> min(d, 11) for d in range(INF + 1)], np.int64)
"""``POWER[d]`` = 1024 * 2**-d (0 from d = 11 on): the weights of ``c1`` and ``w``."""

# Evaluation scale and weights. Values are in 1/SCALE of a square.
SCALE = 16
TIE = 0.2
"""A square both sides reach equally fast counts this much for the side to move (Lieberum's kappa)."""
PHASE_W = 40.0
"""``w`` at or above this is the opening; ``w`` = 0 the end (no square contested)."""
T1_WEIGHT = (0.35, 1.0)
"""Weight of ``t1`` in the opening and at the end (linear in between)."""
T2_WEIGHT = (0.35, 0.1)
C1_WEIGHT = (0.3, 0.0)
C2_WEIGHT = (0.3, 0.0)
MOBILITY_WEIGHT = (0.08, 0.02)
"""Per square a queen reaches in one move (capped at :data:`MOBILITY_CAP`)."""
MOBILITY_CAP = 20
LOW_MOBILITY = np.array([6.0, 3.0, 1.5, 0.7, 0.3], np.float64)
"""Extra squares lost for a queen that reaches only 0, 1, 2, 3 or 4 squares: nearly shut in."""


# --- Evaluation -----------------------------------------------------------------------------------


@njit(cache=True)
def distances(state: np.ndarray, seat: int, dist: int, queen_moves: bool) -> None:
    """``state[dist + square]``: the fewest moves ``seat``'s queens need to reach each empty square,
    moving like queens (``queen_moves``) or like kings (one step at a time)."""
    for square in range(SQUARES):
        state[dist + square] = INF
    head, tail = 0, 0
    base = QUEENS + 4 * seat
    for i in range(4):
        state[QUEUE + tail] = state[base + i]
        state[dist + state[base + i]] = 0
        tail += 1
    while head < tail:
        square = state[QUEUE + head]
        head += 1
        reach = state[dist + square] + 1
        for d in range(8):
            other = NEIGHBOUR[square, d]
            while other >= 0 and state[other] == EMPTY:
                if state[dist + other] < reach:
                    break  # reached as fast from another square, which walks this line itself
                if state[dist + other] > reach:
                    state[dist + other] = reach
                    state[QUEUE + tail] = other
                    tail += 1
                if not queen_moves:
                    break
                other = NEIGHBOUR[other, d]


@njit(cache=True)
def queen_distances(state: np.ndarray, seat: int, dist: int) -> None:
    """Distances in queen moves (see :func:`distances`)."""
    distances(state, seat, dist, True)


@njit(cache=True)
def king_distances(state: np.ndarray, seat: int, dist: int) -> None:
    """Distances in king steps (see :func:`distances`)."""
    distances(state, seat, dist, False)


@njit(cache=True)
def mobility(state: np.ndarray, seat: int) -> tuple[int, float]:
    """Squares ``seat``'s queens reach in one move (each capped at :data:`MOBILITY_CAP`), and the
    squares of territory its nearly shut-in queens are likely to lose (:data:`LOW_MOBILITY`)."""
    total, danger = 0, 0.0
    base = QUEENS + 4 * seat
    for i in range(4):
        queen = state[base + i]
        count = 0
        for d in range(8):
            other = NEIGHBOUR[queen, d]
            while other >= 0 and state[other] == EMPTY:
                count += 1
                other = NEIGHBOUR[other, d]
        total += min(count, MOBILITY_CAP)
        if count < len(LOW_MOBILITY):
            danger += LOW_MOBILITY[count]
    return total, danger


@njit(cache=True)
def owner(mine: int, theirs: int) -> float:
    """A square's share for the side to move: 1 if it gets there first, -1 if the other side does, ``TIE``
    if both reach it at once, 0 if neither can."""
    if mine < theirs:
        return 1.0
    if mine > theirs:
        return -1.0
    return TIE if mine < INF else 0.0


@njit(cache=True)
def territory(state: np.ndarray) -> tuple[float, float, float, float, float]:
    """Lieberum's ``(t1, t2, c1, c2, w)`` for the side to move."""
    seat = state[TO_MOVE]
    queen_distances(state, seat, MY_QUEEN_DIST)
    queen_distances(state, 1 - seat, THEIR_QUEEN_DIST)
    king_distances(state, seat, MY_KING_DIST)
    king_distances(state, 1 - seat, THEIR_KING_DIST)
    t1 = t2 = 0.0
    c1 = c2 = 0
    w = 0
    for square in range(SQUARES):
        if state[square] != EMPTY:
            continue
        mine, theirs = state[MY_QUEEN_DIST + square], state[THEIR_QUEEN_DIST + square]
        t1 += owner(mine, theirs)
        if mine < INF and theirs < INF:
            w += POWER[abs(mine - theirs)]
        c1 += POWER[mine] - POWER[theirs]
        mine, theirs = state[MY_KING_DIST + square], state[THEIR_KING_DIST + square]
        t2 += owner(mine, theirs)
        c2 += max(-6, min(6, theirs - mine))
    return t1, t2, 2.0 * c1 / 1024.0, c2 / 6.0, w / 1024.0


@njit(cache=True)
def blend(weights: tuple[float, float], opening: float) -> float:
    """Weight between its opening and end values; ``opening`` is 1 at the opening, 0 at the end."""
    return weights[1] + (weights[0] - weights[1]) * opening


@njit(cache=True)
def evaluate(state: np.ndarray) -> int:
    """Heuristic value for the side to move, in 1/SCALE of a square of territory."""
    separated, my_low, my_high, their_low, their_high = race(state)
    if separated:
        # Count the race from the turns each side surely has, plus a share of the uncertain ones;
        # the side to move needs strictly more turns, hence the half.
        mine = my_low + 0.25 * (my_high - my_low)
        theirs = their_low + 0.25 * (their_high - their_low)
        return int(SCALE * (mine - theirs - 0.5))
    t1, t2, c1, c2, w = territory(state)
    opening = min(w / PHASE_W, 1.0)
    seat = state[TO_MOVE]
    my_reach, my_danger = mobility(state, seat)
    their_reach, their_danger = mobility(state, 1 - seat)
    value = (
        blend(T1_WEIGHT, opening) * t1 + blend(T2_WEIGHT, opening) * t2 + blend(C1_WEIGHT, opening) * c1
        + blend(C2_WEIGHT, opening) * c2 + blend(MOBILITY_WEIGHT, opening) * (my_reach - their_reach)
        - my_danger + their_danger
    )
    return int(SCALE * value)


# --- Move selection and ordering -----------------------------------------------------------------


@njit(cache=True)
def line_value(state: np.ndarray, square: int, seat: int) -> int:
    """How many squares an arrow (or queen) on the empty ``square`` takes from the queens' lines:
    twice what it takes from the opponent's, less what it takes from ``seat``'s own."""
    value = 0
    for d in range(8):
        other = NEIGHBOUR[square, d]
        while other >= 0 and state[other] == EMPTY:
            other = NEIGHBOUR[other, d]
        if other < 0 or state[other] == ARROW:
            continue
        cut = 1  # the square itself, and the empty run behind it as the queen sees it
        behind = NEIGHBOUR[square, 7 - d]
        while behind >= 0 and state[behind] == EMPTY:
            cut += 1
            behind = NEIGHBOUR[behind, 7 - d]
        value += 2 * cut if state[other] != seat + 1 else -cut
    return value


@njit(cache=True)
def reach(state: np.ndarray, square: int) -> int:
    """Empty squares a queen on ``square`` sees (the square itself aside)."""
    count = 0
    for d in range(8):
        other = NEIGHBOUR[square, d]
        while other >= 0 and state[other] == EMPTY:
            count += 1
            other = NEIGHBOUR[other, d]
    return count


@njit(cache=True)
def quick_score(state: np.ndarray, move: int) -> int:
    """A cheap static score of a turn: the queen's gain in reach, and what its new square and the
    arrow take from the opponent's lines (see :func:`line_value`). Same value as :func:`select_moves` uses."""
    seat = state[TO_MOVE]
    queen, to, arrow = move // 10000, move // 100 % 100, move % 100
    before = reach(state, queen)
    stone = state[queen]
    state[queen] = EMPTY
    after = reach(state, to)
    state[queen] = stone
    score = 2 * (after - before) + line_value(state, to, seat)
    if arrow != queen:  # as in select_moves, where the queen's square was not empty
        score += line_value(state, arrow, seat)
    return score


@njit(cache=True)
def select_moves(state: np.ndarray, moves: np.ndarray, width: int) -> int:
    """Write the ``width`` best turns by :func:`quick_score` into ``moves``, best first; return how many."""
    seat = state[TO_MOVE]
    for square in range(SQUARES):
        state[LINES + square] = 0
    for i in range(8):  # line_value of every empty square at once, walking out from the queens
        queen = state[QUEENS + i]
        weight = -1 if i // 4 == seat else 2
        for d in range(8):
            run = 0
            other = NEIGHBOUR[queen, d]
            while other >= 0 and state[other] == EMPTY:
                run += 1
                other = NEIGHBOUR[other, d]
            other = NEIGHBOUR[queen, d]
            while run > 0:
                state[LINES + other] += weight * run
                run -= 1
                other = NEIGHBOUR[other, d]
    n = 0
    base = QUEENS + 4 * seat
    for i in range(4):
        queen = state[base + i]
        before = reach(state, queen)
        stone = state[queen]
        state[queen] = EMPTY
        for d in range(8):
            to = NEIGHBOUR[queen, d]
            while to >= 0 and state[to] == EMPTY:
                step = 2 * (reach(state, to) - before) + state[LINES + to]
                for e in range(8):
                    arrow = NEIGHBOUR[to, e]
                    while arrow >= 0 and state[arrow] == EMPTY:
                        score = step + state[LINES + arrow]
                        if n < width or score > state[BEST + n - 1]:
                            j = n if n < width else width - 1
                            while j > 0 and state[BEST + j - 1] < score:
                                state[BEST + j] = state[BEST + j - 1]
                                moves[j] = moves[j - 1]
                                j -= 1
                            state[BEST + j] = score
                            moves[j] = queen * 10000 + to * 100 + arrow
                            if n < width:
                                n += 1
                        arrow = NEIGHBOUR[arrow, e]
                to = NEIGHBOUR[to, d]
        state[queen] = stone
    return n


@njit(cache=True)
def child_value(state: np.ndarray, move: int) -> int:
    """The value of ``move`` for the side making it: the child's evaluation, or a decided result."""
    play(state, move)
    result = game_result(state)
    if result == RUNNING:
        value = -evaluate(state)
    else:
        value = -result * (MATE_BOUND - 1)
    undo(state, move)
    return value


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """The moves the selective search looks at: every legal turn at the root (or the ``ROOT_WIDTH``
    best by a full evaluation), and the best few by :func:`quick_score` below it."""
    ply = state[PLY]
    if ply == 0:
        n = legal_moves(state, moves)
        width = state[ROOT_WIDTH]
        if width <= 0 or n <= width:
            return n
        for i in range(n):
            state[VALUES + i] = child_value(state, moves[i])
        for i in range(width):  # a partial selection sort: the best ``width`` to the front
            best = i
            for j in range(i + 1, n):
                if state[VALUES + j] > state[VALUES + best]:
                    best = j
            moves[i], moves[best] = moves[best], moves[i]
            state[VALUES + i], state[VALUES + best] = state[VALUES + best], state[VALUES + i]
        return width
    width = state[BEAM + min(ply, BEAM_PLIES) - 1]
    if width <= 0:
        return legal_moves(state, moves)
    return select_moves(state, moves, width)


@njit(cache=True)
def order_hint(state: np.ndarray, move: int) -> int:
    """At the root the full value of the child; deeper the cheap :func:`quick_score`."""
    if state[PLY] == 0:
        return child_value(state, move)
    return quick_score(state, move)


search = make_search(
    "amazons", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The shared search, compiled for the Amazons."""
