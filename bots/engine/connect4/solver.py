"""The exact Connect Four solver, after Pascal Pons (blog.gamesolver.org).

Negamax with alpha-beta over a score range that shrinks with the stones left, null-window passes over the score
bounds, columns tried centre first and then by how many winning squares a move makes, only moves that do not lose
at once, a table of bounds, and, from 20 stones on, a draw bound where a side has no four left to make (for the
first player to move: none among the squares the second player's claimeven leaves it, and a loss bound where
that claimeven also completes a four of the second's; for the second player to move, a draw or win bound where
one of its moves leaves the first that claimeven, and a loss bound where the first has a threat on an odd row of
a column of an odd number of empty squares that follow-up wins, or makes one). Given the field's opening book
(:mod:`~bots.engine.connect4.fieldbook`), a search stops at 12 stones and reads the exact score there: positions
of fewer stones are solved over the book's leaves. Scores are those of the public test sets: a win scores 22 minus
the stones the winner will have played, a draw 0, a loss the negative."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..bits import popcount
from ..search import NO_LIMIT, count_node, slot_of
from .fieldbook import BOOK_STONES, NOT_IN_BOOK, FieldBook, field_score, no_book, parent_bound
from .position import (
    BOARD,
    CELLS,
    COLUMN_ORDER,
    ODD_ROWS,
    ONE,
    S1,
    S8,
    WIDTH,
    column_mask,
    has_four,
    lowest_column,
    non_losing_moves,
    playable,
    winning_squares,
)

MIN_SCORE = -(CELLS // 2) + 3
"""-18: the worst score, losing with one's fourth stone."""
MAX_SCORE = (CELLS + 1) // 2 - 3
"""18: the best score, winning with one's fourth stone."""

TABLE_SIZE = 1 << 20
"""1M entries (8 MB), a slot found by Fibonacci hashing (:func:`~bots.engine.search.slot_of`). Master's hardest
solves take about a million nodes, which this table holds nearly as well as 8M entries (0.5% more nodes on the
positions of ``benchmarks/connect4_speed.py``) while its look-ups, mostly in cache, run 1.2 to 1.5 times as many
nodes a second (docs/ENGINES.md, "A smaller table"). An entry is one ``uint64``, ``move << 57 | key << 8 |
bound``: a key has at most 49 bits, so it fits whole (no false hit whatever the size) and one memory access reads
all three."""
KEY_BITS = np.uint64((1 << 49) - 1)
"""The key's bits in an entry, once shifted down by 8."""
MOVE_SHIFT = np.uint64(57)
"""Where an entry keeps its best move: the column plus one (0: none known), tried first when the position
comes back (a column that refuted the window before mostly refutes it again)."""
UPPER_OFFSET = 1 - MIN_SCORE
"""An upper bound ``u`` is stored as ``u + UPPER_OFFSET`` (1..37; 0 means an empty slot) ..."""
LOWER_OFFSET = MAX_SCORE - 2 * MIN_SCORE + 2
"""... and a lower bound ``l`` as ``l + LOWER_OFFSET`` (38..74)."""
ETC_STONES = 34
"""Below this many stones a node first looks its moves' positions up in the table (an enhanced transposition
cutoff); nearer the end the look-ups cost more than the nodes they save."""
SOLVER_CHECK_EVERY = 4095
"""Nodes between two looks at the clock and the node limit, less one."""
DEAD_LINES_STONES = 20
"""From this many stones on a node first bounds its score where a side has no four left to make (for the first
player to move: none among the squares the second's claimeven leaves it, :func:`claimeven`; for the second, after
one of its moves, :func:`claimeven_reply`; the first player's odd threat, :func:`odd_threat_wins`); before that
the nodes are few and the check would rarely bound anything."""
NODES, STOPPED, LIMIT = 0, 1, 2
"""Indexes into ``SolverTables.counters``: nodes searched, 1 once stopped, and the node limit."""


