"""How the Magnetic Cave search judges positions and picks the moves it looks at, and the compiled search.

Exact pruning in move generation (no value changes): a winning brick is the
only move searched; when the opponent threatens to win on an open square, the
block is the only move (with two such squares every move loses, and one
stands for all); and a brick beside an opponent's threat square, which would
open that square for the opponent's win, is searched only when every move
does that.

The evaluation (only at the search horizon), for the side to move:

* a win at hand, or two opposing wins at hand (a double threat that cannot
  both be blocked), is decisive: ``+-WIN_AT_HAND``;
* threat squares (fours: open or broken) count ``THREAT`` each, and two
  threat squares side by side in a row ``THREAT_PAIR`` more: whoever opens
  one, the owner wins on one of the two;
* lines of five free of opposing bricks with two or three bricks (open and
  broken threes) count ``LINE_POINTS``, as do a lone brick and an empty line
  a little; the side the evaluation plays for (the root's side to move:
  ``master``) counts its own lines 1.5 times (``OWN_LINES``), so it builds
  more than it blocks, and keeps lines open. Only columns and diagonals
  count (``DIRECTION_QUARTERS``): a row fills from its two ends, so the empty
  square of a four along it is always open, a win at hand or a forced block,
  never a threat square that lasts;
* a win by a chain of fours (``wins_by_fours``, a VCF search over bitboards):
  bricks that each leave one open winning square, so that every reply is a
  forced block, until two open winning squares or a block that opens one of
  ours. It proves wins (it never claims a false one) a few plies beyond the
  horizon for ``WINS_BY_FOURS``. The squares that make a four fall out of the
  line counts, which count both sides in one pass, so the chain costs the
  evaluation little.

The endgame evaluation takes over from ``LATE_FROM`` bricks, wholly after
``LATE_RAMP`` more: it counts threat squares (``LATE_THREAT``), squares where a
brick would make one (``LATE_MAKER``), the move (``LATE_TEMPO``), and who the
filling of the board will force (``LATE_ZUGZWANG``, :func:`zugzwang`). The
filling model: each row's empty squares are runs that fill from both ends; a
brick beside an opposing threat square loses, one beside one's own forces the
block and keeps the move. So once the squares safe for both run out, the side
with more threat squares wins; one more wins only with the right parity. Its
weights are a least-squares fit of four features to the exact values of
solved endgames (see docs/ENGINES.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..bits import list_squares, lowest_index, popcount
from ..search import make_search
from .position import (
    NOT_H,
    ONE,
    S1,
    SIZE,
    SQUARES,
    ZERO,
    backward,
    beside,
    forward,
    game_result,
    key,
    open_squares,
    play,
    threat_squares,
    undo,
)


def _window_starts() -> np.ndarray:
    steps = ((1, 0), (0, 1), (1, 1), (-1, 1))
    starts = np.zeros(4, np.uint64)
    for d, (dc, dr) in enumerate(steps):
        mask = 0
        for square in range(SQUARES):
            col, row = square % SIZE, square // SIZE
            if 0 <= col + 4 * dc < SIZE and 0 <= row + 4 * dr < SIZE:
                mask |= 1 << square
        starts[d] = np.uint64(mask)
    return starts


WINDOW_STARTS = _window_starts()
"""Per direction, the squares where a line of five starts (runs up the index)."""

WIN_AT_HAND = 2000
"""Heuristic value of a win the search will find a ply later."""
WINS_BY_FOURS = 1500
"""Heuristic value of a win by a chain of fours (see ``wins_by_fours``) beyond the horizon."""
FOUR_CHAIN = np.int64(6)
"""Longest chain of fours the evaluation looks for."""
THREAT = 60
THREAT_PAIR = 150
LINE_POINTS = (2, 3, 6, 24)
"""Points of a line of five free of opposing bricks, by our bricks in it (0-3). An empty line counts for
both sides, so it is worth something only through ``OWN_LINES``: to the side played for, who thereby keeps
the board open (see docs/ENGINES.md: with empty lines at 0 and one brick at 1, the second player drew
more)."""
OWN_LINES = 6
"""The side the evaluation plays for (``state[3]``) counts its own ``LINE_POINTS`` ``OWN_LINES``
quarters, 1.5 times, and the opponent's once: it builds more than it blocks."""
DIRECTION_QUARTERS = (0, 8, 8, 8)
"""Quarters of its ``LINE_POINTS`` a line counts, by direction: along a row, a column, and the two
diagonals. A row's bricks grow from its two ends, so its empty squares are one run in the middle and a
four along it always has its fifth square open: such lines make only forcing moves, which the search and
``wins_by_fours`` see, never the lasting threat squares the game is won by. Counting them as much as the
others drew more games (see docs/ENGINES.md, *Lines along the rows*)."""
LATE_FROM = 28
"""Bricks on the board after which the endgame evaluation starts to take over."""
LATE_RAMP = 16
"""Bricks over which it takes over: from ``LATE_FROM + LATE_RAMP`` bricks on it is used alone."""
LATE_THREAT = 104
"""Endgame value of each threat square more than the opponent's."""
LATE_MAKER = 48
"""Endgame value of each empty square where a brick would make a threat square, more than the opponent's."""
LATE_ZUGZWANG = 212
"""Endgame value of the side ``zugzwang`` says the filling of the board will force."""
LATE_TEMPO = 84
"""Endgame value of having the move."""


