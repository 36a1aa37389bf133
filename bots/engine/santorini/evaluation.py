"""How the Santorini search judges positions: its verdicts, the evaluation, move ordering, and the search.

The ``game_result`` hook does more than the rules: besides a climb just made
and a side with no legal turn, it scores as decided a position where the side
to move can climb onto level 3 at once (a win), and one where the opponent
threatens such a climb that no move can stop (a loss: two threatened squares,
or one that no worker can reach to dome). These are exact, and cut the tree
two plies early. Setup is searched like any other move (300 placements,
ordered central squares first): two plies of setup are cheap, and the
evaluation sees the first turns that follow.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..search import LOSS, RUNNING, WIN, make_search
from .position import (
    ADJACENT,
    DOME,
    NEIGHBOUR,
    PLACE_BASE,
    SQUARES,
    TO_MOVE,
    WIN_BASE,
    WORKERS,
    can_step,
    key,
    legal_moves,
    occupied,
    play,
    rules_result,
    undo,
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
def climb_targets(state: np.ndarray, seat: int) -> tuple[int, int]:
    """Free level-3 squares next to a level-2 worker of ``seat``: how many (0, 1 or 2+), and one of them."""
    count, target = 0, -1
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        if state[frm] != 2:
            continue
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to >= 0 and state[to] == 3 and to != target and not occupied(state, to):
                if target >= 0:
                    return 2, target
                count, target = 1, to
    return count, target


@njit(cache=True)
def can_block(state: np.ndarray, seat: int, target: int) -> bool:
    """True when some turn of ``seat`` domes ``target`` (or stands on it without climbing there from 2)."""
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to < 0 or not can_step(state, frm, to):
                continue
            if to == target:
                if state[frm] == 3:
                    return True  # only in a set-up position: a step across from level 3 blocks
                continue
            if ADJACENT[to, target]:
                return True
    return False


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """The moves worth searching: :func:`legal_moves` less those that lose at once.

    A climb onto level 3 is the only move needed when there is one. Otherwise,
    when the opponent threatens such a climb, only the moves that dome its
    target (or, in a set-up position, stand on it) are kept; and a build that
    raises a square to level 3 next to an opponent's worker on level 2 hands
    it the win. When every move loses, all of them are kept.
    """
    n = legal_moves(state, moves)
    if n == 0 or moves[0] >= PLACE_BASE:
        return n
    for i in range(n):
        if WIN_BASE <= moves[i] < PLACE_BASE:
            moves[0] = moves[i]
            return 1
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    count, target = climb_targets(state, 1 - seat)
    other = WORKERS + 2 * (1 - seat)
    high0 = state[state[other]] == 2
    high1 = state[state[other + 1]] == 2
    kept = 0
    for i in range(n):
        move = moves[i]
        frm = state[mine + move // 64]
        to = NEIGHBOUR[frm, (move // 8) % 8]
        build = NEIGHBOUR[to, move % 8]
        if count > 0:
            keep = build == target or to == target
        else:
            keep = not (
                state[build] == 2
                and ((high0 and ADJACENT[state[other], build]) or (high1 and ADJACENT[state[other + 1], build]))
            )
        if keep:
            moves[kept] = move
            kept += 1
    if kept == 0:
        return legal_moves(state, moves)
    return kept


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """The search's verdict: the rules, plus a climb at hand (``WIN``) or an unstoppable one (``LOSS``)."""
    result = rules_result(state)
    if result != RUNNING or state[WORKERS] < 0 or state[WORKERS + 2] < 0:
        return result
    seat = state[TO_MOVE]
    if climb_targets(state, seat)[0] > 0:
        return WIN
    count, target = climb_targets(state, 1 - seat)
    if count == 1 and not can_block(state, seat, target):
        return LOSS
    if count >= 2:
        # One turn domes one square. (Only in a set-up position can a worker on level 3 step
        # across onto one threatened square and dome another: leave that to the search.)
        mine = WORKERS + 2 * seat
        if state[state[mine]] != 3 and state[state[mine + 1]] != 3:
            return LOSS
    return RUNNING


# --- Evaluation and ordering ----------------------------------------------------------------------


@njit(cache=True)
def side_value(state: np.ndarray, seat: int) -> int:
    """Points of ``seat``'s two workers: level, climbs within reach, mobility and centrality."""
    value = 0
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        height = state[frm]
        value += HEIGHT_POINTS[height] + CENTRE_POINTS * CENTRE[frm]
        mobility = 0
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to < 0 or occupied(state, to):
                continue
            level = state[to]
            if level == DOME or level > height + 1:
                continue
            mobility += 1
            if level == height + 1:
                value += STEP_UP_POINTS[height]
            elif height == 2 and level == 2:
                value += LEVEL_TWO_POINTS
        value += MOBILITY_POINTS * mobility
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
    value = side_value(state, seat) - side_value(state, 1 - seat) + TEMPO_POINTS
    if climb_targets(state, 1 - seat)[0] > 0:
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
def extend(state: np.ndarray) -> bool:
    """A forcing move: it left the side to move facing a climb onto level 3, which it must dome."""
    return state[WORKERS] >= 0 and state[WORKERS + 2] >= 0 and climb_targets(state, 1 - state[TO_MOVE])[0] > 0


search = make_search(
    "santorini", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint, extend=extend,
)
"""The shared search, compiled for Santorini."""
