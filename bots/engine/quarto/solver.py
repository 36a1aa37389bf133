"""Quarto's exact solver: the value of a position (win, draw or loss, by distance) and a best move.

The shared search treats a turn (place, then hand over) as one move, with a
heuristic at its horizon, iterative deepening and a key made for any depth.
Solving needs none of that, so this solver is a search of its own, built for
speed once the end is in reach (``benchmarks/quarto_solver.py`` measures it
against a C++ reference solver):

* **Bitboards only.** A position is the mask of occupied squares and, per
  attribute, the mask of squares whose piece has it; the pieces still to give
  are those not on the board or in hand. No piece array, no line counters.
* **Safe pieces by table.** ``LOSING_SQUARES[m]`` says which empty squares would
  complete a line of squares that all lie in ``m``; so for each attribute value
  one lookup tells whether some empty square makes four sharing it, and
  ``SAFE_PIECES`` turns those eight answers into the pieces that complete no
  line. A side with no safe piece to hand over has lost: its opponent wins
  with its next placement. Unsafe pieces are never searched.
* **Two levels a turn.** Hand-over nodes (the value of "which piece do I give")
  hold the table entries; the placements of the piece given are a loop inside
  them. Their value bounds shrink with the empty squares left, as in Pascal
  Pons' Connect Four solver, so a window tightens before any move is tried.
* **A canonical exact key.** A hand-over node is its board alone. Per
  attribute, the squares having it and the squares lacking it are the same
  thing up to complementing the attribute, and attributes are interchangeable:
  the key is the occupied squares and the four attributes' smaller masks,
  sorted. 80 bits, stored whole, so a table hit is never a different position;
  positions that differ by any of the 384 attribute relabellings share one
  entry.
* **Move ordering.** Placements are tried by a prior: first those that make a
  line of three sharing an attribute value (they take safe pieces from the
  opponent), last those that spoil such a line. The prior is worked out once a
  node per attribute value, a byte a square, so a piece's is four additions.
* **The last two squares** are valued without a search (:func:`_last_two`).

Scores are for the side to move: a win whose winning placement leaves ``e``
empty squares scores ``e + 1`` (so sooner is more), a loss the negative, a draw
0. :func:`to_search_score` turns them into the shared search's "win in n plies".
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from protocol.games.quarto import LINES

from ..bits import mix
from ..search import HASH_MULTIPLIER, MATE, NO_LIMIT, count_node
from .position import (
    ALL,
    ATTRIBUTE_SQUARES,
    AVAILABLE,
    EMPTY_SQUARES,
    IN_HAND,
    NO_PIECE,
    WON,
    encode,
    lowest16,
    popcount16,
    sort4,
)

SQUARES = 16
PIECES = 16
INFINITE = 1000

LINE_MASKS = np.array([sum(1 << s for s in squares) for _, squares in LINES], np.int64)
"""The ten lines (ranks, files, two diagonals) as square masks."""

OTHERS = np.full((SQUARES, 3), -1, np.int64)
"""``OTHERS[s]``: for each line through ``s``, the mask of its other three squares (-1 pads)."""
for _square in range(SQUARES):
    _through = [int(m) & ~(1 << _square) for m in LINE_MASKS if int(m) >> _square & 1]
    OTHERS[_square, : len(_through)] = _through


def _losing_squares() -> np.ndarray:
    masks = np.arange(1 << SQUARES, dtype=np.int64)
    table = np.zeros(1 << SQUARES, np.int64)
    for square in range(SQUARES):
        for others in OTHERS[square]:
            if others >= 0:
                hit = ((masks & others) == others) & ((masks >> square & 1) == 0)
                table |= np.where(hit, 1 << square, 0)
    return table.astype(np.uint16)


LOSING_SQUARES = _losing_squares()
"""``LOSING_SQUARES[m]``: the squares outside ``m`` that complete a line whose other squares are all in ``m``."""


def _safe_pieces() -> np.ndarray:
    table = np.zeros(256, np.int64)
    for losing in range(256):
        for piece in range(PIECES):
            if not any(losing >> (2 * a + (piece >> a & 1)) & 1 for a in range(4)):
                table[losing] |= 1 << piece
    return table


SAFE_PIECES = _safe_pieces()
"""``SAFE_PIECES[losing]``: the pieces with none of the attribute values in ``losing`` (bit ``2a + v``:
value ``v`` of attribute ``a`` completes a line somewhere)."""

TABLE_SIZE = 1 << 23
"""Table entries (16 bytes each: 128 MB, as the C++ reference's table); a power of two."""
CHECK_EVERY = 4095
NODES, STOPPED, LIMIT, BEST, ROOT = 0, 1, 2, 3, 4
"""Indexes into ``SolverTables.counters``: nodes searched, 1 once stopped, the node limit, the best piece
of the last hand-over searched, and the empty squares after the root's placement."""


class SolverTables(NamedTuple):
    """The solver's memory: its table and counters.

    A table entry is two ``int64`` side by side (one cache line holds both): the
    key's low 64 bits, then its high 16 bits, the value (+128, 8 bits) and two
    bound flags (lower, upper). ``counters``: see ``NODES`` ... ``ROOT``.
    """

    entries: np.ndarray
    counters: np.ndarray


def new_solver_tables(node_limit: int | None = None, size: int = TABLE_SIZE) -> SolverTables:
    """Empty solver memory, written through once (no page faults mid-search); ``node_limit`` stops each solve.

    ``size`` (table entries) must be a power of two.
    """
    if size < 1 or size & (size - 1):
        raise ValueError(f"the solver's table size must be a power of two, not {size}")
    return SolverTables(
        entries=np.full(2 * size, 0, np.int64),
        counters=np.array([0, 0, NO_LIMIT if node_limit is None else node_limit, -1, -1], np.int64),
    )


@njit(cache=True)
def clear(tables: SolverTables) -> None:
    """Forget every table entry (a solve from scratch)."""
    tables.entries[:] = 0


@njit(cache=True, _nrt=False)
def _placed(a0: int, a1: int, a2: int, a3: int, bit: int, piece: int) -> tuple[int, int, int, int]:
    """The four attribute masks once ``piece`` stands on the square ``bit``."""
    return (a0 | (bit if piece & 1 else 0), a1 | (bit if piece & 2 else 0),
            a2 | (bit if piece & 4 else 0), a3 | (bit if piece & 8 else 0))


@njit(cache=True, _nrt=False)
def _having(a0: int, a1: int, a2: int, a3: int, attribute: int) -> int:
    """The squares whose piece has ``attribute`` (one of the four masks)."""
    return a0 if attribute == 0 else a1 if attribute == 1 else a2 if attribute == 2 else a3


@njit(cache=True, _nrt=False)
def losing_values(taken: int, a0: int, a1: int, a2: int, a3: int) -> int:
    """Bit ``2a + v`` set when some empty square completes a line of pieces with value ``v`` of attribute ``a``."""
    free = ALL & ~taken
    losing = 0
    for attribute in range(4):
        having = _having(a0, a1, a2, a3, attribute)
        if LOSING_SQUARES[taken & ~having] & free:
            losing |= 1 << 2 * attribute
        if LOSING_SQUARES[having] & free:
            losing |= 2 << 2 * attribute
    return losing


LINE_SQUARES = np.array([list(squares) for _, squares in LINES], np.int64)
"""``LINE_SQUARES[line]``: the four squares of each line."""
BIAS = 0x1010101010101010
"""Eight fields of 16 each: the starting value of a packed row of square priors (see :func:`_prior_parts`)."""
PARTS = 2 * SQUARES
"""Column of ``scratch`` where a node's packed priors start (16 words: two per attribute value)."""


@njit(cache=True, _nrt=False)
def _add(scratch: np.ndarray, row: int, column: int, square: int, amount: int) -> None:
    """Add ``amount`` to ``square``'s byte in the packed pair of words at ``scratch[row, column:column + 2]``."""
    if square < 8:
        scratch[row, column] += amount << (8 * square)
    else:
        scratch[row, column + 1] += amount << (8 * (square - 8))


@njit(cache=True, _nrt=False)
def _prior_parts(taken: int, a0: int, a1: int, a2: int, a3: int, scratch: np.ndarray, row: int) -> None:
    """Per attribute value, what placing a piece having it adds to each empty square's prior (lower: sooner).

    A line of two pieces sharing the value and two empty squares: -1 at both
    squares (the placement makes a line of three sharing a value: it takes safe
    pieces from the opponent). A line of three lacking the value: +2 at its
    empty square (the placement spoils that line). Packed a byte a square,
    squares 0-7 and 8-15 in two words, from ``BIAS``, at ``scratch[row,
    PARTS + 4a + 2v]``, so that a piece's priors are four additions of words.
    """
    for column in range(PARTS, PARTS + 16):
        scratch[row, column] = BIAS
    for line in range(10):
        mask = LINE_MASKS[line]
        pieces = popcount16(mask & taken)
        if pieces < 2 or pieces == 4:
            continue  # no line of three to make or spoil
        for attribute in range(4):
            having = _having(a0, a1, a2, a3, attribute)
            count = popcount16(having & mask)
            for value in range(2):
                same = count if value else pieces - count
                column = PARTS + 4 * attribute + 2 * value
                if pieces == 2 and same == 2:
                    for k in range(4):
                        square = LINE_SQUARES[line, k]
                        if not taken >> square & 1:
                            _add(scratch, row, column, square, -1)
                elif pieces == 3 and same == 0:
                    square = lowest16(mask & ~taken)
                    _add(scratch, row, column, square, 2)


@njit(cache=True, _nrt=False)
def _order_squares(taken: int, piece: int, scratch: np.ndarray, row: int) -> int:
    """The empty squares into ``scratch[row, 0:n]``, by the prior of placing ``piece``; returns ``n``.

    The node's :func:`_prior_parts` must be in ``scratch[row]``.
    """
    low = 0
    high = 0
    for attribute in range(4):
        column = PARTS + 4 * attribute + 2 * (piece >> attribute & 1)
        low += scratch[row, column]
        high += scratch[row, column + 1]
    n = 0
    free = ALL & ~taken
    while free:
        s = lowest16(free)
        free &= free - 1
        prior = (low >> (8 * s) if s < 8 else high >> (8 * (s - 8))) & 0xFF
        j = n
        while j and scratch[row, SQUARES + j - 1] > prior:
            scratch[row, SQUARES + j] = scratch[row, SQUARES + j - 1]
            scratch[row, j] = scratch[row, j - 1]
            j -= 1
        scratch[row, SQUARES + j] = prior
        scratch[row, j] = s
        n += 1
    return n


@njit(cache=True, _nrt=False)
def hand_over(
    taken: int, a0: int, a1: int, a2: int, a3: int, off: int, alpha: int, beta: int,
    tables: SolverTables, scratch: np.ndarray, deadline: float,
) -> int:
    """Value for the side about to hand a piece over, ``off`` being the pieces not on the board.

    Exact if within ``(alpha, beta)``, else a bound on that side (fail-soft).
    The side to hand over has just placed its piece, so every piece off the
    board can be given. ``scratch`` row ``e`` (the empty squares) orders the
    placements of a node. After the root's placement (``counters[ROOT]``
    empty squares: no other node has as many) the table is not read, so that
    the best piece is always found; it is left in ``counters[BEST]``.
    Returns 0 once stopped (``counters[STOPPED]``).
    """
    counters = tables.counters
    if count_node(counters, CHECK_EVERY, deadline):
        return 0
    empty = popcount16(ALL & ~taken)
    if empty == 0:
        return 0
    root = empty == counters[ROOT]
    losing = losing_values(taken, a0, a1, a2, a3)
    pieces = off & SAFE_PIECES[losing]
    if pieces == 0 or losing & (losing >> 1) & 0x55:  # (both values of an attribute: no piece is safe)
        counters[BEST] = lowest16(off)
        return -empty  # the opponent wins with its next placement
    if empty == 1:
        counters[BEST] = lowest16(pieces)
        return 0  # the last piece is safe: the board fills without a win
    if empty == 2:
        return _last_two(taken, a0, a1, a2, a3, off, pieces, counters)
    # Bounds are stored against the window asked for: narrowing it by the value range or by a table
    # entry cannot make a result inexact (a fail-low at the narrowed alpha meets the known lower bound).
    old_alpha, old_beta = alpha, beta
    low = -(empty - 2)
    high = empty - 1
    if alpha < low:
        alpha = low
    if beta > high:
        beta = high
    if alpha >= beta and not root:
        return alpha if alpha == low else beta

    c0, c1, c2, c3 = sort4(min(a0, taken & ~a0), min(a1, taken & ~a1), min(a2, taken & ~a2), min(a3, taken & ~a3))
    lo = taken | c0 << 16 | c1 << 32 | c2 << 48  # the low 64 bits of the key, as an int64's bits
    hi = c3
    slot = 2 * (int(mix(np.uint64(lo) ^ np.uint64(hi) * HASH_MULTIPLIER) >> np.uint64(41))
                & (len(tables.entries) // 2 - 1))
    entries = tables.entries
    entry = entries[slot + 1]
    if not root and entry and entries[slot] == lo and entry & 0xFFFF == hi:
        value = (entry >> 16 & 0xFF) - 128
        flags = entry >> 24
        if flags & 1 and value > alpha:  # a lower bound
            alpha = value
            if alpha >= beta:
                return alpha
        if flags & 2 and value < beta:  # an upper bound
            beta = value
            if alpha >= beta:
                return beta

    _prior_parts(taken, a0, a1, a2, a3, scratch, empty)
    best = -INFINITE
    best_piece = lowest16(pieces)
    remaining = pieces
    while remaining:
        piece = lowest16(remaining)
        remaining &= remaining - 1
        counters[NODES] += 1  # the opponent's placement node, counted as the reference counts it
        # The opponent places ``piece``: its best placement, in its window (-beta, -alpha).
        opp_alpha, opp_beta = -beta, -alpha
        opp_best = -INFINITE
        n = _order_squares(taken, piece, scratch, empty)
        left = off & ~(1 << piece)
        for k in range(n):
            bit = 1 << scratch[empty, k]
            b0, b1, b2, b3 = _placed(a0, a1, a2, a3, bit, piece)
            value = hand_over(taken | bit, b0, b1, b2, b3, left, opp_alpha, opp_beta, tables, scratch, deadline)
            if counters[STOPPED]:
                return 0
            if value > opp_best:
                opp_best = value
                if value > opp_alpha:
                    opp_alpha = value
                    if opp_alpha >= opp_beta:
                        break
        if -opp_best > best:
            best = -opp_best
            best_piece = piece
            if best > alpha:
                alpha = best
                if alpha >= beta:
                    break

    flags = (1 if best > old_alpha else 0) | (2 if best < old_beta else 0)
    entries[slot] = lo
    entries[slot + 1] = hi | (best + 128) << 16 | flags << 24
    counters[BEST] = best_piece  # after every deeper call has written its own
    return best


@njit(cache=True, _nrt=False)
def _last_two(taken: int, a0: int, a1: int, a2: int, a3: int, off: int, pieces: int, counters: np.ndarray) -> int:
    """The value of handing over with two squares and two pieces left, without a search (0 or 1).

    The opponent places the safe piece given where the last piece, which it
    must then hand back, wins on neither remaining square if it can: the hand-over
    wins (scoring 1) only if the last piece wins on the square left either way.
    """
    free = ALL & ~taken
    first = lowest16(free)
    second = lowest16(free & (free - 1))
    best, best_piece = 0, lowest16(pieces)
    remaining = pieces
    while remaining:
        piece = lowest16(remaining)
        remaining &= remaining - 1
        last = lowest16(off & ~(1 << piece))
        wins = True
        for here, there in ((first, second), (second, first)):
            bit = 1 << here
            b0, b1, b2, b3 = _placed(a0, a1, a2, a3, bit, piece)
            if not _wins(taken | bit, b0, b1, b2, b3, there, last):
                wins = False
                break
        if wins:
            best, best_piece = 1, piece
            break
    counters[BEST] = best_piece
    return best


@njit(cache=True, _nrt=False)
def _wins(taken: int, a0: int, a1: int, a2: int, a3: int, square: int, piece: int) -> bool:
    """True when ``piece`` on the empty ``square`` completes a line sharing an attribute value."""
    for i in range(3):
        others = OTHERS[square, i]
        if others < 0:
            break
        if others & taken != others:
            continue
        for attribute in range(4):
            having = _having(a0, a1, a2, a3, attribute)
            same = having if piece >> attribute & 1 else taken & ~having
            if same & others == others:
                return True
    return False


@njit(cache=True)
def solve_placement(
    taken: int, a0: int, a1: int, a2: int, a3: int, hand: int, off: int, tables: SolverTables, deadline: float
) -> tuple[int, int, int, bool]:
    """``(score, square, piece, solved)`` for the side holding ``hand``; ``off``: the pieces to give after it.

    ``square`` and ``piece`` are a best move (``piece`` -1 when nothing is handed
    over: the placement wins or fills the board). A winning side wins soonest, a
    losing side holds out longest. ``solved`` is False when the deadline
    (``time.perf_counter()`` seconds) or the node limit came first.
    """
    counters = tables.counters
    counters[NODES] = 0
    counters[STOPPED] = 0
    scratch = np.zeros((SQUARES + 1, PARTS + 16), np.int64)
    empty = popcount16(ALL & ~taken)
    counters[ROOT] = empty - 1
    _prior_parts(taken, a0, a1, a2, a3, scratch, SQUARES)
    n = _order_squares(taken, hand, scratch, SQUARES)  # row 16: every search node has fewer empties
    for k in range(n):
        if _wins(taken, a0, a1, a2, a3, scratch[SQUARES, k], hand):
            return empty, scratch[SQUARES, k], -1, True
    if empty == 1 or off == 0:
        return 0, scratch[SQUARES, 0], -1, True
    # No win now: at best a win at our next placement, at worst a loss at the opponent's.
    alpha, beta = -(empty - 1), max(empty - 2, 0)
    best, best_square, best_piece = -INFINITE, scratch[SQUARES, 0], lowest16(off)
    for k in range(n):
        square = scratch[SQUARES, k]
        bit = 1 << square
        b0, b1, b2, b3 = _placed(a0, a1, a2, a3, bit, hand)
        value = hand_over(taken | bit, b0, b1, b2, b3, off, alpha, beta, tables, scratch, deadline)
        piece = counters[BEST]
        if counters[STOPPED]:
            return 0, -1, -1, False
        if value > best:
            best, best_square, best_piece = value, square, piece
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    return best, best_square, best_piece, True


def board_of(position: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """``(taken, a0, a1, a2, a3, hand)`` of a running engine position (``position.py``'s layout)."""
    if position[WON]:
        raise ValueError("the game is over: there is no position to solve")
    taken = ALL & ~int(position[EMPTY_SQUARES])
    attributes = [int(position[ATTRIBUTE_SQUARES + a]) for a in range(4)]
    return taken, *attributes, int(position[IN_HAND])


def solve(position: np.ndarray, tables: SolverTables, deadline: float = np.inf) -> tuple[int, int, bool]:
    """``(score, move, solved)`` of an engine position whose side to move holds a piece: :func:`solve_placement`
    with its best move as an engine move (``position.encode``)."""
    taken, a0, a1, a2, a3, hand = board_of(position)
    if hand == NO_PIECE:
        raise ValueError("the opening turn hands a piece over: nothing to solve")
    score, square, piece, solved = solve_placement(taken, a0, a1, a2, a3, hand, int(position[AVAILABLE]), tables,
                                                   deadline)
    return int(score), encode(int(square), None if piece < 0 else int(piece)) if solved else -1, solved


def to_search_score(score: int, empty: int) -> int:
    """The shared search's score of a solver score, for a side to place with ``empty`` empty squares.

    A win whose placement leaves ``e`` squares empty comes ``empty - e`` turns
    (plies of the shared search) from now: ``MATE - (empty - e)``.
    """
    if score == 0:
        return 0
    plies = empty - (abs(score) - 1)
    return MATE - plies if score > 0 else -(MATE - plies)