# --- Threats and lines ----------------------------------------------------------------------------


@njit(cache=True)
def four_makers(mine: np.uint64, theirs: np.uint64) -> np.uint64:
    """Empty squares where a brick of ``mine`` makes a new threat square: the empty squares of
    the lines of five holding three of ``mine`` and none of ``theirs``."""
    return line_points(mine, theirs)[2]


@njit(cache=True)
def wins_by_fours(mine: np.uint64, theirs: np.uint64, my_threats: np.uint64, their_threats: np.uint64,
                  makers: np.uint64, depth: int) -> bool:
    """True when ``mine`` (to move) wins by a chain of at most ``depth`` fours (exact, not complete).

    ``my_threats`` and ``their_threats`` are the two sides' threat squares,
    ``makers`` is ``four_makers(mine, theirs)``. A
    *four* is a brick after which ``mine`` wins on an open square, and that
    opens no square where the opponent wins: the opponent must block. Two such
    squares win; a block that opens one of ours wins; a block that gives the
    opponent an open win ends the chain as a failure. Every opposing reply is
    forced, so True is a proof of a win; False proves nothing. The opponent
    must have no open win at the start.
    """
    occupied = mine | theirs
    free = open_squares(occupied)
    if my_threats & free:
        return True
    if depth <= 0:
        return False
    candidates = free & (makers | beside(my_threats)) & ~beside(their_threats)
    while candidates:
        move = candidates & (~candidates + ONE)
        candidates ^= move
        after = occupied | move
        threats = threat_squares(mine | move, ~after)
        wins = threats & open_squares(after)
        if wins == 0:
            continue
        if wins & (wins - ONE):
            return True
        blocked = theirs | wins
        after |= wins
        counter = threat_squares(blocked, ~after)
        if counter & open_squares(after):
            continue  # the block makes a four of its own: no longer a chain of fours
        mine_after = mine | move
        if wins_by_fours(mine_after, blocked, threats & ~wins, counter, four_makers(mine_after, blocked), depth - 1):
            return True
    return False


@njit(cache=True)
def line_points(mine: np.uint64, theirs: np.uint64) -> tuple[int, int, np.uint64, np.uint64]:
    """``LINE_POINTS`` of ``mine``'s lines of five (those holding none of ``theirs``, scored by how
    many of ``mine`` they hold), those of ``theirs``; and ``four_makers(mine, theirs)`` and
    ``four_makers(theirs, mine)``, which fall out of the same counts."""
    total = 0
    their_total = 0
    makers = ZERO
    their_makers = ZERO
    for d in range(4):
        # Count each side's bricks in every line of five with bit-sliced adders (64 lines at once).
        a0, a1, a2 = mine, ZERO, ZERO
        b0, b1, b2 = theirs, ZERO, ZERO
        m = mine
        t = theirs
        for _ in range(4):
            m = backward(m, d)
            t = backward(t, d)
            carry = a0 & m
            a0 ^= m
            a2 |= a1 & carry
            a1 ^= carry
            carry = b0 & t
            b0 ^= t
            b2 |= b1 & carry
            b1 ^= carry
        starts = WINDOW_STARTS[d]
        empty_lines = LINE_POINTS[0] * np.int64(popcount(starts & ~(a0 | a1 | a2) & ~(b0 | b1 | b2)))
        points = empty_lines
        their_points = empty_lines
        mine_only = starts & ~(b0 | b1 | b2) & ~a2
        theirs_only = starts & ~(a0 | a1 | a2) & ~b2
        points += LINE_POINTS[1] * np.int64(popcount(mine_only & a0 & ~a1))
        their_points += LINE_POINTS[1] * np.int64(popcount(theirs_only & b0 & ~b1))
        points += LINE_POINTS[2] * np.int64(popcount(mine_only & ~a0 & a1))
        their_points += LINE_POINTS[2] * np.int64(popcount(theirs_only & ~b0 & b1))
        threes = mine_only & a0 & a1
        their_threes = theirs_only & b0 & b1
        points += LINE_POINTS[3] * np.int64(popcount(threes))
        their_points += LINE_POINTS[3] * np.int64(popcount(their_threes))
        total += (points * DIRECTION_QUARTERS[d]) // 4
        their_total += (their_points * DIRECTION_QUARTERS[d]) // 4
        for _ in range(5):
            makers |= threes
            their_makers |= their_threes
            threes = forward(threes, d)
            their_threes = forward(their_threes, d)
    empty = ~(mine | theirs)
    return total, their_total, makers & empty, their_makers & empty