class SolverTables(NamedTuple):
    """The solver's memory: its table of bounds, move lists per stone count, counters, and the opening
    book it reads at 12 stones (empty arrays: none)."""

    entries: np.ndarray
    moves: np.ndarray
    scores: np.ndarray
    counters: np.ndarray
    book_keys: np.ndarray
    book_values: np.ndarray


def new_solver_tables(
    node_limit: int | None = None, book: FieldBook | None = None, size: int = TABLE_SIZE,
) -> SolverTables:
    """Empty solver memory (a table of ``size`` entries of 8 bytes, a power of two, written through once so that
    no page faults interrupt the search later); each solve stops after ``node_limit`` nodes, if given. With
    ``book`` (:func:`~bots.engine.connect4.fieldbook.field_book`) searches end at its 12-stone positions."""
    if size < 1 or size & (size - 1):
        raise ValueError(f"the solver's table size must be a power of two, not {size}")
    book = no_book() if book is None else book
    return SolverTables(
        entries=np.full(size, 0, np.uint64),
        moves=np.zeros((CELLS + 1, WIDTH), np.uint64),
        scores=np.zeros((CELLS + 1, WIDTH), np.int64),
        counters=np.array([0, 0, NO_LIMIT if node_limit is None else node_limit], np.int64),
        book_keys=book.keys,
        book_values=book.values,
    )


