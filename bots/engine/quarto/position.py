"""Quarto positions for the compiled search: one ``int64`` array, its moves, the rules, and a canonical key.

The position is one ``int64`` array (layout in the ``BOARD`` ... ``DANGERS``
constants): the piece on each square (``-1`` empty), the piece in hand
(``NO_PIECE`` before the opening hand-over), the pieces still to give as a
16-bit mask, the empty squares as a 16-bit mask, a flag for "the last
placement won", an incremental Zobrist key, per attribute the squares whose
piece has that attribute bit set (what the canonical key is made of), and per
line a packed counter of its pieces and of their attribute bits, so that
"which pieces would complete this line" is one table lookup
(``LINE_DANGER``). The last slots are scratch for move ordering.

A move is one int, ``square * 17 + piece``: ``piece == NO_PIECE`` (16) when
nothing is handed over (the placement wins or fills the board), and
``square == OPENING`` (16) for the opening turn, which only hands a piece over.

Symmetry: Quarto's value does not change when every piece has the same
attributes complemented (16 ways) or its attributes permuted (24 ways). The
transposition table key (:func:`key`) is canonical under these 384
relabellings: pieces are complemented so that the piece on the first occupied
square becomes ``0000``, then the four attribute "columns" (squares whose
piece has the attribute) are sorted. ``KEY_KIND`` chooses between this and a
plain Zobrist key. Board symmetries are not folded into the key: mapping 32
board transforms would cost more per node than such rare extra table hits
save.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from protocol.games.quarto import LINES, QuartoMove, QuartoState

from ..bits import mix
from ..search import DRAW, LOSS, RUNNING

SQUARES = 16
PIECES = 16
NO_PIECE = 16
"""In a move: nothing is handed over. In the position: no piece in hand (before the opening turn)."""
OPENING = 16
"""The square code of the opening turn, which places nothing."""
MOVE_SPACE = 17 * 17
MAX_MOVES = 256
ALL = (1 << 16) - 1
EMPTY = -1

# Layout of the position array.
BOARD = 0
"""``state[0:16]``: the piece on each square, or ``EMPTY``."""
IN_HAND = 16
AVAILABLE = 17
"""Mask of the pieces neither on the board nor in hand: those that can still be handed over."""
EMPTY_SQUARES = 18
WON = 19
"""1 when the last placement made four sharing an attribute."""
ZOBRIST_KEY = 20
ATTRIBUTE_SQUARES = 21
"""``state[21:25]``: for attribute bit ``a``, the mask of squares whose piece has that bit set."""
LINE_COUNTS = 25
"""``state[25:35]``: per line, its pieces counted in 3-bit fields (see ``PIECE_COUNT``)."""
SAFE = 35
"""``state[35:51]`` (scratch): written by ``generate_moves`` for ``order_hint``: per square, the
mask of pieces safe to hand over after placing there."""
DANGERS = 51
"""``state[51:61]`` (scratch, for one call): per line, the pieces that would complete it."""
STATE_SIZE = 61

PLAIN_KEY, CANONICAL_KEY = 0, 1
KEY_KIND = CANONICAL_KEY
"""Which transposition key the search uses (a compile-time constant)."""

LINES_OF = np.array(
    [[i for i, (_, squares) in enumerate(LINES) if s in squares] + [-1] * (3 - sum(s in sq for _, sq in LINES))
     for s in range(SQUARES)],
    np.int64,
)
"""``LINES_OF[s]``: the two or three lines through square ``s`` (padded with -1), as indexes into the
reference rules' ``LINES`` (ranks, files, two diagonals)."""
LINE_BITS_OF = np.array([sum(1 << i for i in row if i >= 0) for row in LINES_OF], np.int64)
"""``LINE_BITS_OF[s]``: the lines through ``s`` as a 10-bit mask."""


def _danger_table() -> np.ndarray:
    table = np.zeros(256, np.int64)
    for ones in range(16):
        for zeros in range(16):
            table[ones * 16 + zeros] = sum(1 << p for p in range(PIECES) if (p & ones) | (~p & zeros & 15))
    return table


DANGER = _danger_table()
"""``DANGER[ones * 16 + zeros]``: the pieces completing a line of three whose pieces all have the
attribute bits ``ones`` set and the bits ``zeros`` clear."""

PIECE_COUNT = np.array(
    [1 + sum((piece >> bit & 1) << (3 + 3 * bit) for bit in range(4)) for piece in range(PIECES)], np.int64
)
"""What a piece adds to a line's counter: 1 to the piece count (bits 0-2), and 1 to the count of
each attribute bit it has set (bits 3-5 for bit 0, 6-8 for bit 1, ...)."""


def _line_danger_table() -> np.ndarray:
    table = np.zeros(1 << 15, np.int32)
    for counter in range(1 << 15):
        if counter & 7 == 3:
            fields = [counter >> (3 + 3 * bit) & 7 for bit in range(4)]
            ones = sum(1 << bit for bit in range(4) if fields[bit] == 3)
            zeros = sum(1 << bit for bit in range(4) if fields[bit] == 0)
            table[counter] = DANGER[ones * 16 + zeros]
    return table


