"""How the Santorini search judges positions: its verdicts, the evaluation, move ordering, and the search.

The ``game_result`` hook does more than the rules: besides a climb just made
and a side with no legal turn, it scores as decided a position where the side
to move can climb onto level 3 at once (a win), and one where the opponent
threatens such a climb that no move can stop (a loss: two threatened squares,
or one that no worker can reach to dome). These are exact, and cut the tree
a ply or two early; their scores count those plies (``WIN_NEXT``,
``LOSS_AFTER_REPLY``). Setup is searched like any other move (300 placements,
ordered central squares first): two plies of setup are cheap, and the
evaluation sees the first turns that follow.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..search import LOSS, LOSS_AFTER_REPLY, RUNNING, WIN_NEXT, make_search
from .position import (
    ADJACENT,
    CLIMBED,
    DIRECTION,
    DOME,
    NEIGHBOUR,
    NEIGHBOUR_MASK,
    PLACE_BASE,
    SQUARES,
    TO_MOVE,
    WIN_BASE,
    WORKERS,
    count_squares,
    key,
    legal_moves,
    level_masks,
    lowest_square,
    occupied,
    play,
    reach,
    undo,
    worker_mask,
)

CENTRE = np.array(
    [0, 1, 2, 1, 0,
     1, 3, 4, 3, 1,
     2, 4, 6, 4, 2,
     1, 3, 4, 3, 1,
     0, 1, 2, 1, 0], np.int64,
)  # fmt: skip
"""How central each square is: a central worker reaches more squares and hinders both opponents."""

# Evaluation weights, in points (a level climbed is worth tens of points).
HEIGHT_POINTS = np.array([0, 40, 110, 0, 0], np.int64)
"""A worker's own level: higher workers are one step nearer the win and see more climbs."""
STEP_UP_POINTS = np.array([6, 14, 0, 0, 0], np.int64)
"""Per free neighbour exactly one level above a worker on level 0 or 1 (somewhere to climb)."""
LEVEL_TWO_POINTS = 9
"""Per free level-2 neighbour of a worker on level 2: one build there makes a threat."""
MOBILITY_POINTS = 3
"""Per square a worker can step onto."""
TRAPPED_POINTS = 60
"""A worker that cannot move at all."""
CENTRE_POINTS = 3
"""Per point of :data:`CENTRE`."""
THREAT_POINTS = 35
"""The opponent threatens to climb onto level 3: the side to move must spend its turn on a dome."""
TEMPO_POINTS = 5
"""Being the one to move."""


# --- Verdicts and the moves worth searching -------------------------------------------------------


@njit(cache=True)
def threatens_climb(state: np.ndarray, seat: int) -> bool:
    """True when a worker of ``seat`` on level 2 stands next to a free level-3 square (no sets of squares
    needed: the search asks this after every move, and most workers are not on level 2)."""
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        if frm < 0 or state[frm] != 2:
            continue
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to >= 0 and state[to] == 3 and not occupied(state, to):
                return True
    return False


