"""Magnetic Cave positions as bitboards: the board, its lines of five, its moves, and the search's state array.

Bitboards: one ``uint64`` per side, bit ``row * 8 + col`` (the reference
square index, row 0 = rank 1). The position is a ``uint64`` array ``[mine,
theirs, bricks, played_for]``, ``mine`` being the bricks of the side to move,
so a move places a brick and swaps the two words; ``played_for`` says which
side the evaluation plays for (see ``from_state``). A square is open when it
is empty and in the first or last column or beside a brick in its row;
shifting the occupied squares one column each way finds them all at once (so
in each row only the outermost empty squares are open).

Lines of five are found by shifts: in each of four directions a square is
"after ``k`` of our bricks" when shifting our bricks ``k`` steps lands on it;
ANDing those masks finds fives and the *threat squares* (empty squares that
complete a five: an open four has two, a broken four one).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from protocol.games.magnetic_cave import Brick, CaveState

from ..bits import list_squares, mix
from ..search import DRAW, LOSS, RUNNING

SIZE = 8
SQUARES = 64
MOVE_SPACE = SQUARES
MAX_MOVES = 16
"""At most two open squares per row."""

ONE = np.uint64(1)
ZERO = np.uint64(0)
FULL = np.uint64(0xFFFFFFFFFFFFFFFF)
FILE_A = np.uint64(0x0101010101010101)
FILE_H = np.uint64(0x8080808080808080)
NOT_A = ~FILE_A
NOT_H = ~FILE_H
S1 = np.uint64(1)
SQUARE_COUNT = np.uint64(SQUARES)
KEY_SALT = np.uint64(0x6A09E667F3BCC909)

SHIFTS = np.array([1, 8, 9, 7], np.uint64)
"""The four directions of a line: along a row, a column, and the two diagonals."""
FORWARD_MASKS = np.array([NOT_A, FULL, NOT_A, NOT_H], np.uint64)
"""What survives a shift up by ``SHIFTS[d]`` without wrapping round a row end."""
BACKWARD_MASKS = np.array([NOT_H, FULL, NOT_H, NOT_A], np.uint64)
"""What survives a shift down by ``SHIFTS[d]`` without wrapping round a row end."""


# --- Bitboards ------------------------------------------------------------------------------------


@njit(cache=True)
def forward(b: np.uint64, d: int) -> np.uint64:
    """``b`` moved one step up direction ``d`` (squares falling off the board are lost)."""
    return (b << SHIFTS[d]) & FORWARD_MASKS[d]


@njit(cache=True)
def backward(b: np.uint64, d: int) -> np.uint64:
    """``b`` moved one step down direction ``d``."""
    return (b >> SHIFTS[d]) & BACKWARD_MASKS[d]


@njit(cache=True)
def open_squares(occupied: np.uint64) -> np.uint64:
    """Empty squares a brick may go on: first or last column, or beside a brick in the row."""
    beside = ((occupied << S1) & NOT_A) | ((occupied >> S1) & NOT_H)
    return (FILE_A | FILE_H | beside) & ~occupied


@njit(cache=True)
def has_five(b: np.uint64) -> bool:
    """True when ``b`` holds five (or more) in a row in some direction."""
    for d in range(4):
        run = b
        for _ in range(4):
            run = b & forward(run, d)
        if run:
            return True
    return False


@njit(cache=True)
def threat_squares(b: np.uint64, empty: np.uint64) -> np.uint64:
    """Empty squares where a brick would give ``b`` five in a row."""
    threats = ZERO
    for d in range(4):
        f1 = forward(b, d)
        f2 = forward(f1, d)
        f3 = forward(f2, d)
        f4 = forward(f3, d)
        g1 = backward(b, d)
        g2 = backward(g1, d)
        g3 = backward(g2, d)
        g4 = backward(g3, d)
        after1 = f1
        after2 = after1 & f2
        after3 = after2 & f3
        before1 = g1
        before2 = before1 & g2
        before3 = before2 & g3
        threats |= (after3 & f4) | (after3 & before1) | (after2 & before2) | (after1 & before3) | (before3 & g4)
    return threats & empty


@njit(cache=True)
def beside(b: np.uint64) -> np.uint64:
    """The squares directly left or right of ``b``'s squares, in the same row."""
    return ((b << S1) & NOT_A) | ((b >> S1) & NOT_H)


# --- Conversions ----------------------------------------------------------------------------------


def from_state(state: CaveState) -> np.ndarray:
    """The engine position ``[mine, theirs, bricks, played_for]`` of a reference state.

    ``mine`` is the side to move, and the evaluation plays for it: ``played_for``
    is the parity of the brick count when that side is to move (see ``OWN_LINES``).
    """
    mine = theirs = bricks = 0
    own = state.to_move + 1
    for square, cell in enumerate(state.board):
        if cell:
            bricks += 1
            if cell == own:
                mine |= 1 << square
            else:
                theirs |= 1 << square
    return np.array([mine, theirs, bricks, bricks % 2], np.uint64)


def plies_left(state: np.ndarray) -> int:
    """The most moves the game can still last: one per empty square."""
    return SQUARES - int(state[2])


def to_brick(move: int) -> Brick:
    """The reference move for an engine move (a square)."""
    return Brick(int(move))


# --- The search's state array ---------------------------------------------------------------------


@njit(cache=True)
def legal_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """Every open square, in index order (all the reference rules allow); 0 once the game is over."""
    if game_result(state) != RUNNING:
        return 0
    return list_squares(open_squares(state[0] | state[1]), moves)


@njit(cache=True)
def play(state: np.ndarray, square: int) -> None:
    """The side to move places a brick on ``square``; the other side is to move."""
    mine = state[0] | (ONE << np.uint64(square))
    state[0] = state[1]
    state[1] = mine
    state[2] += ONE


@njit(cache=True)
def undo(state: np.ndarray, square: int) -> None:
    """Take back the brick on ``square`` (the last one played)."""
    theirs = state[0]
    state[0] = state[1] & ~(ONE << np.uint64(square))
    state[1] = theirs
    state[2] -= ONE


@njit(cache=True)
def key(state: np.ndarray) -> np.uint64:
    """A 64-bit hash of both sides' bricks (the side to move is the first word)."""
    return mix(mix(state[0]) ^ state[1] ^ KEY_SALT)


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """``LOSS`` when the last brick made five, ``DRAW`` on a full board, else ``RUNNING``."""
    if has_five(state[1]):
        return LOSS
    if state[2] >= SQUARE_COUNT:
        return DRAW
    return RUNNING
