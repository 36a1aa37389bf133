"""Connect Four engine: bitboards, an exact solver, a heuristic, and the ``master`` bot.

Bitboards (the standard layout): a position is two ``uint64`` masks,
``position`` (the stones of the side to move) and ``mask`` (all stones), with
7 bits per column: bit ``7 * column + row``, row 0 at the bottom and bit 6 of
each column always empty, so a column's next free square is found by adding its
bottom bit. ``position + mask`` is a unique key of the position.

The exact solver follows Pascal Pons' (blog.gamesolver.org): negamax with
alpha-beta over a score range that shrinks with the stones left, null-window
passes over the score bounds, columns tried centre first and then by how many
winning squares a move makes, only moves that do not lose at once, and a table
of bounds. Scores are those of the public test sets: a win scores 22 minus the
stones the winner will have played, a draw 0, a loss the negative.

When the solver cannot finish in time, :class:`Connect4Master` falls back on the
shared search (``search.py``) with a heuristic built on odd/even threats.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit

from bots.base import TimeBudget
from protocol.games.connect4 import C4State, Drop

from .bits import lowest_index, popcount
from .budget import thinking_seconds
from .master import EngineBot
from .search import DRAW, LOSS, NO_MOVE, RUNNING, Searcher, clock, make_search

WIDTH, HEIGHT = 7, 6
CELLS = WIDTH * HEIGHT
MIN_SCORE = -(CELLS // 2) + 3
"""-18: the worst score, losing with one's fourth stone."""
MAX_SCORE = (CELLS + 1) // 2 - 3
"""18: the best score, winning with one's fourth stone."""

ONE = np.uint64(1)
BOTTOM = np.uint64(sum(1 << (7 * col) for col in range(WIDTH)))
"""The bottom square of every column."""
BOARD = np.uint64(int(BOTTOM) * ((1 << HEIGHT) - 1))
"""Every playable square."""
ODD_ROWS = np.uint64(int(BOTTOM) * 0b010101)
"""Rows 1, 3, 5 counted from the bottom: where the first player's threats are strong."""
EVEN_ROWS = np.uint64(int(BOTTOM) * 0b101010)
"""Rows 2, 4, 6: where the second player's threats are strong."""
COLUMN_ORDER = (3, 4, 2, 5, 1, 6, 0)
"""Centre first: central columns lie in more lines of four."""

S1, S6, S7, S8 = np.uint64(1), np.uint64(6), np.uint64(7), np.uint64(8)
S2, S3, S12, S14, S16 = np.uint64(2), np.uint64(3), np.uint64(12), np.uint64(14), np.uint64(16)
S18, S21, S24 = np.uint64(18), np.uint64(21), np.uint64(24)
"""Shift amounts, as ``uint64``: numba turns ``uint64`` mixed with ``int64`` into ``float64``."""


# --- Bitboards ----------------------------------------------------------------------------------


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


# --- Exact solver -------------------------------------------------------------------------------

TABLE_SIZE = 8388617
"""A prime above 2**23 (8M entries, 64 MB). An entry is one ``uint64``, ``key << 8 | bound``:
a key has at most 49 bits, so it fits whole and one memory access reads both."""
UPPER_OFFSET = 1 - MIN_SCORE
"""An upper bound ``u`` is stored as ``u + UPPER_OFFSET`` (1..37; 0 means an empty slot) ..."""
LOWER_OFFSET = MAX_SCORE - 2 * MIN_SCORE + 2
"""... and a lower bound ``l`` as ``l + LOWER_OFFSET`` (38..74)."""
SOLVER_CHECK_EVERY = 4095
NODES, STOPPED = 0, 1


class SolverTables(NamedTuple):
    """The solver's memory: its table of bounds, move lists per stone count, and counters."""

    entries: np.ndarray
    moves: np.ndarray
    scores: np.ndarray
    counters: np.ndarray


def new_solver_tables() -> SolverTables:
    """Empty solver memory (a 64 MB table, written through once so that no page faults
    interrupt the search later)."""
    return SolverTables(
        entries=np.full(TABLE_SIZE, 0, np.uint64),
        moves=np.zeros((CELLS + 1, WIDTH), np.uint64),
        scores=np.zeros((CELLS + 1, WIDTH), np.int64),
        counters=np.zeros(2, np.int64),
    )


