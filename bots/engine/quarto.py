"""Quarto engine: a compact compiled position, safe-piece pruning, canonical keys, and the ``master`` bot.

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

Two rules keep the tree small without changing any value (so the search stays
exact once it reaches the end of the game):

* a placement that wins is the only move searched (nothing scores better);
* a piece that would let the opponent win at once (it completes some line of
  three that share an attribute) is never handed over while another, *safe*,
  piece exists after some placement; a placement that leaves no safe piece is
  searched only when every placement does, and then only one such move (all
  lose at the opponent's next turn).

Symmetry: Quarto's value does not change when every piece has the same
attributes complemented (16 ways) or its attributes permuted (24 ways). The
transposition table key (``key``) is canonical under these 384 relabellings:
pieces are complemented so that the piece on the first occupied square
becomes ``0000``, then the four attribute "columns" (squares whose piece has
the attribute) are sorted. ``KEY_KIND`` chooses between this and a plain
Zobrist key; measured on solving 10- and 11-empty positions, the canonical key
saves 3-4% of the nodes at about the same speed per node (relabelled twins are
rare inside one search; they matter most early in the game). Board symmetries
are not folded into the key: mapping 32 board transforms would cost more per
node than such rare extra table hits save.

Traps: Quarto is a draw with best play, and from a fair start most games
against a decent opponent reach a drawn endgame. Every drawing move is then
worth the same to the search, but not against a fallible opponent. The
master scores each drawing move by the chance that an opponent who sees
losses within three plies of its reply (as a 4-ply search does) and picks at
random among the rest walks into a deeper loss, and plays the best one
(``QuartoMaster._trap_move``); within ten plies of the end one null-window
search settles "drawn or not" first, in half the time of the exact solve, to
leave the traps more of the move's time. Measured with
``benchmarks/strength.py --game quarto --time-per-move 0.2 --depth 4``:
70 wins and 30 draws in 100 games before; after, 77-82 wins and 17-23 draws
in four runs of 100 games, and 165-34-1 (0.910) in 200. The opponents'
actual blunder rate follows the predicted chance, a little below it
(0.48 for a predicted 0.62, 0.73 for 0.87).

The heuristic (used only at the search horizon) counts *safe pieces*: pieces
that complete no line of three. The player who must hand over a piece when
none is safe loses, so with a static board the side that leaves an odd number
of safe pieces after its placement wins the parity race; the evaluation looks
one placement ahead for such a square.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from bots.base import TimeBudget
from protocol.games.quarto import LINES, QuartoMove, QuartoState

from .bits import mix
from .budget import thinking_seconds
from .master import DEEP, DRAWN, LOST, QUICK, QUICK_TIE_BREAK, TIME_UP, EngineBot, trap_chance
from .search import DRAW, LOSS, MATE_BOUND, NO_MOVE, RUNNING, Searcher, describe_score, make_search, table_move_at

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

WIN_AT_HAND = 1000
"""Heuristic value of holding a piece that wins: the search proves it a ply later."""
PARITY = 40
"""Heuristic value of a placement that leaves an odd number of safe pieces (see the module notes)."""

LINE_SQUARES = np.array([squares for _, squares in LINES], np.int64)
"""The ten lines of four, as square indexes (ranks, files, two diagonals)."""
LINE_MASKS = np.array([sum(1 << s for s in squares) for _, squares in LINES], np.int64)
LINES_OF = np.array(
    [[i for i, (_, squares) in enumerate(LINES) if s in squares] + [-1] * (3 - sum(s in sq for _, sq in LINES))
     for s in range(SQUARES)],
    np.int64,
)
"""``LINES_OF[s]``: the two or three lines through square ``s`` (padded with -1)."""
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


# --- Position ------------------------------------------------------------------------------------


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


# --- Compiled rules ------------------------------------------------------------------------------


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
    remaining = empty
    while remaining:
        s = lowest16(remaining)
        remaining &= remaining - 1
        if completes_line(state, s, hand):
            moves[0] = s * 17 + NO_PIECE
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
    # A sorting network for four values.
    if c0 > c1:
        c0, c1 = c1, c0
    if c2 > c3:
        c2, c3 = c3, c2
    if c0 > c2:
        c0, c2 = c2, c0
    if c1 > c3:
        c1, c3 = c3, c1
    if c1 > c2:
        c1, c2 = c2, c1
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
    remaining = empty
    while remaining:
        s = lowest16(remaining)
        remaining &= remaining - 1
        if completes_line(state, s, hand):
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
    """Placements that leave the opponent the fewest safe pieces first (they squeeze it soonest).

    Measured on solving 10-empty positions: half the nodes of no hint; putting the
    parity rule of ``evaluate`` first costs 7% more nodes.
    """
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


def plies_left(state: np.ndarray) -> int:
    """The most moves the game can still last: one per empty square, plus the opening hand-over."""
    return popcount16(int(state[EMPTY_SQUARES])) + (1 if state[IN_HAND] == NO_PIECE else 0)


def solve(state: np.ndarray, table_bits: int = 20) -> int:
    """Exact value of a running position for the side to move (no time limit: keep it small).

    A win ``p`` plies ahead scores ``MATE - p``, a loss ``-(MATE - p)``, a draw 0.
    """
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits)
    return searcher.think(state, np.inf, max_depth=plies_left(state)).score


# --- The master bot -------------------------------------------------------------------------------

DEFAULT_SECONDS = 1.0
"""Thinking time per move when the bot is given no budget."""
OVERHEAD = 0.01
"""Seconds kept back from the move's deadline for converting positions and moves."""
SETTLE_PLIES = 10
"""From this many plies before the end, a null-window search first asks whether the game is a draw."""
SETTLE_SHARE = 0.5
"""The share of the move's time that question may take (the full search gets the rest otherwise)."""


