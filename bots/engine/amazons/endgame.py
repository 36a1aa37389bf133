"""Amazons endgames: once the sides are walled off from each other, the game is a race of moves.

Once no region of non-arrow squares holds queens of both sides, the side that
can make more moves in its own regions wins (the side to move needs strictly
more). Each side can make at most as many moves as its regions have empty
squares, and at least as many as a greedy walk (:func:`greedy_fill`) that
steps a queen to a neighbour and shoots back onto the square it left,
preferring neighbours with fewer free neighbours (Warnsdorff's rule). When
those bounds decide the race, ``game_result`` says so and the search takes the
proven line; the bot then simply follows the walk (:func:`endgame_move`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..search import LOSS, RUNNING, WIN
from .position import ARROW, BLOCKED, EMPTY, NEIGHBOUR, QUEENS, QUEUE, REGION, SQUARES, TO_MOVE, has_turn


@njit(cache=True)
def region_squares(state: np.ndarray, seat: int) -> tuple[int, bool]:
    """Mark (at ``REGION``) the non-arrow squares connected (king steps) to ``seat``'s queens.

    Returns how many of them are empty, and whether an opposing queen is among
    them (the sides are not separated). Every square ``seat`` could ever use is
    marked: arrows stay, so such a region only ever shrinks.
    """
    for square in range(SQUARES):
        state[REGION + square] = 0
    head, tail = 0, 0
    base = QUEENS + 4 * seat
    for i in range(4):
        state[QUEUE + tail] = state[base + i]
        state[REGION + state[base + i]] = 1
        tail += 1
    empty = 0
    enemy = 2 - seat
    while head < tail:
        square = state[QUEUE + head]
        head += 1
        for d in range(8):
            other = NEIGHBOUR[square, d]
            if other < 0 or state[REGION + other] or state[other] == ARROW:
                continue
            state[REGION + other] = 1
            state[QUEUE + tail] = other
            tail += 1
            if state[other] == EMPTY:
                empty += 1
            elif state[other] == enemy:
                return empty, True  # the count is of no use then
    return empty, False


@njit(cache=True)
def greedy_fill(state: np.ndarray, seat: int) -> tuple[int, int]:
    """A number of turns ``seat`` can surely make alone, and the first of them (a move code, or -1).

    Each queen in turn walks by king steps, shooting back onto the square it
    left, always to the neighbour with the fewest free neighbours (ties: lowest
    direction); a walk only uses squares no other walk used, so the count is a
    lower bound on the turns available, whatever the opponent does elsewhere
    once the sides are separated.
    """
    for square in range(SQUARES):
        state[BLOCKED + square] = state[square] != EMPTY
    count, first = 0, -1
    base = QUEENS + 4 * seat
    for i in range(4):
        here = state[base + i]
        while True:
            best, best_free = -1, 9
            for d in range(8):
                step = NEIGHBOUR[here, d]
                if step < 0 or state[BLOCKED + step]:
                    continue
                free = 0
                for e in range(8):
                    beyond = NEIGHBOUR[step, e]
                    if beyond >= 0 and not state[BLOCKED + beyond] and beyond != here:
                        free += 1
                if free < best_free:
                    best, best_free = step, free
            if best < 0:
                break
            if first < 0:
                first = here * 10000 + best * 100 + here
            state[BLOCKED + best] = 1  # the queen stands there; ``here`` stays blocked by the arrow
            here = best
            count += 1
    return count, first


@njit(cache=True)
def race(state: np.ndarray) -> tuple[int, int, int, int, int]:
    """``(separated, my_low, my_high, their_low, their_high)`` for the side to move.

    When the sides are separated, the lows and highs bound how many turns each
    side can still make (see :func:`greedy_fill` and :func:`region_squares`).
    """
    seat = state[TO_MOVE]
    my_high, contact = region_squares(state, seat)
    if contact:
        return 0, 0, 0, 0, 0
    their_high, _ = region_squares(state, 1 - seat)
    my_low = greedy_fill(state, seat)[0]
    their_low = greedy_fill(state, 1 - seat)[0]
    return 1, my_low, my_high, their_low, their_high


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """The rules, plus a separated endgame whose race the turn counts already decide."""
    seat = state[TO_MOVE]
    if not has_turn(state, seat):
        return LOSS
    separated, my_low, my_high, their_low, their_high = race(state)
    if separated:
        if my_low > their_high:  # the side to move needs strictly more turns than the other
            return WIN
        if my_high <= their_low:
            return LOSS
    return RUNNING


@njit(cache=True)
def endgame_move(state: np.ndarray) -> int:
    """A move that keeps a race the turn counts prove won (the first step of the walk), else -1."""
    separated, my_low, _, _, their_high = race(state)
    if separated and my_low > their_high:
        return greedy_fill(state, state[TO_MOVE])[1]
    return -1