@njit(cache=True)
def climb_squares(state: np.ndarray, seat: int, workers: int, m3: int) -> int:
    """The free level-3 squares next to ``seat``'s workers on level 2 (``workers``, ``m3``: see ``level_masks``)."""
    squares = 0
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        if frm >= 0 and state[frm] == 2:
            squares |= NEIGHBOUR_MASK[frm] & m3
    return squares & ~workers


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """The moves worth searching: :func:`legal_moves` less those that lose at once, in the same order.

    A climb onto level 3 is the only move needed when there is one. Otherwise,
    when the opponent threatens such a climb, only the moves that dome its
    target (or, in a set-up position, stand on it) are kept; and a build that
    raises a square to level 3 next to an opponent's worker on level 2 hands
    it the win. When every move loses, all of them are kept.
    """
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    if state[mine] < 0:
        return legal_moves(state, moves)
    m1, m2, m3, m4 = level_masks(state)
    workers = worker_mask(state)
    steps0 = reach(state[mine], state[state[mine]], workers, m2, m3, m4)
    steps1 = reach(state[mine + 1], state[state[mine + 1]], workers, m2, m3, m4)
    for worker in range(2):  # a climb onto level 3, the first of them in legal_moves' order
        frm = state[mine + worker]
        climbs = (steps0 if worker == 0 else steps1) & m3
        if state[frm] == 2 and climbs:
            moves[0] = WIN_BASE + worker * 8 + DIRECTION[frm, lowest_square(climbs)]
            return 1
    other = WORKERS + 2 * (1 - seat)
    targets = climb_squares(state, 1 - seat, workers, m3)
    target = -1
    if targets:
        first = state[other]  # the target is a square of the first worker that has one, as searched before
        own = NEIGHBOUR_MASK[first] & m3 & ~workers if state[first] == 2 else 0
        target = lowest_square(own if own else targets)
    handing = 0  # raising these to level 3 would hand the opponent a climb
    for worker in range(2):
        square = state[other + worker]
        if square >= 0 and state[square] == 2:
            handing |= NEIGHBOUR_MASK[square] & m2
    n = 0
    for worker in range(2):
        frm = state[mine + worker]
        steps = steps0 if worker == 0 else steps1
        free = ~m4 & ~(workers & ~(1 << frm))  # where to build once this worker has stepped
        while steps:
            to = lowest_square(steps)
            steps &= steps - 1
            builds = NEIGHBOUR_MASK[to] & free
            if target >= 0:
                if to != target:
                    builds &= 1 << target
            else:
                builds &= ~handing
            code = worker * 64 + DIRECTION[frm, to] * 8
            while builds:
                build = lowest_square(builds)
                builds &= builds - 1
                moves[n] = code + DIRECTION[to, build]
                n += 1
    if n == 0:
        return legal_moves(state, moves)
    return n


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """The search's verdict: the rules, plus a climb at hand (``WIN_NEXT``) or an unstoppable one
    (``LOSS_AFTER_REPLY``)."""
    if state[CLIMBED]:
        return LOSS
    if state[WORKERS] < 0 or state[WORKERS + 2] < 0:
        return RUNNING
    seat = state[TO_MOVE]
    m1, m2, m3, m4 = level_masks(state)
    workers = worker_mask(state)
    mine = WORKERS + 2 * seat
    a, b = state[mine], state[mine + 1]
    height_a, height_b = state[a], state[b]
    steps_a = reach(a, height_a, workers, m2, m3, m4)
    steps_b = reach(b, height_b, workers, m2, m3, m4)
    if not steps_a | steps_b:
        return LOSS  # no legal turn
    if (height_a == 2 and steps_a & m3) or (height_b == 2 and steps_b & m3):
        return WIN_NEXT
    targets = climb_squares(state, 1 - seat, workers, m3)
    if not targets:
        return RUNNING
    if targets & (targets - 1):
        # One turn domes one square. (Only in a set-up position can a worker on level 3 step
        # across onto one threatened square and dome another: leave that to the search.)
        return RUNNING if height_a == 3 or height_b == 3 else LOSS_AFTER_REPLY
    # Some worker steps next to the target and domes it (or, from level 3, steps onto it).
    if (steps_a | steps_b) & NEIGHBOUR_MASK[lowest_square(targets)]:
        return RUNNING
    if (height_a == 3 and steps_a & targets) or (height_b == 3 and steps_b & targets):
        return RUNNING
    return LOSS_AFTER_REPLY


# --- Evaluation and ordering ----------------------------------------------------------------------


@njit(cache=True)
def side_value(state: np.ndarray, seat: int, workers: int, m1: int, m2: int, m3: int, m4: int) -> int:
    """Points of ``seat``'s two workers: level, climbs within reach, mobility and centrality."""
    value = 0
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        height = state[frm]
        steps = reach(frm, height, workers, m2, m3, m4)
        mobility = count_squares(steps)
        value += HEIGHT_POINTS[height] + CENTRE_POINTS * CENTRE[frm] + MOBILITY_POINTS * mobility
        if height == 0:
            value += STEP_UP_POINTS[0] * count_squares(steps & m1)
        elif height == 1:
            value += STEP_UP_POINTS[1] * count_squares(steps & m2)
        elif height == 2:
            value += STEP_UP_POINTS[2] * count_squares(steps & m3) + LEVEL_TWO_POINTS * count_squares(steps & m2)
        if mobility == 0:
            value -= TRAPPED_POINTS
    return value


@njit(cache=True)
def evaluate(state: np.ndarray) -> int:
    """Heuristic value for the side to move (``game_result`` has settled every climb at hand)."""
    seat = state[TO_MOVE]
    if state[WORKERS] < 0 or state[WORKERS + 2] < 0:  # setup: central squares are better
        value = 0
        for i in range(4):
            square = state[WORKERS + i]
            if square >= 0:
                value += CENTRE[square] if i // 2 == seat else -CENTRE[square]
        return CENTRE_POINTS * value
    m1, m2, m3, m4 = level_masks(state)
    workers = worker_mask(state)
    value = (side_value(state, seat, workers, m1, m2, m3, m4)
             - side_value(state, 1 - seat, workers, m1, m2, m3, m4) + TEMPO_POINTS)
    if climb_squares(state, 1 - seat, workers, m3):
        value -= THREAT_POINTS
    return value


