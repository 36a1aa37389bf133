"""How the Quarto search judges positions and picks the moves it looks at, the compiled search, and a solver.

Two rules keep the tree small without changing any value (so the search stays
exact once it reaches the end of the game):

* a placement that wins is the only move searched (nothing scores better);
* a piece that would let the opponent win at once (it completes some line of
  three that share an attribute) is never handed over while another, *safe*,
  piece exists after some placement; a placement that leaves no safe piece is
  searched only when every placement does, and then only one such move (all
  lose at the opponent's next turn).

The heuristic (used only at the search horizon) counts *safe pieces*: pieces
that complete no line of three. The player who must hand over a piece when
none is safe loses, so with a static board the side that leaves an odd number
of safe pieces after its placement wins the parity race; the evaluation looks
one placement ahead for such a square.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..search import Searcher, make_search
from .position import (
    AVAILABLE,
    DANGERS,
    EMPTY_SQUARES,
    IN_HAND,
    LINE_BITS_OF,
    LINE_COUNTS,
    LINE_DANGER,
    MAX_MOVES,
    MOVE_SPACE,
    NO_PIECE,
    OPENING,
    PIECE_COUNT,
    SAFE,
    game_result,
    key,
    legal_moves,
    lowest16,
    play,
    plies_left,
    popcount16,
    undo,
    winning_square,
)

WIN_AT_HAND = 1000
"""Heuristic value of holding a piece that wins: the search proves it a ply later."""
PARITY = 40
"""Heuristic value of a placement that leaves an odd number of safe pieces (see the module notes)."""


@njit(cache=True)
def base_danger(state: np.ndarray, dangers: np.ndarray) -> None:
    """Per line, the pieces completing it on the current board (``dangers[line]``)."""
    for line in range(10):
        dangers[line] = LINE_DANGER[state[LINE_COUNTS + line]]


@njit(cache=True)
def deadly_after(state: np.ndarray, dangers: np.ndarray, square: int, piece: int) -> int:
    """Pieces that would win somewhere once ``piece`` (which does not win) is on ``square``."""
    through = LINE_BITS_OF[square]
    added = PIECE_COUNT[piece]
    deadly = 0
    for line in range(10):
        if through >> line & 1:
            deadly |= LINE_DANGER[state[LINE_COUNTS + line] + added]
        else:
            deadly |= dangers[line]
    return deadly


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """The moves worth searching (see the module notes): a win alone; else safe hand-overs.

    Also leaves, per square, the mask of safe pieces in ``state[SAFE + square]`` for
    :func:`order_hint`.
    """
    hand = state[IN_HAND]
    available = state[AVAILABLE]
    if hand == NO_PIECE:
        return legal_moves(state, moves)
    empty = state[EMPTY_SQUARES]
    win = winning_square(state, hand)
    if win >= 0:
        moves[0] = win * 17 + NO_PIECE
        return 1
    if available == 0:  # the last piece fills the board
        moves[0] = lowest16(empty) * 17 + NO_PIECE
        return 1
    dangers = state[DANGERS : DANGERS + 10]
    base_danger(state, dangers)
    n = 0
    remaining = empty
    while remaining:
        s = lowest16(remaining)
        remaining &= remaining - 1
        safe = available & ~deadly_after(state, dangers, s, hand)
        state[SAFE + s] = safe
        while safe:
            p = lowest16(safe)
            safe &= safe - 1
            moves[n] = s * 17 + p
            n += 1
    if n == 0:  # every hand-over lets the opponent win at once: one move stands for all
        moves[0] = lowest16(empty) * 17 + lowest16(available)
        return 1
    return n


@njit(cache=True)
def evaluate(state: np.ndarray) -> int:
    """Heuristic value for the side to move, from the safe pieces its placement leaves.

    Winning at hand is worth ``WIN_AT_HAND``; having to hand over a winning piece
    whatever the placement, minus that; otherwise ``PARITY`` if some placement
    leaves an odd number of safe pieces, else minus ``PARITY``.
    """
    hand = state[IN_HAND]
    if hand == NO_PIECE:
        return 0
    empty = state[EMPTY_SQUARES]
    available = state[AVAILABLE]
    if winning_square(state, hand) >= 0:
        return WIN_AT_HAND
    if available == 0:
        return 0
    dangers = state[DANGERS : DANGERS + 10]
    base_danger(state, dangers)
    any_safe = False
    remaining = empty
    while remaining:
        s = lowest16(remaining)
        remaining &= remaining - 1
        safe = popcount16(available & ~deadly_after(state, dangers, s, hand))
        if safe & 1:
            return PARITY
        if safe:
            any_safe = True
    return -PARITY if any_safe else -WIN_AT_HAND


@njit(cache=True)
def order_hint(state: np.ndarray, move: int) -> int:
    """Placements that leave the opponent the fewest safe pieces first (they squeeze it soonest)."""
    square = move // 17
    if square == OPENING or move - square * 17 == NO_PIECE:
        return 0
    safe = popcount16(state[SAFE + square])
    return 16 - safe


search = make_search(
    "quarto", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The shared search, compiled for Quarto."""


def solve(state: np.ndarray, table_bits: int = 20) -> int:
    """Exact value of a running position for the side to move (no time limit: keep it small).

    A win ``p`` plies ahead scores ``MATE - p``, a loss ``-(MATE - p)``, a draw 0.
    """
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits)
    return searcher.think(state, np.inf, max_depth=plies_left(state)).score
