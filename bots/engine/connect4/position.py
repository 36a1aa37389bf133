"""Connect Four positions as bitboards: the board, its moves, and the search's state array.

A position is two ``uint64`` masks, ``position`` (the stones of the side to
move) and ``mask`` (all stones), with 7 bits per column: bit ``7 * column +
row``, row 0 at the bottom and bit 6 of each column always empty, so a
column's next free square is found by adding its bottom bit. ``position +
mask`` is a unique key of the position. The search holds them in a ``uint64``
array ``[position, mask, stones]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from protocol.games.connect4 import C4State, Drop

from ..bits import lowest_index
from ..search import DRAW, LOSS, RUNNING

WIDTH, HEIGHT = 7, 6
CELLS = WIDTH * HEIGHT

ONE = np.uint64(1)
BOTTOM = np.uint64(sum(1 << (7 * col) for col in range(WIDTH)))
"""The bottom square of every column."""
BOARD = np.uint64(int(BOTTOM) * ((1 << HEIGHT) - 1))
"""Every playable square."""
ODD_ROWS = np.uint64(int(BOTTOM) * 0b010101)
"""Rows 1, 3, 5 counted from the bottom: where the first player's threats are strong."""
COLUMN_ORDER = (3, 4, 2, 5, 1, 6, 0)
"""Centre first: central columns lie in more lines of four."""

S1, S6, S7, S8 = np.uint64(1), np.uint64(6), np.uint64(7), np.uint64(8)
S2, S3, S12, S14, S16 = np.uint64(2), np.uint64(3), np.uint64(12), np.uint64(14), np.uint64(16)
S18, S21, S24 = np.uint64(18), np.uint64(21), np.uint64(24)
"""Shift amounts, as ``uint64``: numba turns ``uint64`` mixed with ``int64`` into ``float64``."""


@njit(cache=True)
def column_mask(column: int) -> np.uint64:
    """The six squares of ``column``."""
    return np.uint64(0b111111) << np.uint64(7 * column)


@njit(cache=True)
def bottom_square(column: int) -> np.uint64:
    """The bottom square of ``column``."""
    return ONE << np.uint64(7 * column)


@njit(cache=True)
def lowest_column(squares: np.uint64) -> int:
    """The column of the lowest set bit of a non-empty set of squares."""
    return lowest_index(squares) // 7


@njit(cache=True)
def playable(mask: np.uint64) -> np.uint64:
    """The square a stone would land on in each column that is not full."""
    return (mask + BOTTOM) & BOARD


@njit(cache=True)
def winning_squares(position: np.uint64, mask: np.uint64) -> np.uint64:
    """Empty squares (playable or not) that would complete a four for ``position``'s stones."""
    p = position
    # vertical: three stones right below
    r = (p << S1) & (p << S2) & (p << S3)
    # horizontal: shift by a column (7 bits)
    q = (p << S7) & (p << S14)
    r |= q & (p << S21)
    r |= q & (p >> S7)
    q = (p >> S7) & (p >> S14)
    r |= q & (p << S7)
    r |= q & (p >> S21)
    # diagonal down-right (6 bits)
    q = (p << S6) & (p << S12)
    r |= q & (p << S18)
    r |= q & (p >> S6)
    q = (p >> S6) & (p >> S12)
    r |= q & (p << S6)
    r |= q & (p >> S18)
    # diagonal up-right (8 bits)
    q = (p << S8) & (p << S16)
    r |= q & (p << S24)
    r |= q & (p >> S8)
    q = (p >> S8) & (p >> S16)
    r |= q & (p << S8)
    r |= q & (p >> S24)
    return r & (BOARD ^ mask)


@njit(cache=True)
def has_four(position: np.uint64) -> bool:
    """True when ``position``'s stones include four in a row in any direction."""
    for shift in (S7, S6, S8, S1):
        pairs = position & (position >> shift)
        if pairs & (pairs >> (shift + shift)):
            return True
    return False


@njit(cache=True)
def non_losing_moves(position: np.uint64, mask: np.uint64) -> np.uint64:
    """Playable squares after which the opponent cannot win at once (empty: every move loses)."""
    moves = playable(mask)
    threats = winning_squares(position ^ mask, mask)
    forced = moves & threats
    if forced:
        if forced & (forced - ONE):
            return np.uint64(0)  # two threats to block: lost
        moves = forced
    return moves & ~(threats >> S1)  # never play right under an opponent's winning square


@njit(cache=True)
def drop(position: np.uint64, mask: np.uint64, column: int) -> tuple[np.uint64, np.uint64]:
    """``(position, mask)`` after the side to move drops in ``column``, now for the opponent."""
    square = (mask + bottom_square(column)) & column_mask(column)
    return position ^ mask, mask | square


def from_moves(moves: str) -> tuple[int, int, int]:
    """Bitboards ``(position, mask, stones)`` after ``moves``, columns 1-7 as in the test sets.

    Raises ``ValueError`` for a bad column, a full column, or a game already won.
    """
    position, mask = np.uint64(0), np.uint64(0)
    for count, char in enumerate(moves):
        if char not in "1234567":
            raise ValueError(f"{char!r} is not a column 1-7 in {moves!r}")
        column = int(char) - 1
        if mask & column_mask(column) == column_mask(column):
            raise ValueError(f"column {char} is full at move {count + 1} of {moves!r}")
        position, mask = drop(position, mask, column)
        if has_four(position ^ mask):
            raise ValueError(f"the game is won at move {count + 1} of {moves!r}")
    return int(position), int(mask), len(moves)


def from_state(state: C4State) -> tuple[int, int, int]:
    """Bitboards ``(position, mask, stones)`` of a reference state, ``position`` for the side to move."""
    mine = state.to_move + 1
    position = mask = stones = 0
    for square, stone in enumerate(state.board):
        if stone:
            row, column = divmod(square, WIDTH)
            bit = 1 << (7 * column + row)
            mask |= bit
            stones += 1
            if stone == mine:
                position |= bit
    return position, mask, stones


def to_drop(column: int) -> Drop:
    """The reference move for an engine column (0-based)."""
    return Drop(int(column))


def legal_columns(mask: int) -> list[int]:
    """Columns (0-based) that are not full, left to right."""
    free = int(playable(np.uint64(mask)))
    return [column for column in range(WIDTH) if free & int(column_mask(column))]


# --- The search's state array [position, mask, stones] -------------------------------------------


@njit(cache=True)
def play(state: np.ndarray, column: int) -> None:
    """Drop a stone of the side to move in ``column``."""
    state[0], state[1] = drop(state[0], state[1], column)
    state[2] += ONE


@njit(cache=True)
def undo(state: np.ndarray, column: int) -> None:
    """Take back the top stone of ``column``."""
    in_column = state[1] & column_mask(column)
    top = (in_column + bottom_square(column)) >> S1
    state[1] ^= top
    state[0] ^= state[1]
    state[2] -= ONE


@njit(cache=True)
def key(state: np.ndarray) -> np.uint64:
    """``position + mask``: unique for every position."""
    return state[0] + state[1]


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """``LOSS`` when the opponent's last stone made four, ``DRAW`` on a full board, else ``RUNNING``."""
    if has_four(state[0] ^ state[1]):
        return LOSS
    if state[2] >= np.uint64(CELLS):
        return DRAW
    return RUNNING
