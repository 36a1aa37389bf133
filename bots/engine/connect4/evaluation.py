"""The heuristic side of the Connect Four engine: the search hooks beyond the rules, and its compiled search.

When the exact solver cannot finish in time, the master falls back on the
shared search (``search.py``) with this evaluation, built on odd/even threats
and on how many lines of four pass through each stone.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..bits import popcount
from ..search import make_search
from .position import (
    HEIGHT,
    ODD_ROWS,
    ONE,
    WIDTH,
    bottom_square,
    column_mask,
    game_result,
    key,
    lowest_column,
    non_losing_moves,
    play,
    playable,
    undo,
    winning_squares,
)

WIN_AT_HAND = 1000
"""Heuristic value of being able to win with the next stone (the search proves it a ply later)."""
GOOD_THREAT = 24
"""A threat on its owner's rows (odd for the first player, even for the second) that is the lowest
threat of its column: under zugzwang at the end of the game its owner gets that square."""
OTHER_THREAT = 6
LONE_GOOD_THREAT = 32
"""Extra when only one side has good threats: by Allis' rules it usually wins."""


def _square_weights() -> tuple[tuple[int, ...], tuple[np.uint64, ...]]:
    # Each square's weight is the number of lines of four through it (3 in a corner, 13 in the centre).
    weight = {}
    for row in range(HEIGHT):
        for column in range(WIDTH):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                if 0 <= column + 3 * dc < WIDTH and 0 <= row + 3 * dr < HEIGHT:
                    for k in range(4):
                        square = 7 * (column + k * dc) + row + k * dr
                        weight[square] = weight.get(square, 0) + 1
    values = sorted(set(weight.values()))
    masks = tuple(np.uint64(sum(1 << s for s, w in weight.items() if w == v)) for v in values)
    return tuple(values), masks


WEIGHTS, WEIGHT_MASKS = _square_weights()


@njit(cache=True)
def square_value(stones: np.uint64) -> int:
    """Sum of the weights of the squares ``stones`` occupy."""
    total = 0
    for i in range(len(WEIGHTS)):
        total += WEIGHTS[i] * popcount(stones & WEIGHT_MASKS[i])
    return total


@njit(cache=True)
def threat_value(first: np.uint64, second: np.uint64) -> int:
    """Odd/even threat analysis, for the first player: ``first``/``second`` are each side's
    empty winning squares. In each column only the lowest threat counts (the column fills
    from below, so it decides the column); a square both sides threaten goes to the side of
    its row parity."""
    good_first = good_second = other = 0
    for column in range(WIDTH):
        in_column = column_mask(column)
        threats = (first | second) & in_column
        if threats == 0:
            continue
        lowest = threats & (~threats + ONE)
        odd = (lowest & ODD_ROWS) != 0
        if lowest & first and (odd or not lowest & second):
            if odd:
                good_first += 1
            else:
                other += 1
        else:
            if not odd:
                good_second += 1
            else:
                other -= 1
    value = GOOD_THREAT * (good_first - good_second) + OTHER_THREAT * other
    if good_first and not good_second:
        value += LONE_GOOD_THREAT
    elif good_second and not good_first:
        value -= LONE_GOOD_THREAT
    return value


@njit(cache=True)
def evaluate(state: np.ndarray) -> int:
    """Heuristic value for the side to move: immediate wins, odd/even threats, central stones."""
    position, mask, stones = state[0], state[1], int(state[2])
    opponent = position ^ mask
    free = playable(mask)
    mine = winning_squares(position, mask)
    if mine & free:
        return WIN_AT_HAND
    theirs = winning_squares(opponent, mask)
    theirs_now = theirs & free
    if theirs_now & (theirs_now - ONE):
        return -WIN_AT_HAND  # two threats at once: cannot block both
    threats = threat_value(mine, theirs) if stones % 2 == 0 else -threat_value(theirs, mine)
    return threats + square_value(position) - square_value(opponent)


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """Columns worth searching: a winning one if any; else those that do not lose at once
    (all of them when every move loses)."""
    position, mask = state[0], state[1]
    free = playable(mask)
    wins = free & winning_squares(position, mask)
    if wins:
        moves[0] = lowest_column(wins)
        return 1
    candidates = non_losing_moves(position, mask)
    if candidates == 0:
        candidates = free
    n = 0
    for column in range(WIDTH):
        if candidates & column_mask(column):
            moves[n] = column
            n += 1
    return n


@njit(cache=True)
def order_hint(state: np.ndarray, column: int) -> int:
    """Winning squares the move makes, then centrality."""
    position, mask = state[0], state[1]
    square = (mask + bottom_square(column)) & column_mask(column)
    return 8 * popcount(winning_squares(position | square, mask)) + 3 - abs(column - 3)


search = make_search(
    "connect4", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The shared search, compiled for Connect Four."""