LINE_DANGER = _line_danger_table()
"""``LINE_DANGER[counter]``: the pieces that complete a line with that counter (none unless it holds
three pieces sharing an attribute)."""

_rng = np.random.default_rng(20240611)
ZOBRIST_SQUARE = _rng.integers(-(2**63), 2**63 - 1, size=SQUARES * PIECES, dtype=np.int64)
ZOBRIST_HAND = _rng.integers(-(2**63), 2**63 - 1, size=PIECES + 1, dtype=np.int64)
ZOBRIST_HAND[NO_PIECE] = 0


# --- Position -------------------------------------------------------------------------------------


def new_position() -> np.ndarray:
    """The empty board before the opening turn."""
    state = np.zeros(STATE_SIZE, np.int64)
    state[BOARD : BOARD + SQUARES] = EMPTY
    state[IN_HAND] = NO_PIECE
    state[AVAILABLE] = ALL
    state[EMPTY_SQUARES] = ALL
    return state


def from_state(state: QuartoState) -> np.ndarray:
    """The engine position of a running reference state (``ValueError`` once the game is over)."""
    if state.result is not None:
        raise ValueError("the game is over: there is no position to search")
    position = new_position()
    for square, piece in enumerate(state.board):
        if piece != EMPTY:
            _put(position, square, piece)
    hand = NO_PIECE if state.in_hand is None else state.in_hand
    position[IN_HAND] = hand
    position[ZOBRIST_KEY] ^= ZOBRIST_HAND[hand]
    if hand != NO_PIECE:
        position[AVAILABLE] &= ~(1 << hand)
    return position


def _put(position: np.ndarray, square: int, piece: int) -> None:
    position[square] = piece
    for line in LINES_OF[square]:
        if line >= 0:
            position[LINE_COUNTS + line] += PIECE_COUNT[piece]
    position[AVAILABLE] &= ~(1 << piece)
    position[EMPTY_SQUARES] &= ~(1 << square)
    position[ZOBRIST_KEY] ^= ZOBRIST_SQUARE[square * PIECES + piece]
    for bit in range(4):
        if piece >> bit & 1:
            position[ATTRIBUTE_SQUARES + bit] |= 1 << square


def encode(square: int | None, piece: int | None) -> int:
    """The engine's int for a move: ``square`` ``None`` on the opening turn, ``piece`` ``None`` for no hand-over."""
    return (OPENING if square is None else square) * 17 + (NO_PIECE if piece is None else piece)


def to_quarto_move(move: int) -> QuartoMove:
    """The reference move for an engine move."""
    square, piece = divmod(int(move), 17)
    return QuartoMove(None if square == OPENING else square, None if piece == NO_PIECE else piece)


# --- Compiled rules -------------------------------------------------------------------------------


@njit(cache=True)
def popcount16(x: int) -> int:
    """Set bits of a small non-negative int (16 bits)."""
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x + (x >> 8)) & 0x1F


@njit(cache=True)
def lowest16(x: int) -> int:
    """Index of the lowest set bit of a non-zero small int."""
    return popcount16((x & -x) - 1)


@njit(cache=True)
def completes_line(state: np.ndarray, square: int, piece: int) -> bool:
    """True when ``piece`` on the empty ``square`` makes four sharing an attribute."""
    for i in range(3):
        line = LINES_OF[square, i]
        if line < 0:
            break
        if LINE_DANGER[state[LINE_COUNTS + line]] >> piece & 1:
            return True
    return False


@njit(cache=True)
def winning_square(state: np.ndarray, piece: int) -> int:
    """The lowest empty square where ``piece`` completes a line, or -1."""
    remaining = state[EMPTY_SQUARES]
    while remaining:
        s = lowest16(remaining)
        remaining &= remaining - 1
        if completes_line(state, s, piece):
            return s
    return -1


@njit(cache=True)
def legal_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """Every legal move (as the reference rules list them) into ``moves``; returns how many."""
    hand = state[IN_HAND]
    available = state[AVAILABLE]
    n = 0
    if state[WON] or state[EMPTY_SQUARES] == 0:
        return 0
    if hand == NO_PIECE:
        for p in range(PIECES):
            if available >> p & 1:
                moves[n] = OPENING * 17 + p
                n += 1
        return n
    empty = state[EMPTY_SQUARES]
    for s in range(SQUARES):
        if empty >> s & 1:
            if available == 0 or completes_line(state, s, hand):
                moves[n] = s * 17 + NO_PIECE
                n += 1
            else:
                for p in range(PIECES):
                    if available >> p & 1:
                        moves[n] = s * 17 + p
                        n += 1
    return n


