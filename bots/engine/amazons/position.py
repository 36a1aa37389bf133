"""Amazons positions for the compiled search: one ``int64`` array, its moves, and the rules.

The array, which the search mutates in place, holds the 100 squares (``row *
10 + col``, row 0 at the bottom; 0 empty, 1 black queen, 2 white queen, 3
arrow, as in the reference rules), the squares of black's four queens then
white's, the seat to move, the ply below the search root (kept by
:func:`play` and :func:`undo`), the widths of the selective search (set by
the bot), and scratch space where the evaluation and move selection keep
their distance maps, queues and scores: the shared search is compiled without
reference counting, so nothing it calls may allocate an array.

A move is ``queen * 10000 + to * 100 + arrow`` (the squares the queen leaves,
reaches and shoots at): under a million, it indexes the search's history
table, and :func:`undo` reads the queen's way back from it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from protocol.games.amazons import AmazonsMove, AmazonsState

from ..search import LOSS, RUNNING
from ..squares import neighbour_table

SIZE = 10
SQUARES = SIZE * SIZE
EMPTY, BLACK, WHITE, ARROW = 0, 1, 2, 3
QUEENS = SQUARES
"""Index of the first queen square in the state array (black's four, then white's)."""
TO_MOVE = QUEENS + 8
PLY = TO_MOVE + 1
"""Plies below the search root (the bot sets 0 before a search)."""
ROOT_WIDTH = PLY + 1
"""How many root moves to search (0: all), chosen by a full evaluation of each child."""
BEAM = ROOT_WIDTH + 1
"""``state[BEAM + p - 1]``: the most moves searched at ply ``p`` (0: all); the last entry holds deeper."""
BEAM_PLIES = 8
MAX_WIDTH = 512
"""The widest a ply below the root may be searched, short of full width."""

# Scratch space: the hooks keep their working arrays in the state array itself, because the
# search is compiled without reference counting, so nothing it calls may allocate.
SCRATCH = BEAM + BEAM_PLIES
MY_QUEEN_DIST = SCRATCH
THEIR_QUEEN_DIST = MY_QUEEN_DIST + SQUARES
MY_KING_DIST = THEIR_QUEEN_DIST + SQUARES
THEIR_KING_DIST = MY_KING_DIST + SQUARES
QUEUE = THEIR_KING_DIST + SQUARES
REGION = QUEUE + SQUARES
BLOCKED = REGION + SQUARES
LINES = BLOCKED + SQUARES
BEST = LINES + SQUARES
"""Scores of the moves kept so far by :func:`select_moves` (``MAX_WIDTH`` of them)."""
VALUES = BEST + MAX_WIDTH
"""Values of the root moves when the root is narrowed (one per legal move)."""

MOVE_SPACE = SQUARES * SQUARES * SQUARES
"""Move codes ``queen * 10000 + to * 100 + arrow`` are below a million."""
MAX_MOVES = 4 * 35 * 35
"""A queen reaches at most 35 squares, and shoots from there at most 35 ways."""
STATE_SIZE = VALUES + MAX_MOVES
INF = 99
"""Distance of a square a side cannot reach."""

DEFAULT_ROOT_WIDTH = 60
"""Root moves searched: the 60 best by the evaluation of the position they lead to."""
DEFAULT_BEAM = (16, 10, 8, 6, 5, 4, 4, 4)
"""Widths per ply below the root: a dozen or so replies, then fewer and fewer."""

NEIGHBOUR = neighbour_table(SIZE)
"""``NEIGHBOUR[square, d]``: the square next to ``square`` in direction ``d``, or -1 off the board."""

_rng = np.random.default_rng(20240522)
ZOBRIST = _rng.integers(0, np.iinfo(np.uint64).max, (SQUARES, 4), dtype=np.uint64, endpoint=True)
ZOBRIST[:, EMPTY] = 0
ZOBRIST_SIDE = np.uint64(_rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True))
del _rng


# --- Conversions ----------------------------------------------------------------------------------


def from_state(state: AmazonsState) -> np.ndarray:
    """The engine array of a reference position, with the default search widths and ply 0."""
    array = np.zeros(STATE_SIZE, np.int64)
    array[:SQUARES] = state.board
    for seat in (0, 1):
        squares = [square for square in range(SQUARES) if state.board[square] == seat + 1]
        if len(squares) != 4:
            raise ValueError(f"seat {seat} has {len(squares)} queens, not 4")
        array[QUEENS + 4 * seat : QUEENS + 4 * seat + 4] = squares
    array[TO_MOVE] = state.to_move
    set_widths(array, DEFAULT_ROOT_WIDTH, DEFAULT_BEAM)
    return array


def set_widths(array: np.ndarray, root_width: int, beam: tuple[int, ...]) -> None:
    """Set how selective the search of ``array`` is (0 anywhere: full width there)."""
    if not 0 <= root_width <= MAX_MOVES or not all(0 <= width <= MAX_WIDTH for width in beam):
        raise ValueError(f"widths are 0 (full width) to {MAX_WIDTH} below the root, {MAX_MOVES} at it")
    array[ROOT_WIDTH] = root_width
    widths = list(beam)[:BEAM_PLIES]
    widths += [widths[-1] if widths else 0] * (BEAM_PLIES - len(widths))
    array[BEAM : BEAM + BEAM_PLIES] = widths


def to_reference(move: int) -> AmazonsMove:
    """The reference move of an engine move code."""
    move = int(move)
    return AmazonsMove(move // 10000, move // 100 % 100, move % 100)


def from_reference(move: AmazonsMove) -> int:
    """The engine move code of a reference move."""
    return move.queen * 10000 + move.to * 100 + move.arrow


# --- Rules ----------------------------------------------------------------------------------------


@njit(cache=True)
def legal_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """Write every legal turn of the side to move into ``moves``; return how many."""
    seat = state[TO_MOVE]
    base = QUEENS + 4 * seat
    n = 0
    for i in range(4):
        queen = state[base + i]
        stone = state[queen]
        state[queen] = EMPTY  # the arrow may fly through or onto the square the queen left
        for d in range(8):
            to = NEIGHBOUR[queen, d]
            while to >= 0 and state[to] == EMPTY:
                for e in range(8):
                    arrow = NEIGHBOUR[to, e]
                    while arrow >= 0 and state[arrow] == EMPTY:
                        moves[n] = queen * 10000 + to * 100 + arrow
                        n += 1
                        arrow = NEIGHBOUR[arrow, e]
                to = NEIGHBOUR[to, d]
        state[queen] = stone
    return n


@njit(cache=True)
def play(state: np.ndarray, move: int) -> None:
    """Make ``move`` for the side to move."""
    seat = state[TO_MOVE]
    queen, to, arrow = move // 10000, move // 100 % 100, move % 100
    base = QUEENS + 4 * seat
    for i in range(4):
        if state[base + i] == queen:
            state[base + i] = to
    state[queen] = EMPTY
    state[to] = seat + 1
    state[arrow] = ARROW
    state[TO_MOVE] = 1 - seat
    state[PLY] += 1


@njit(cache=True)
def undo(state: np.ndarray, move: int) -> None:
    """Take back ``move``, the last move made."""
    seat = 1 - state[TO_MOVE]
    queen, to, arrow = move // 10000, move // 100 % 100, move % 100
    state[arrow] = EMPTY  # first: the arrow may stand on the square the queen left
    state[to] = EMPTY
    state[queen] = seat + 1
    base = QUEENS + 4 * seat
    for i in range(4):
        if state[base + i] == to:
            state[base + i] = queen
    state[TO_MOVE] = seat
    state[PLY] -= 1


@njit(cache=True)
def key(state: np.ndarray) -> np.uint64:
    """Zobrist key of the squares and the side to move."""
    k = np.uint64(0)
    for square in range(SQUARES):
        k ^= ZOBRIST[square, state[square]]
    if state[TO_MOVE]:
        k ^= ZOBRIST_SIDE
    return k


@njit(cache=True)
def has_turn(state: np.ndarray, seat: int) -> bool:
    """True when a queen of ``seat`` has an empty neighbour (it can step there and shoot back)."""
    base = QUEENS + 4 * seat
    for i in range(4):
        queen = state[base + i]
        for d in range(8):
            square = NEIGHBOUR[queen, d]
            if square >= 0 and state[square] == EMPTY:
                return True
    return False


@njit(cache=True)
def rules_result(state: np.ndarray) -> int:
    """The rules alone: ``LOSS`` when the side to move has no legal turn, else ``RUNNING``."""
    return RUNNING if has_turn(state, state[TO_MOVE]) else LOSS