@njit(cache=True, _nrt=False)  # no reference counting: it only touches preallocated arrays
def solver_negamax(
    position: np.uint64, mask: np.uint64, stones: int, alpha: int, beta: int,
    tables: SolverTables, deadline: float,
) -> int:
    """Exact score if within ``(alpha, beta)``, else a bound on that side; the side to move
    must not be able to win at once. Returns 0 once time is up (``counters[STOPPED]``)."""
    counters = tables.counters
    counters[NODES] += 1
    if counters[NODES] & SOLVER_CHECK_EVERY == 0 and clock() > deadline:
        counters[STOPPED] = 1
    if counters[STOPPED]:
        return 0

    candidates = non_losing_moves(position, mask)
    if candidates == 0:
        return -((CELLS - stones) // 2)  # the opponent wins with the next stone
    if stones >= CELLS - 2:
        return 0  # neither side can win with the last two stones

    # We cannot win with our next stone (precondition) nor lose at the opponent's next one:
    low = -((CELLS - 2 - stones) // 2)
    high = (CELLS - 1 - stones) // 2
    key = position + mask
    slot = int(key % np.uint64(TABLE_SIZE))
    entry = tables.entries[slot]
    if entry >> S8 == key:
        bound = int(entry & np.uint64(0xFF))
        if bound > LOWER_OFFSET + MIN_SCORE - 1:
            low = max(low, bound - LOWER_OFFSET)
        elif bound:
            high = min(high, bound - UPPER_OFFSET)
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta

    # Order the moves: most winning squares made first; among equals, central columns first.
    moves, scores = tables.moves, tables.scores
    count = 0
    for i in range(WIDTH - 1, -1, -1):
        move = candidates & column_mask(COLUMN_ORDER[i])
        if move:
            score = popcount(winning_squares(position | move, mask))
            j = count
            while j and scores[stones, j - 1] > score:
                moves[stones, j], scores[stones, j] = moves[stones, j - 1], scores[stones, j - 1]
                j -= 1
            moves[stones, j], scores[stones, j] = move, score
            count += 1

    for j in range(count - 1, -1, -1):
        move = moves[stones, j]
        score = -solver_negamax(position ^ mask, mask | move, stones + 1, -beta, -alpha, tables, deadline)
        if counters[STOPPED]:
            return 0
        if score >= beta:
            tables.entries[slot] = (key << S8) | np.uint64(score + LOWER_OFFSET)
            return score
        if score > alpha:
            alpha = score
    tables.entries[slot] = (key << S8) | np.uint64(alpha + UPPER_OFFSET)
    return alpha


@njit(cache=True)
def half(score: int) -> int:
    """Half of ``score`` rounded toward zero."""
    return score // 2 if score >= 0 else -(-score // 2)


@njit(cache=True)
def solve(
    position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables, deadline: float,
    weak: bool = False,
) -> tuple[int, bool]:
    """``(score, solved)`` of a running position for the side to move (``weak``: only the sign).

    Narrows ``[low, high]`` with null-window searches, probing near zero first
    (most positions are close games). ``solved`` is False when the deadline
    (``time.perf_counter()`` seconds) came first.
    """
    if playable(mask) & winning_squares(position, mask):
        return (CELLS + 1 - stones) // 2, True
    low = -((CELLS - stones) // 2)
    high = (CELLS + 1 - stones) // 2
    if weak:
        low, high = -1, 1
    while low < high:
        middle = low + (high - low) // 2
        if middle <= 0 and half(low) < middle:
            middle = half(low)
        elif middle >= 0 and half(high) > middle:
            middle = half(high)
        score = solver_negamax(position, mask, stones, middle, middle + 1, tables, deadline)
        if tables.counters[STOPPED]:
            return 0, False
        if score <= middle:
            high = score
        else:
            low = score
    return low, True


@njit(cache=True)
def solve_column(
    position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables, deadline: float,
    weak: bool = False,
) -> tuple[int, int, bool]:
    """``(column, score, solved)``: a best move (0-based column) of a running position and its score.

    A winning side wins as fast as it can, a losing side holds out longest. When
    time runs out first, ``solved`` is False and the column means nothing.
    ``weak`` only tells a win (1) from a draw (0) and a loss (-1), which takes about
    half the time: the column then keeps that result, not the fastest win.
    """
    tables.counters[:] = 0
    free = playable(mask)
    wins = free & winning_squares(position, mask)
    if wins:
        return lowest_column(wins), (CELLS + 1 - stones) // 2, True
    safe = non_losing_moves(position, mask)
    if safe == 0:  # lost at the next stone: still block a threat, should the opponent look away
        threats = free & winning_squares(position ^ mask, mask)
        return lowest_column(threats if threats else free), -((CELLS - stones) // 2), True
    score, solved = solve(position, mask, stones, tables, deadline, weak)
    if not solved:
        return -1, 0, False
    for i in range(WIDTH):
        move = safe & column_mask(COLUMN_ORDER[i])
        if move:
            # Does this move hold the opponent to -score or less?
            reply = solver_negamax(position ^ mask, mask | move, stones + 1, -score, -score + 1, tables, deadline)
            if tables.counters[STOPPED]:
                return -1, 0, False
            if reply <= -score:
                return COLUMN_ORDER[i], score, True
    return -1, score, False  # unreachable if the solver is right


@njit(cache=True)
def solve_many(
    positions: np.ndarray, masks: np.ndarray, stones: np.ndarray, tables: SolverTables
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and node counts of many positions in one compiled call (for benchmarks)."""
    scores = np.zeros(len(positions), np.int64)
    nodes = np.zeros(len(positions), np.int64)
    for i in range(len(positions)):
        tables.counters[:] = 0
        scores[i] = solve(positions[i], masks[i], stones[i], tables, np.inf, False)[0]
        nodes[i] = tables.counters[NODES]
    return scores, nodes


# --- Heuristic search hooks (state: uint64 array [position, mask, stones]) ----------------------

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


# --- The master bot -----------------------------------------------------------------------------

DEFAULT_SECONDS = 1.0
"""Thinking time per move when the bot is given no budget."""
SOLVER_SHARE = 0.5
"""Share of the move's time given to the exact solver before the heuristic search takes over."""


class Connect4Master(EngineBot):
    """The ``master`` level: plays perfectly once the solver can see the end, else searches.

    Each move first tries to solve the position exactly within half its time;
    if that fails, the shared search with the odd/even threat heuristic uses
    the rest. Both keep their tables from move to move within a game. Compiled
    code is loaded (or compiled, the very first time) when the bot is built, so
    a move's time goes to thinking.
    """

    MEMORY = ("_solver", "_searcher")
    SEARCH, MAX_MOVES, MOVE_SPACE = search, WIDTH, WIDTH

    def __init__(self, game_id: str = "connect4", level: str = "master", seed: int | None = None) -> None:
        super().__init__(game_id, level, seed)

    def _warm_up(self) -> None:
        warm_up()

    def _memory(self) -> None:
        self._solver = new_solver_tables()
        super()._memory()

    def new_game(self) -> None:
        """Forget the tables of the last game."""
        self._memory()

    def choose(self, state: C4State, budget: TimeBudget | None = None) -> Drop:
        """The best move found before the deadline (``budget`` less a margin; 1 s without one)."""
        start = time.perf_counter()
        if state.result is not None:
            raise ValueError("the game is over: there is no move to choose")
        seconds = thinking_seconds(budget, DEFAULT_SECONDS)
        deadline = start + seconds
        position, mask, stones = from_state(state)
        columns = legal_columns(mask)
        if len(columns) == 1:
            self._last = {"forced": True}
            return to_drop(columns[0])
        if stones == 0:
            # Known theory (Allis, Allen 1988): the centre is the only first stone that wins,
            # and the empty board is far beyond both the solver and the heuristic's horizon.
            self._last = {"book": True}
            return to_drop(WIDTH // 2)

        # A weak solve (win, draw or loss) takes about half the time of an exact one, so it
        # reaches positions a few stones earlier, where the heuristic still makes mistakes.
        column, score, solved = solve_column(
            np.uint64(position), np.uint64(mask), stones, self._solver, start + SOLVER_SHARE * seconds,
            True,
        )
        solver_nodes = int(self._solver.counters[NODES])
        if solved and score < 0:
            # Lost against perfect play: hold out longest, which the exact score tells.
            column, score, solved = solve_column(
                np.uint64(position), np.uint64(mask), stones, self._solver, start + SOLVER_SHARE * seconds,
            )
            solver_nodes += int(self._solver.counters[NODES])
        if solved and column in columns:
            self._last = {"solved": True, "score": int(score), "nodes": solver_nodes,
                          "seconds": time.perf_counter() - start}
            return to_drop(column)

        board = np.array([position, mask, stones], np.uint64)
        result = self._searcher.think(board, deadline, max_depth=CELLS - stones)
        self._last = {"solved": False, "score": result.score, "depth": result.depth,
                      "nodes": solver_nodes + result.nodes, "seconds": time.perf_counter() - start}
        if result.move == NO_MOVE or result.move not in columns:
            return to_drop(columns[0])  # cannot happen for a running game; never answer illegally
        return to_drop(result.move)


_warm = False


def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process."""
    global _warm
    if _warm:
        return
    position, mask, stones = from_moves("4453")
    tables = new_solver_tables()
    solve_column(np.uint64(position), np.uint64(mask), stones, tables, 0.0)
    solve_many(np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.int64), tables)
    searcher = Searcher(search, max_moves=WIDTH, move_space=WIDTH, table_bits=4)
    searcher.think(np.array([position, mask, stones], np.uint64), 0.0, max_depth=2)
    _warm = True
