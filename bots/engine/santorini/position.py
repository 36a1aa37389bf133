"""Santorini positions for the compiled search: one ``int64`` array, its moves, and the rules.

The array (``STATE_SIZE`` long), which the search mutates in place, holds the
25 building levels (0-3, 4 for a dome, square ``row * 5 + col`` as in the
reference rules), the squares of the four workers (seat 0's two, then seat
1's; -1 before they are placed), the seat to move, and whether the last move
climbed onto level 3 (and so won).

A move is one small int (it indexes the search's history table):

================================  ============================================
``w * 64 + step * 8 + build``      a turn: own worker ``w`` (0/1) steps in direction ``step``,
                                  then builds in direction ``build`` from its new square
``WIN_BASE + w * 8 + step``        a winning climb onto level 3, which has no build
``PLACE_BASE + a * 25 + b``        the setup move placing both workers on ``a < b``
================================  ============================================

Directions are numbered so that ``7 - d`` is the opposite of ``d``, which lets
:func:`undo` walk a worker back. :func:`rules_result` is the plain rules,
which the tests compare with the reference.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from protocol.games.santorini import Placement, SantoriniMove, SantoriniState, WorkerTurn

from ..search import LOSS, RUNNING
from ..squares import neighbour_table

SIZE = 5
SQUARES = SIZE * SIZE
DOME = 4
WORKERS = SQUARES
"""Index of the first worker square in the state array (seat 0's two, then seat 1's)."""
TO_MOVE = WORKERS + 4
CLIMBED = TO_MOVE + 1
"""1 once the last move was a climb onto level 3 (which won): a worker placed on level 3 in a
set-up position has not won, so the level alone cannot tell."""
STATE_SIZE = CLIMBED + 1

WIN_BASE = 128
"""First code of a winning climb (``WIN_BASE + worker * 8 + step``)."""
PLACE_BASE = WIN_BASE + 16
"""First code of a placement (``PLACE_BASE + a * 25 + b``, ``a < b``)."""
MOVE_SPACE = PLACE_BASE + SQUARES * SQUARES
"""Every move code is below this (the size of the search's history table)."""
MAX_MOVES = SQUARES * (SQUARES - 1) // 2
"""300 placements on an empty board; a turn never has more than 2 * 8 * 8 = 128 choices."""

NEIGHBOUR = neighbour_table(SIZE)
"""``NEIGHBOUR[square, d]``: the square next to ``square`` in direction ``d``, or -1 off the board."""
ADJACENT = np.zeros((SQUARES, SQUARES), np.bool_)
for _square in range(SQUARES):
    for _other in NEIGHBOUR[_square]:
        if _other >= 0:
            ADJACENT[_square, _other] = True

NEIGHBOUR_MASK = np.zeros(SQUARES, np.int64)
"""``NEIGHBOUR_MASK[square]``: the squares next to ``square`` as a 25-bit mask (the search's sets of squares)."""
DIRECTION = np.full((SQUARES, SQUARES), -1, np.int64)
"""``DIRECTION[square, other]``: the direction from ``square`` to its neighbour ``other`` (-1: not neighbours).
Directions grow with the square they lead to, so a mask's squares lowest first are its directions in order."""
for _square in range(SQUARES):
    for _d, _other in enumerate(NEIGHBOUR[_square]):
        if _other >= 0:
            NEIGHBOUR_MASK[_square] |= 1 << _other
            DIRECTION[_square, _other] = _d
assert all(np.all(np.diff(row[row >= 0]) > 0) for row in NEIGHBOUR)  # the order DIRECTION's note relies on

_rng = np.random.default_rng(20240521)
ZOBRIST_LEVEL = _rng.integers(0, np.iinfo(np.uint64).max, (SQUARES, 5), dtype=np.uint64, endpoint=True)
ZOBRIST_LEVEL[:, 0] = 0
ZOBRIST_WORKER = _rng.integers(0, np.iinfo(np.uint64).max, (2, SQUARES), dtype=np.uint64, endpoint=True)
ZOBRIST_SIDE = np.uint64(_rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True))
del _rng