@njit(cache=True)
def play(state: np.ndarray, move: int) -> None:
    """Place the piece in hand (unless this is the opening turn), then hand a piece over."""
    square = move // 17
    piece = move - square * 17
    hand = state[IN_HAND]
    key = state[ZOBRIST_KEY] ^ ZOBRIST_HAND[hand]
    if square != OPENING:
        if completes_line(state, square, hand):
            state[WON] = 1
        state[square] = hand
        state[EMPTY_SQUARES] &= ~(1 << square)
        key ^= ZOBRIST_SQUARE[square * PIECES + hand]
        added = PIECE_COUNT[hand]
        for i in range(3):
            line = LINES_OF[square, i]
            if line >= 0:
                state[LINE_COUNTS + line] += added
        for bit in range(4):
            if hand >> bit & 1:
                state[ATTRIBUTE_SQUARES + bit] |= 1 << square
    if piece != NO_PIECE:
        state[AVAILABLE] &= ~(1 << piece)
    state[IN_HAND] = piece
    state[ZOBRIST_KEY] = key ^ ZOBRIST_HAND[piece]


@njit(cache=True)
def undo(state: np.ndarray, move: int) -> None:
    """Take ``move`` back: the handed piece returns to the pool, the placed one to the hand."""
    square = move // 17
    piece = move - square * 17
    key = state[ZOBRIST_KEY] ^ ZOBRIST_HAND[piece]
    if piece != NO_PIECE:
        state[AVAILABLE] |= 1 << piece
    if square != OPENING:
        hand = state[square]
        state[square] = EMPTY
        state[EMPTY_SQUARES] |= 1 << square
        state[WON] = 0
        key ^= ZOBRIST_SQUARE[square * PIECES + hand]
        added = PIECE_COUNT[hand]
        for i in range(3):
            line = LINES_OF[square, i]
            if line >= 0:
                state[LINE_COUNTS + line] -= added
        for bit in range(4):
            state[ATTRIBUTE_SQUARES + bit] &= ~(1 << square)
    else:
        hand = NO_PIECE
    state[IN_HAND] = hand
    state[ZOBRIST_KEY] = key ^ ZOBRIST_HAND[hand]


@njit(cache=True, _nrt=False)
def sort4(a: int, b: int, c: int, d: int) -> tuple[int, int, int, int]:
    """Four ints in ascending order (a sorting network: five compare-and-swaps)."""
    if a > b:
        a, b = b, a
    if c > d:
        c, d = d, c
    if a > c:
        a, c = c, a
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    return a, b, c, d


@njit(cache=True)
def canonical_key(state: np.ndarray) -> np.uint64:
    """A key equal for positions that differ only by relabelling attributes (complement, permutation).

    Complement every piece by the piece on the first occupied square (so it reads
    ``0000``), describe each attribute by the squares (and hand) where it is set,
    and sort those four descriptions: equal descriptions are interchangeable, so
    the sorted list is the same for every relabelling of the same position.
    """
    occupied = ALL & ~state[EMPTY_SQUARES]
    hand = state[IN_HAND]
    if occupied:
        reference = state[lowest16(occupied)]
    elif hand != NO_PIECE:
        reference = hand
    else:
        reference = 0
    c0 = state[ATTRIBUTE_SQUARES + 0] ^ (occupied if reference & 1 else 0)
    c1 = state[ATTRIBUTE_SQUARES + 1] ^ (occupied if reference & 2 else 0)
    c2 = state[ATTRIBUTE_SQUARES + 2] ^ (occupied if reference & 4 else 0)
    c3 = state[ATTRIBUTE_SQUARES + 3] ^ (occupied if reference & 8 else 0)
    if hand != NO_PIECE:
        relabelled = hand ^ reference
        c0 |= (relabelled & 1) << 16
        c1 |= (relabelled >> 1 & 1) << 16
        c2 |= (relabelled >> 2 & 1) << 16
        c3 |= (relabelled >> 3 & 1) << 16
    c0, c1, c2, c3 = sort4(c0, c1, c2, c3)
    hand_flag = 0 if hand == NO_PIECE else 1
    h = mix(np.uint64(occupied | hand_flag << 16))
    h = mix(h ^ np.uint64(c0 | c1 << 17 | c2 << 34))
    return mix(h ^ np.uint64(c3))


@njit(cache=True)
def key(state: np.ndarray) -> np.uint64:
    """The transposition key (canonical or plain Zobrist, by ``KEY_KIND``)."""
    if KEY_KIND == CANONICAL_KEY:
        return canonical_key(state)
    return np.uint64(state[ZOBRIST_KEY])


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """``LOSS`` when the opponent's placement won, ``DRAW`` on a full board, else ``RUNNING``."""
    if state[WON]:
        return LOSS
    if state[EMPTY_SQUARES] == 0:
        return DRAW
    return RUNNING


def plies_left(state: np.ndarray) -> int:
    """The most moves the game can still last: one per empty square, plus the opening hand-over."""
    return popcount16(int(state[EMPTY_SQUARES])) + (1 if state[IN_HAND] == NO_PIECE else 0)