@njit(cache=True)
def zugzwang(threats: int, pool: int) -> int:
    """Who the end of the game forces, if no new threat squares arose: +1, 0 or -1 for the side to move.

    ``threats`` is the side to move's threat squares less the opponent's,
    ``pool`` the empty squares that are neither threat squares nor beside one.
    Model: the bricks on the pool are safe for both; once they run out, the
    side to move must play beside a threat square. Beside its own, the
    opponent must block and the turn comes back (one own threat square used
    up, the square beyond it added to the pool); beside an opposing one, it
    loses. So two more threat squares win, one more wins when the pool's
    parity leaves the opponent to move when it runs out, equal counts draw.
    """
    if threats >= 2:
        return 1
    if threats <= -2:
        return -1
    if threats == 1:
        return 1 if pool % 2 == 1 else 0
    if threats == -1:
        return -1 if pool % 2 == 0 else 0
    return 0


# --- Search hooks ---------------------------------------------------------------------------------


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """The moves worth searching: a win alone, a forced block alone, else the moves that do not
    open a square where the opponent wins (all of them when every move does)."""
    mine, theirs = state[0], state[1]
    occupied = mine | theirs
    empty = ~occupied
    free = open_squares(occupied)
    wins = free & threat_squares(mine, empty)
    if wins:
        moves[0] = lowest_index(wins)
        return 1
    danger = threat_squares(theirs, empty)
    forced = free & danger
    if forced:
        moves[0] = lowest_index(forced)  # with two, this loses like any other move
        return 1
    candidates = free & ~beside(danger)
    return list_squares(candidates if candidates else free, moves)


@njit(cache=True)
def evaluate(state: np.ndarray) -> int:
    """Heuristic value for the side to move (see the module notes); the brick count sets the phase."""
    return evaluate_phase(state, min(max(np.int64(state[2]) - LATE_FROM, 0), LATE_RAMP))


@njit(cache=True)
def evaluate_phase(state: np.ndarray, late_weight: int) -> int:
    """``evaluate`` with the endgame terms weighted ``late_weight`` out of ``LATE_RAMP``.

    0 is the middle-game evaluation alone, ``LATE_RAMP`` the endgame one
    alone (decisive values are the same in both).
    """
    mine, theirs = state[0], state[1]
    occupied = mine | theirs
    empty = ~occupied
    free = open_squares(occupied)
    my_threats = threat_squares(mine, empty)
    if my_threats & free:
        return WIN_AT_HAND
    their_threats = threat_squares(theirs, empty)
    their_wins = their_threats & free
    if their_wins & (their_wins - ONE):
        return -WIN_AT_HAND
    my_points, their_points, makers, their_makers = line_points(mine, theirs)
    if (np.int64(state[2]) & 1) == np.int64(state[3]):  # the side played for is to move
        points = (my_points * OWN_LINES) // 4 - their_points
    else:
        points = my_points - (their_points * OWN_LINES) // 4
    if their_wins == 0 and wins_by_fours(mine, theirs, my_threats, their_threats, makers, FOUR_CHAIN):
        return WINS_BY_FOURS
    threats = np.int64(popcount(my_threats)) - np.int64(popcount(their_threats))
    value = points + THREAT * threats
    my_pairs = my_threats & (my_threats >> S1) & NOT_H
    their_pairs = their_threats & (their_threats >> S1) & NOT_H
    value += THREAT_PAIR * (np.int64(popcount(my_pairs)) - np.int64(popcount(their_pairs)))
    if late_weight <= 0:
        return value
    late = LATE_THREAT * threats + LATE_MAKER * (np.int64(popcount(makers)) - np.int64(popcount(their_makers)))
    late += LATE_TEMPO
    if threats != 0:
        zone = (my_threats | their_threats | beside(my_threats | their_threats)) & empty
        pool = np.int64(popcount(empty)) - np.int64(popcount(zone))
        late += LATE_ZUGZWANG * zugzwang(threats, pool)
    return (value * (LATE_RAMP - late_weight) + late * late_weight) // LATE_RAMP


@njit(cache=True)
def order_hint(state: np.ndarray, square: int) -> int:
    """No game hint: the table move, killers and history order better than any cheap rule tried."""
    return 0


search = make_search(
    "magnetic_cave", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The shared search, compiled for Magnetic Cave."""