def from_state(state: SantoriniState) -> np.ndarray:
    """The engine array of a reference position."""
    array = np.zeros(STATE_SIZE, np.int64)
    array[:SQUARES] = state.levels
    array[WORKERS : WORKERS + 4] = state.workers
    array[TO_MOVE] = state.to_move
    mover = state.workers[2 * (1 - state.to_move) : 4 - 2 * state.to_move]
    if state.result is not None and any(square >= 0 and state.levels[square] == 3 for square in mover):
        array[CLIMBED] = 1
    return array


def to_reference(array: np.ndarray, move: int) -> SantoriniMove:
    """The reference move for engine move ``move`` in the position ``array`` (before the move)."""
    move = int(move)
    if move >= PLACE_BASE:
        first, second = divmod(move - PLACE_BASE, SQUARES)
        return Placement(first, second)
    seat = int(array[TO_MOVE])
    if move >= WIN_BASE:
        worker, step = divmod(move - WIN_BASE, 8)
        square = int(array[WORKERS + 2 * seat + worker])
        return WorkerTurn(square, int(NEIGHBOUR[square, step]), None)
    worker, rest = divmod(move, 64)
    step, build = divmod(rest, 8)
    square = int(array[WORKERS + 2 * seat + worker])
    to = int(NEIGHBOUR[square, step])
    return WorkerTurn(square, to, int(NEIGHBOUR[to, build]))


def from_reference(array: np.ndarray, move: SantoriniMove) -> int:
    """The engine code of a reference move in the position ``array``; ``ValueError`` if it has none."""
    if isinstance(move, Placement):
        first, second = sorted((move.first, move.second))
        return PLACE_BASE + first * SQUARES + second
    seat = int(array[TO_MOVE])
    for worker in range(2):
        square = int(array[WORKERS + 2 * seat + worker])
        if square != move.worker:
            continue
        for step in range(8):
            if NEIGHBOUR[square, step] != move.to:
                continue
            if move.build is None:
                return WIN_BASE + worker * 8 + step
            for build in range(8):
                if NEIGHBOUR[move.to, build] == move.build:
                    return worker * 64 + step * 8 + build
    raise ValueError(f"{move} is not a move of a worker of the side to move")


# --- Rules --------------------------------------------------------------------------------------


@njit(cache=True)
def legal_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """Write every legal move (placements during setup) into ``moves``; return how many."""
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    w0, w1, w2, w3 = state[WORKERS], state[WORKERS + 1], state[WORKERS + 2], state[WORKERS + 3]
    n = 0
    if state[mine] < 0:
        for a in range(SQUARES):
            if state[a] == DOME or a == w0 or a == w1 or a == w2 or a == w3:
                continue
            for b in range(a + 1, SQUARES):
                if state[b] == DOME or b == w0 or b == w1 or b == w2 or b == w3:
                    continue
                moves[n] = PLACE_BASE + a * SQUARES + b
                n += 1
        return n
    for worker in range(2):
        frm = state[mine + worker]
        limit = state[frm] + 1
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to < 0:
                continue
            height = state[to]
            if height > limit or height == DOME or to == w0 or to == w1 or to == w2 or to == w3:
                continue
            if height == 3 and limit == 3:
                moves[n] = WIN_BASE + worker * 8 + step
                n += 1
                continue
            for build in range(8):
                square = NEIGHBOUR[to, build]
                if square < 0 or state[square] == DOME:
                    continue
                if square != frm and (square == w0 or square == w1 or square == w2 or square == w3):
                    continue
                moves[n] = worker * 64 + step * 8 + build
                n += 1
    return n