@njit(cache=True)
def order_hint(state: np.ndarray, move: int) -> int:
    """Climbs first; domes on the opponent's climbs; no new level 3 next to an opponent on level 2."""
    if move >= PLACE_BASE:
        return CENTRE[(move - PLACE_BASE) // SQUARES] + CENTRE[(move - PLACE_BASE) % SQUARES]
    if move >= WIN_BASE:
        return 1000
    seat = state[TO_MOVE]
    frm = state[WORKERS + 2 * seat + move // 64]
    to = NEIGHBOUR[frm, (move // 8) % 8]
    build = NEIGHBOUR[to, move % 8]
    height, level = state[to], state[build]
    hint = 4 * height + 3 * (height - state[frm])
    other = WORKERS + 2 * (1 - seat)
    near_high_opponent = False
    for i in range(2):
        square = state[other + i]
        if state[square] >= 2 and ADJACENT[square, build]:
            near_high_opponent = True
    if level == 3 and near_high_opponent:
        hint += 30  # a dome where the opponent could climb
    elif level == 2:
        if near_high_opponent:
            hint -= 20  # would hand the opponent a climb onto level 3
        elif height == 2:
            hint += 8  # a level 3 next to our own worker on level 2: a threat
    elif level == 1 and height >= 1:
        hint += 2
    return hint


@njit(cache=True)
def order_hints(state: np.ndarray, moves: np.ndarray, n: int, hints: np.ndarray) -> None:
    """:func:`order_hint` of each of the first ``n`` moves, what stands where worked out once for them all."""
    if n == 0:
        return
    if moves[0] >= WIN_BASE:  # placements, or the one winning climb
        for i in range(n):
            hints[i] = order_hint(state, moves[i])
        return
    m1, m2, m3, m4 = level_masks(state)
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    other = WORKERS + 2 * (1 - seat)
    near_high = 0  # next to an opponent on level 2 or higher
    for i in range(2):
        square = state[other + i]
        if square >= 0 and state[square] >= 2:
            near_high |= NEIGHBOUR_MASK[square]
    for i in range(n):
        move = moves[i]
        if move >= WIN_BASE:
            hints[i] = order_hint(state, move)
            continue
        frm = state[mine + move // 64]
        to = NEIGHBOUR[frm, (move // 8) % 8]
        bit = 1 << NEIGHBOUR[to, move % 8]
        height = state[to]
        hint = 4 * height + 3 * (height - state[frm])
        if bit & m3:
            if bit & near_high:
                hint += 30
        elif bit & m2:
            if bit & near_high:
                hint -= 20
            elif height == 2:
                hint += 8
        elif bit & m1 and height >= 1:
            hint += 2
        hints[i] = hint


@njit(cache=True)
def legal(state: np.ndarray, move: int) -> bool:
    """True when ``move`` is a legal move code in ``state`` (any code, e.g. a killer from another position)."""
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    if move >= PLACE_BASE:
        if state[mine] >= 0 or move >= PLACE_BASE + SQUARES * SQUARES:
            return False
        first, second = (move - PLACE_BASE) // SQUARES, (move - PLACE_BASE) % SQUARES
        return (first < second and state[first] != DOME and state[second] != DOME
                and not occupied(state, first) and not occupied(state, second))
    if state[mine] < 0 or state[WORKERS + 2 * (1 - seat)] < 0:
        return False
    if move >= WIN_BASE:
        frm = state[mine + (move - WIN_BASE) // 8]
        to = NEIGHBOUR[frm, (move - WIN_BASE) % 8]
        return to >= 0 and state[frm] == 2 and state[to] == 3 and not occupied(state, to)
    frm = state[mine + move // 64]
    to = NEIGHBOUR[frm, (move // 8) % 8]
    if to < 0 or occupied(state, to):
        return False
    height = state[to]
    if height == DOME or height > state[frm] + 1 or (height == 3 and state[frm] == 2):
        return False  # (a step from level 2 onto level 3 is a winning climb, which has its own code)
    build = NEIGHBOUR[to, move % 8]
    return build >= 0 and state[build] != DOME and (build == frm or not occupied(state, build))


@njit(cache=True)
def past_setup(state: np.ndarray) -> bool:
    """Both seats' workers are placed. The search's ``reduce_late`` and ``prune_late`` hooks: late moves are
    searched shallower first, or near the horizon not at all, once setup is over (setup's placements are all
    searched in full)."""
    return state[WORKERS] >= 0 and state[WORKERS + 2] >= 0


@njit(cache=True)
def extend(state: np.ndarray) -> bool:
    """A forcing move: it left the side to move facing a climb onto level 3, which it must dome."""
    return past_setup(state) and threatens_climb(state, 1 - state[TO_MOVE])


@njit(cache=True)
def may_pass(state: np.ndarray) -> bool:
    """Null-move pruning after setup, except against a climb the side to move must dome."""
    return past_setup(state) and not threatens_climb(state, 1 - state[TO_MOVE])


@njit(cache=True)
def pass_turn(state: np.ndarray) -> None:
    """Hand the move to the other seat (a null move: its own inverse)."""
    state[TO_MOVE] ^= 1


search = make_search(
    "santorini", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint, order_hints=order_hints, extend=extend, legal=legal,
    may_pass=may_pass, pass_turn=pass_turn, reduce_late=past_setup, prune_late=past_setup,
)
"""The shared search, compiled for Santorini."""