@njit(cache=True, _nrt=False)  # no reference counting: it only touches preallocated arrays
def solver_negamax(
    position: np.uint64, mask: np.uint64, stones: int, alpha: int, beta: int,
    tables: SolverTables, deadline: float,
) -> int:
    """Exact score if within ``(alpha, beta)``, else a bound on that side; the side to move
    must not be able to win at once. Returns 0 once time or the node limit is up (``counters[STOPPED]``)."""
    if count_node(tables.counters, SOLVER_CHECK_EVERY, deadline):
        return 0

    candidates = non_losing_moves(position, mask)
    if candidates == 0:
        return -((CELLS - stones) // 2)  # the opponent wins with the next stone
    if stones >= CELLS - 2:
        return 0  # neither side can win with the last two stones
    if stones == BOOK_STONES and len(tables.book_keys):
        exact = field_score(tables.book_keys, tables.book_values, position, mask)
        if exact != NOT_IN_BOOK:  # (never missing where the side to move cannot win at once)
            return exact

    # We cannot win with our next stone (precondition) nor lose at the opponent's next one:
    low = -((CELLS - 2 - stones) // 2)
    high = (CELLS - 1 - stones) // 2
    key = position + mask
    slot = slot_of(tables.entries, key)
    entry = tables.entries[slot]
    best = -1  # the column that refuted a window here before, if the table knows one
    if (entry >> S8) & KEY_BITS == key:
        best = int(entry >> MOVE_SHIFT) - 1
        bound = int(entry & np.uint64(0xFF))
        if bound > LOWER_OFFSET + MIN_SCORE - 1:
            low = max(low, bound - LOWER_OFFSET)
        elif bound:
            high = min(high, bound - UPPER_OFFSET)
    if stones == BOOK_STONES + 1 and len(tables.book_keys):  # its parents, in the book, bound it from below
        bound = parent_bound(tables.book_keys, tables.book_values, position, mask)
        if bound > low:
            low = bound
    if stones >= DEAD_LINES_STONES and max(alpha, low) < min(beta, high):
        # Each rule bounds the score by a draw or the smallest win or loss, so it is asked only where that bound
        # would end the node: an upper bound of 0 (-1) when the window starts at 0 (-1) or above, a lower bound of
        # 0 (1) when it ends at 0 (1) or below.
        floor, ceiling = max(alpha, low), min(beta, high)
        if stones % 2 == 0:
            if floor >= -1:
                most, sure = claimeven(position, mask)
                if not has_four(most):
                    high = min(high, -1 if has_four(sure) else 0)
            if ceiling <= 1 and odd_threat_reply(position, mask, candidates):
                low = max(low, 1)
        else:
            if floor >= 0 and not has_four(position | (BOARD ^ mask)):
                high = min(high, 0)
            if floor >= -1 and odd_threat_wins(position, mask):
                high = min(high, -1)
            if ceiling <= 1:
                low = max(low, claimeven_reply(position, mask, candidates))
        if ceiling <= 0 and not has_four((position ^ mask) | (BOARD ^ mask)):
            low = max(low, 0)
    top = low  # the best score seen, at least that of the moves left out
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta

    # Order the moves: the table's best move first, then most winning squares made; among equals, central
    # columns first.
    moves, scores = tables.moves, tables.scores
    good_rows = ODD_ROWS if stones % 2 == 0 else ODD_ROWS << S1  # the first player's threats are strong on odd rows
    count = 0
    for i in range(WIDTH - 1, -1, -1):
        move = candidates & column_mask(COLUMN_ORDER[i])
        if move:
            if stones < ETC_STONES:  # enhanced transposition cutoff: a reply the table knows is bad enough
                child = (position ^ mask) + (mask | move)
                known = tables.entries[slot_of(tables.entries, child)]
                if (known >> S8) & KEY_BITS == child:
                    bound = int(known & np.uint64(0xFF))
                    if 0 < bound < LOWER_OFFSET + MIN_SCORE and UPPER_OFFSET - bound >= beta:
                        return UPPER_OFFSET - bound
            if COLUMN_ORDER[i] == best:
                score = 64
            else:
                made = winning_squares(position | move, mask)
                score = 2 * popcount(made) + popcount(made & good_rows)
            j = count
            while j and scores[stones, j - 1] > score:
                moves[stones, j], scores[stones, j] = moves[stones, j - 1], scores[stones, j - 1]
                j -= 1
            moves[stones, j], scores[stones, j] = move, score
            count += 1

    for j in range(count - 1, -1, -1):
        move = moves[stones, j]
        score = -solver_negamax(position ^ mask, mask | move, stones + 1, -beta, -alpha, tables, deadline)
        if tables.counters[STOPPED]:
            return 0
        if score >= beta:
            column = np.uint64(lowest_column(move) + 1)
            tables.entries[slot] = (column << MOVE_SHIFT) | (key << S8) | np.uint64(score + LOWER_OFFSET)
            return score
        if score > alpha:
            alpha = score
        if score > top:
            top = score
    # Fail-soft: every move is at most ``top`` (the moves left out lose at once, at most ``low``), a tighter
    # upper bound than alpha for the table and for the next null window of the caller.
    kept = np.uint64(best + 1) << MOVE_SHIFT  # an upper bound names no best move: keep the one known
    tables.entries[slot] = kept | (key << S8) | np.uint64(top + UPPER_OFFSET)
    return top


@njit(cache=True)
def claimeven(position: np.uint64, mask: np.uint64) -> tuple[np.uint64, np.uint64]:
    """``(most, sure)`` for the first player to move, when the second answers a move in a column of an even
    number of empty squares in the same column (claimeven) and a move in a column of an odd number in another such
    column (there is one: the empty squares are even in all), after which both are even: ``most`` holds the
    squares the first player ends up with at most (its stones, every empty square of rows 0, 2 and 4, and the next
    square of each column of an odd number), ``sure`` those the second player surely gets (its stones and every
    other empty square). No four in ``most``: the first player cannot win; a four in ``sure`` too: it loses."""
    empty = BOARD ^ mask
    odd = playable(mask) & ~ODD_ROWS  # the next square of each column of an odd number of empty squares
    most = position | (empty & ODD_ROWS) | odd
    return most, (position ^ mask) | (empty & ~ODD_ROWS & ~odd)


@njit(cache=True)
def odd_threat_wins(position: np.uint64, mask: np.uint64) -> bool:
    """True when the first player wins against the second, to move, by a threat on row 1, 3 or 5 (counted from 1)
    of a column of an odd number of empty squares. It answers a move in that column or in a column of an even
    number in the same column, and a move in another column of an odd number in yet another such column (there
    is one: those are even in number once the threat's is left out), so the second player plays every other square
    of the threat's column below the threat and the first the threat itself once the other columns are full;
    provided the second player cannot make a four of its stones, the lower square of each pair in the even columns,
    the other odd columns and its squares below the threat."""
    empty = BOARD ^ mask
    odd = playable(mask) & ~ODD_ROWS  # the next square of each column of an odd number of empty squares
    if odd == 0:
        return False
    odd_columns = np.uint64(0)
    for column in range(WIDTH):
        if odd & column_mask(column):
            odd_columns |= column_mask(column)
    threats = winning_squares(position ^ mask, mask) & odd_columns & ODD_ROWS
    while threats:
        threat = threats & (ONE + ~threats)  # the lowest left
        column = column_mask(lowest_column(threat))
        theirs = position | (empty & ODD_ROWS & ~odd_columns) | (empty & odd_columns & ~column)
        if not has_four(theirs | (empty & column & ~ODD_ROWS & (threat - ONE))):
            return True
        threats &= ~column  # a higher threat of the same column leaves the second player more squares
    return False


@njit(cache=True)
def odd_threat_reply(position: np.uint64, mask: np.uint64, candidates: np.uint64) -> bool:
    """True when one of the first player's moves among ``candidates`` wins by :func:`odd_threat_wins`."""
    for column in range(WIDTH):
        move = candidates & column_mask(column)
        if move and odd_threat_wins(position ^ mask, mask | move):
            return True
    return False


@njit(cache=True)
def claimeven_reply(position: np.uint64, mask: np.uint64, candidates: np.uint64) -> int:
    """A lower bound on the score of the second player to move from :func:`claimeven` after its moves among
    ``candidates``: 0 where a move leaves the first player no four to make against its claimeven, 1 where it
    also completes one of its own (a win), else ``-CELLS``."""
    bound = -CELLS
    for column in range(WIDTH):
        move = candidates & column_mask(column)
        if move:
            most, sure = claimeven(position ^ mask, mask | move)
            if not has_four(most):
                if has_four(sure):
                    return 1
                bound = 0
    return bound


@njit(cache=True)
def half(score: int) -> int:
    """Half of ``score`` rounded toward zero."""
    return score // 2 if score >= 0 else -(-score // 2)


@njit(cache=True)
def solve(
    position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables, deadline: float,
    weak: bool = False, low_bound: int = -CELLS, high_bound: int = CELLS,
) -> tuple[int, bool]:
    """``(score, solved)`` of a running position for the side to move (``weak``: only the sign; a weak win
    is a lower bound on the score, a weak loss an upper bound).

    Narrows ``[low, high]`` with null-window searches, probing near zero first
    (most positions are close games), from the bounds ``low_bound`` and ``high_bound`` if known (from a
    weak solve). A known win climbs from its lower bound instead (is it ``low + 1`` or more?): a window below
    the score needs one winning line and its fail-soft answer often jumps higher; only the last window, at the
    score, needs every move, where halving from the top pays every move at each window above the score
    (``17133137732261``, known to win: exact step 182,580 nodes to 164,149). The same for a known loss costs
    more (the seed-1 hard set: 0.22 million nodes more). ``solved`` is False when the deadline
    (``time.perf_counter()`` seconds) came first.
    """
    if playable(mask) & winning_squares(position, mask):
        return (CELLS + 1 - stones) // 2, True
    low = max(-((CELLS - stones) // 2), low_bound)
    high = min((CELLS + 1 - stones) // 2, high_bound)
    if weak:  # only the sign: the bounds known, clipped to -1..1
        low, high = min(max(low, -1), 1), max(min(high, 1), -1)
    while low < high:
        middle = low + (high - low) // 2
        if low > 0:  # a known win: climb from it (see the docstring)
            middle = low
        elif middle <= 0 and half(low) < middle:
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
    if weak and high < 0:
        return high, True  # a loss, by at least this much
    return low, True


@njit(cache=True)
def solve_column(
    position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables, deadline: float,
    weak: bool = False, low_bound: int = -CELLS, high_bound: int = CELLS,
) -> tuple[int, int, bool]:
    """``(column, score, solved)``: a best move (0-based column) of a running position and its score.

    A winning side wins as fast as it can, a losing side holds out longest. When
    time runs out first, ``solved`` is False and the column means nothing.
    ``weak`` only tells a win (1) from a draw (0) and a loss (-1), which takes about
    half the time: the column then keeps that result, not the fastest win. A weak loss comes back unsolved
    (its score negative, an upper bound; the column -1): only the exact solve knows which column holds out
    longest. ``low_bound`` and ``high_bound``, bounds on the score known before (a weak solve's), spare the
    exact solve the null windows outside them.
    """
    tables.counters[NODES] = 0
    tables.counters[STOPPED] = 0
    free = playable(mask)
    wins = free & winning_squares(position, mask)
    if wins:
        return lowest_column(wins), (CELLS + 1 - stones) // 2, True
    safe = non_losing_moves(position, mask)
    if safe == 0:  # lost at the next stone: still block a threat, should the opponent look away
        threats = free & winning_squares(position ^ mask, mask)
        return lowest_column(threats if threats else free), -((CELLS - stones) // 2), True
    score, solved = solve(position, mask, stones, tables, deadline, weak, low_bound, high_bound)
    if not solved:
        return -1, 0, False
    if weak and score < 0:
        return -1, score, False  # a weak loss is only an upper bound: no column is sure to hold it
    # The score is proven from below, so some move holds it.
    column = holding_column(position, mask, stones, safe, score, tables, deadline)
    if tables.counters[STOPPED]:
        return -1, 0, False
    return column, score, column >= 0  # (-1: unreachable if the solver is right, but for a weak loss)


@njit(cache=True)
def held_floor(
    position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables, deadline: float,
) -> tuple[int, int, int]:
    """``(column, floor, ceiling)``: a column (0-based) proven to hold the side to move to ``floor`` or more, and
    an upper bound on the score, found before the weak and exact solves, cheaply, as a move to fall back on should
    they not finish (column -1 and floor ``-CELLS``: none found in time).

    Proving that one column holds a score takes a search of that column only, where proving that no column does
    better takes a search of every column: on the hard draw ``4721261235536`` 0.23 million nodes against 2.1
    million. The floor is the one known without a search (the table's, or at 13 stones the parents' in the
    book), held first; then, if it is below a draw, one null window asks whether a draw is held (its fail-soft
    answer a bound on one side), and a column holding that is looked for. ``floor == ceiling``: the column is
    optimal (at 12 stones, where the book knows the exact score). A position won or lost at once is left to
    :func:`solve_column` (column -1).
    """
    tables.counters[NODES] = 0
    tables.counters[STOPPED] = 0
    ceiling = (CELLS + 1 - stones) // 2
    safe = non_losing_moves(position, mask)
    if playable(mask) & winning_squares(position, mask) or safe == 0:
        return -1, -CELLS, ceiling
    floor = known_lower(position, mask, stones, tables)
    if stones == BOOK_STONES and floor > -CELLS and len(tables.book_keys):
        ceiling = floor  # the book's exact score: holding it is all there is to do
    held = -1
    if floor > -CELLS:
        held = holding_column(position, mask, stones, safe, floor, tables, deadline)
        if held < 0:
            return -1, -CELLS, ceiling
    if floor < 0:
        draw = floor - floor  # 0, as a variable: literal arguments compile a second solver_negamax, whose cached
        # copy crashed on loading (numba 0.68)
        score = solver_negamax(position, mask, stones, draw - 1, draw, tables, deadline)
        if tables.counters[STOPPED]:
            return held, floor if held >= 0 else -CELLS, ceiling
        if score < 0:
            return held, floor if held >= 0 else -CELLS, score
        column = holding_column(position, mask, stones, safe, score, tables, deadline)
        if column < 0:
            return held, floor if held >= 0 else -CELLS, ceiling
        held, floor = column, score
    return held, floor, ceiling


@njit(cache=True)
def known_lower(position: np.uint64, mask: np.uint64, stones: int, tables: SolverTables) -> int:
    """The best lower bound on a position's score known without a search: the table's, at 12 stones the book's
    exact score, at 13 stones its parents' in the book (``-CELLS``: none). The side to move must not be able to
    win at once."""
    bound = -CELLS
    key = position + mask
    entry = tables.entries[slot_of(tables.entries, key)]
    if (entry >> S8) & KEY_BITS == key and int(entry & np.uint64(0xFF)) >= LOWER_OFFSET + MIN_SCORE:
        bound = int(entry & np.uint64(0xFF)) - LOWER_OFFSET
    if stones == BOOK_STONES and len(tables.book_keys):
        exact = field_score(tables.book_keys, tables.book_values, position, mask)
        if exact != NOT_IN_BOOK:
            bound = max(bound, exact)
    if stones == BOOK_STONES + 1 and len(tables.book_keys):
        bound = max(bound, parent_bound(tables.book_keys, tables.book_values, position, mask))
    return bound


@njit(cache=True)
def holding_column(
    position: np.uint64, mask: np.uint64, stones: int, safe: np.uint64, score: int, tables: SolverTables,
    deadline: float,
) -> int:
    """A column among ``safe`` (the moves that do not lose at once) that holds the opponent to ``-score`` or less,
    for a position proven to be worth at least ``score`` (-1: out of time, or none found, a solver bug).

    Columns the table or the book already refute are dropped without a search; the table's best column is
    tried first. Some move holds the score, so the last column left once all others are refuted is the one,
    and needs no search of its own.
    """
    left = 0  # the columns not refuted yet, one bit each
    for column in range(WIDTH):
        move = safe & column_mask(column)
        if move and known_lower(position ^ mask, mask | move, stones + 1, tables) <= -score:
            left |= 1 << column
    entry = tables.entries[slot_of(tables.entries, position + mask)]
    first = int(entry >> MOVE_SHIFT) - 1 if (entry >> S8) & KEY_BITS == position + mask else -1
    good_rows = ODD_ROWS if stones % 2 == 0 else ODD_ROWS << S1
    while left:
        # The table's best column, else the one the solver's move order would try first (most winning squares
        # made, those on the mover's strong rows counting half again; centre first among equals).
        column, rank = -1, -1
        for i in range(WIDTH):
            candidate = COLUMN_ORDER[i]
            if left & (1 << candidate):
                made = winning_squares(position | (safe & column_mask(candidate)), mask)
                value = 64 if candidate == first else 2 * popcount(made) + popcount(made & good_rows)
                if value > rank:
                    column, rank = candidate, value
        if left == 1 << column:
            return column
        reply = solver_negamax(
            position ^ mask, mask | (safe & column_mask(column)), stones + 1, -score, -score + 1, tables, deadline
        )
        if tables.counters[STOPPED]:
            return -1
        if reply <= -score:
            return column
        left &= ~(1 << column)
    return -1


@njit(cache=True)
def solve_many(
    positions: np.ndarray, masks: np.ndarray, stones: np.ndarray, tables: SolverTables
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and node counts of many positions in one compiled call (for benchmarks)."""
    scores = np.zeros(len(positions), np.int64)
    nodes = np.zeros(len(positions), np.int64)
    for i in range(len(positions)):
        tables.counters[NODES] = 0
        tables.counters[STOPPED] = 0
        scores[i] = solve(positions[i], masks[i], stones[i], tables, np.inf, False)[0]
        nodes[i] = tables.counters[NODES]
    return scores, nodes