class QuartoMaster(EngineBot):
    """The ``master`` level: the shared search with safe-piece pruning, exact once it sees the end.

    Iterative deepening runs until the deadline or until it reaches the end of
    the game, where its value is exact (win, draw or loss, by distance). The
    opening hand-over is a random piece: all pieces are equivalent on an empty
    board. The table survives from move to move within a game.
    """

    SEARCH, MAX_MOVES, MOVE_SPACE = search, MAX_MOVES, MOVE_SPACE

    def __init__(self, game_id: str = "quarto", level: str = "master", seed: int | None = None,
                 table_bits: int | None = None) -> None:
        super().__init__(game_id, level, seed, table_bits)

    def _warm_up(self) -> None:
        warm_up()

    def choose(self, state: QuartoState, budget: TimeBudget | None = None) -> QuartoMove:
        """The best move found before the deadline (``budget`` less a margin, see ``budget.py``; 1 s without one)."""
        start = time.perf_counter()
        if state.result is not None:
            raise ValueError("the game is over: there is no move to choose")
        if state.in_hand is None and all(piece == EMPTY for piece in state.board):
            self._last = {"opening": True}
            return QuartoMove(None, self.rng.randrange(PIECES))
        deadline = start + max(thinking_seconds(budget, DEFAULT_SECONDS) - OVERHEAD, 0.0)
        position = from_state(state)
        plies = plies_left(position)
        chosen = NO_MOVE
        if plies <= SETTLE_PLIES:
            chosen = self._settled_draw(position, plies, start, deadline)
        if chosen == NO_MOVE:
            result = self._searcher.think(position, deadline, max_depth=plies)
            self._last = {
                "depth": result.depth, "score": result.score, "value": describe_score(result.score),
                "exact": result.depth >= plies or abs(result.score) > MATE_BOUND,
                "nodes": result.nodes, "seconds": time.perf_counter() - start,
            }
            chosen = result.move
            if self._last["exact"] and result.score == DRAW:
                traps = self._trap_move(position, deadline, result.move)
                if traps is not None:
                    chosen = traps[0]
                    self._last.update(trap=traps[1], trap_moves_checked=traps[2])
        if chosen != NO_MOVE:
            move = to_quarto_move(chosen)
            if self._is_legal(state, move):
                return move
        return self.game.legal_moves(state)[0]  # cannot happen in a running game; never answer illegally

    def _settled_draw(self, position: np.ndarray, plies: int, start: float, deadline: float) -> int:
        """Near the end: if one null-window search shows a draw, the best trap (else ``NO_MOVE``).

        Proving "neither side can force a win" this way takes about half the
        time of the exact solve, which leaves the trap scoring more of the
        move's time. A win or a loss (``NO_MOVE``) is left to the full search,
        whose table this search has already filled.
        """
        verdict = self._searcher.window(position, plies, -1, 1, start + (deadline - start) * SETTLE_SHARE)
        if verdict != DRAW:
            return NO_MOVE
        drawing = table_move_at(self._searcher.table, np.uint64(key(position)))  # the move found to draw
        moves = np.zeros(MAX_MOVES, np.int32)
        if drawing not in moves[: generate_moves(position, moves)]:
            return NO_MOVE
        traps = self._trap_move(position, deadline, drawing)
        if traps is None:
            return NO_MOVE
        self._last = {
            "depth": plies, "score": DRAW, "value": describe_score(DRAW), "exact": True,
            "seconds": time.perf_counter() - start,
            "trap": traps[1], "trap_moves_checked": traps[2],
        }
        return traps[0]

    def _trap_move(self, position: np.ndarray, deadline: float, drawing: int) -> tuple[int, float, int] | None:
        """In a drawn position, the drawing move that gives the opponent the best chance to go wrong.

        Every move here draws with best play, so the move the search found
        (``drawing``) is as good as any against a perfect opponent, but not
        against a fallible one. For each of our moves, each reply the opponent
        could make (those the search would look at: wins at once, safe
        hand-overs) is solved; a move with a reply that beats us is dropped.
        The others are scored by the chance that an opponent who sees losses
        within ``master.SHALLOW`` plies of its reply, and picks at random among the
        replies it cannot tell apart, walks into a loss: deep losing replies
        over replies that do not lose quickly (see :func:`trap_chance`).
        Null-window searches answer "win, draw or loss?" and "a win within
        three plies?" far quicker than exact values, and a move is given up
        as soon as even losing every remaining reply could not make it the
        best. ``drawing`` goes first. Returns ``(move, its score, moves
        checked)``, or ``None`` when the clock ran out before ``drawing`` was
        scored (it then stands). (Ordering the other moves by an estimate from
        a few replies each was tried: with the little time left at ten empty
        squares it found better traps about as often as worse ones.)
        """
        moves = np.zeros(MAX_MOVES, np.int32)
        replies = np.zeros(MAX_MOVES, np.int32)
        n = generate_moves(position, moves)
        order = [drawing] + [int(moves[i]) for i in range(n) if moves[i] != drawing]
        best: tuple[int, float] | None = None
        checked = 0
        for move in order:
            play(position, move)
            trap = self._trap_score(position, replies, deadline, -1.0 if best is None else best[1])
            undo(position, move)
            if trap is TIME_UP:
                break
            checked += 1
            if trap is not None:
                best = (move, trap)  # type: ignore[assignment]
        if best is None:
            return None
        return best[0], best[1], checked

    def _trap_score(
        self, position: np.ndarray, replies: np.ndarray, deadline: float, beat: float
    ) -> float | None | object:
        """:func:`trap_chance` of the opponent's replies here, or ``None`` if that cannot beat ``beat``.

        ``None`` also when a reply beats us.
        """
        n = generate_moves(position, replies)
        if n == 0:
            return 0.0 if beat < 0.0 else None  # the board is full: a draw
        moves = [int(replies[i]) for i in range(n)]
        deep = quick = 0
        for done, reply in enumerate(moves):
            left = n - done
            if trap_chance(n, deep + left, quick) + QUICK_TIE_BREAK * left / n <= beat:
                return None  # however the remaining replies went, this would not be better
            play(position, reply)
            kind = self._reply_kind(position, deadline)
            undo(position, reply)
            if kind is TIME_UP:
                return TIME_UP
            if kind is LOST:
                return None
            deep += kind is DEEP
            quick += kind is QUICK
        chance = trap_chance(n, deep, quick)
        return chance if chance > beat else None

    def _reply_kind(self, position: np.ndarray, deadline: float) -> object:
        """After the opponent's reply: ``LOST`` (for us), ``DRAWN``, ``QUICK`` or ``DEEP`` (a win for us)."""
        if position[WON]:
            return LOST
        plies = plies_left(position)
        return DRAWN if plies == 0 else self._solved_kind(position, plies, deadline)

    def _is_legal(self, state: QuartoState, move: QuartoMove) -> bool:
        try:
            self.game.apply(state, move)
        except ValueError:
            return False
        return True


_warm = False


def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process.

    The searches run past 1,024 nodes so that they look at the clock: its first
    call from compiled code costs about 0.1 s, which must not fall on a move.
    """
    global _warm
    if _warm:
        return
    position = new_position()
    legal_moves(position, np.zeros(MAX_MOVES, np.int32))
    play(position, OPENING * 17 + 5)
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=10)
    searcher.think(position, 0.0, max_depth=3)
    searcher.window(position, 3, -1, 1, 0.0)  # the trap scoring's search (loading it took a second)
    _warm = True