@njit(cache=True)
def play(state: np.ndarray, move: int) -> None:
    """Make ``move`` for the side to move."""
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    if move >= PLACE_BASE:
        state[mine] = (move - PLACE_BASE) // SQUARES
        state[mine + 1] = (move - PLACE_BASE) % SQUARES
    elif move >= WIN_BASE:
        index = mine + (move - WIN_BASE) // 8
        state[index] = NEIGHBOUR[state[index], (move - WIN_BASE) % 8]
        state[CLIMBED] = 1
    else:
        index = mine + move // 64
        to = NEIGHBOUR[state[index], (move // 8) % 8]
        state[index] = to
        state[NEIGHBOUR[to, move % 8]] += 1
    state[TO_MOVE] = 1 - seat


@njit(cache=True)
def undo(state: np.ndarray, move: int) -> None:
    """Take back ``move``, the last move made."""
    seat = 1 - state[TO_MOVE]
    state[TO_MOVE] = seat
    mine = WORKERS + 2 * seat
    if move >= PLACE_BASE:
        state[mine] = -1
        state[mine + 1] = -1
    elif move >= WIN_BASE:
        index = mine + (move - WIN_BASE) // 8
        state[index] = NEIGHBOUR[state[index], 7 - (move - WIN_BASE) % 8]
        state[CLIMBED] = 0
    else:
        index = mine + move // 64
        to = state[index]
        state[NEIGHBOUR[to, move % 8]] -= 1
        state[index] = NEIGHBOUR[to, 7 - (move // 8) % 8]


@njit(cache=True)
def key(state: np.ndarray) -> np.uint64:
    """Zobrist key of the levels, the workers of each seat (in either order) and the side to move."""
    k = np.uint64(0)
    for square in range(SQUARES):
        k ^= ZOBRIST_LEVEL[square, state[square]]
    for i in range(4):
        square = state[WORKERS + i]
        if square >= 0:
            k ^= ZOBRIST_WORKER[i // 2, square]
    if state[TO_MOVE]:
        k ^= ZOBRIST_SIDE
    return k


@njit(cache=True)
def occupied(state: np.ndarray, square: int) -> bool:
    """True when a worker stands on ``square``."""
    return (
        state[WORKERS] == square or state[WORKERS + 1] == square
        or state[WORKERS + 2] == square or state[WORKERS + 3] == square
    )


@njit(cache=True)
def can_step(state: np.ndarray, frm: int, to: int) -> bool:
    """True when a worker on ``frm`` may step onto the neighbouring square ``to``."""
    height = state[to]
    return height != DOME and height <= state[frm] + 1 and not occupied(state, to)


@njit(cache=True)
def rules_result(state: np.ndarray) -> int:
    """The rules alone: ``LOSS`` after the opponent's climb onto level 3 or with no legal turn."""
    if state[CLIMBED]:
        return LOSS
    seat = state[TO_MOVE]
    if state[WORKERS] < 0 or state[WORKERS + 2] < 0:
        return RUNNING
    mine = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[mine + worker]
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to >= 0 and can_step(state, frm, to):
                return RUNNING
    return LOSS


# --- Sets of squares, for the search ----------------------------------------------------------------
# The search's hot paths (verdicts, evaluation, move generation) work on 25-bit masks of squares
# built once per call from the levels, rather than square by square.


@njit(cache=True)
def level_masks(state: np.ndarray) -> tuple[int, int, int, int]:
    """The squares at level 1, 2 and 3 and the domes, as masks."""
    m1 = m2 = m3 = m4 = 0
    for square in range(SQUARES):
        level = state[square]
        m1 |= int(level == 1) << square
        m2 |= int(level == 2) << square
        m3 |= int(level == 3) << square
        m4 |= int(level == DOME) << square
    return m1, m2, m3, m4


@njit(cache=True)
def worker_mask(state: np.ndarray) -> int:
    """The squares the placed workers stand on."""
    mask = 0
    for i in range(4):
        square = state[WORKERS + i]
        if square >= 0:
            mask |= 1 << square
    return mask


@njit(cache=True)
def reach(frm: int, height: int, workers: int, m2: int, m3: int, m4: int) -> int:
    """The squares a worker on ``frm`` at ``height`` may step onto (``workers``, ``m2``.. as above)."""
    squares = NEIGHBOUR_MASK[frm] & ~workers & ~m4
    if height == 0:
        return squares & ~(m2 | m3)
    if height == 1:
        return squares & ~m3
    return squares


@njit(cache=True)
def count_squares(mask: int) -> int:
    """How many squares a mask holds (a population count of 25 bits). Masks here are ``int64``, not the
    ``uint64`` words of :mod:`~bots.engine.bits`: numba types a mix of the two as ``float64``."""
    mask = mask - ((mask >> 1) & 0x55555555)
    mask = (mask & 0x33333333) + ((mask >> 2) & 0x33333333)
    mask = (mask + (mask >> 4)) & 0x0F0F0F0F
    return ((mask * 0x01010101) >> 24) & 0xFF


@njit(cache=True)
def lowest_square(mask: int) -> int:
    """The lowest square of a non-empty mask."""
    return count_squares((mask & -mask) - 1)
