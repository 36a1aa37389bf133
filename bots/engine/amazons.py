"""Game of the Amazons engine: compiled rules, territory evaluation, selective search, ``master`` bot.

The position is one ``int64`` array that the search mutates in place: the
100 squares (``row * 10 + col``, row 0 at the bottom; 0 empty, 1 black queen,
2 white queen, 3 arrow, as in the reference rules), the squares of black's
four queens then white's, the seat to move, the ply below the search root
(kept by :func:`play` and :func:`undo`), the widths of the selective search
(set by the bot), and scratch space where the evaluation and move selection
keep their distance maps, queues and scores: the shared search is compiled
without reference counting, so nothing it calls may allocate an array.

A move is ``queen * 10000 + to * 100 + arrow`` (the squares the queen leaves,
reaches and shoots at): under a million, it indexes the search's history
table, and :func:`undo` reads the queen's way back from it.

Selective search. The opening position has 2,176 turns, so even two plies of
full width cost millions of evaluations. The search here is full width only
at the root; below it :func:`generate_moves` keeps the ``width`` best turns by
a cheap static score (the queen's gain in mobility, plus how many squares the
queen and the arrow take from the opposing queens' lines), with a width that
shrinks with the ply (:data:`BEAM`). The root may be narrowed as well, by a
full evaluation of every child (:data:`ROOT_WIDTH`).

Evaluation (after J. Lieberum, "An evaluation function for the game of
Amazons", 2005): breadth-first queen-move and king-move distances from each
side's queens give, over the empty squares, the territories ``t1`` (queen
moves) and ``t2`` (king moves) each side reaches first (a tie counts a little
for the side to move), the position terms ``c1`` (sum of 2^-distance
differences) and ``c2`` (king-distance differences, clipped), and ``w``, how
contested the board still is. Early on (large ``w``) ``t2``, ``c1``, ``c2``
and queen mobility carry weight; as ``w`` falls towards the end, ``t1``
takes over.

Endgame. Once no region of non-arrow squares holds queens of both sides, the
game is a race: the side that can make more moves in its own regions wins
(the side to move needs strictly more). Each side can make at most as many
moves as its regions have empty squares, and at least as many as a greedy
walk (:func:`greedy_fill`) that steps a queen to a neighbour and shoots back
onto the square it left, preferring neighbours with fewer free neighbours
(Warnsdorff's rule). When those bounds decide the race, ``game_result`` says
so and the search takes the proven line; the bot then simply follows the walk.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from bots.base import TimeBudget
from protocol.games.amazons import AmazonsMove, AmazonsState

from .budget import thinking_seconds
from .master import EngineBot
from .search import LOSS, MATE_BOUND, NO_MOVE, RUNNING, WIN, Searcher, SearchResult, make_search
from .squares import neighbour_table

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
"""Root moves searched: the 60 best by the evaluation of the position they lead to. In self-play at
0.2 s a move this reached depth 3-4 in the opening where a full-width root reached 1-2."""
DEFAULT_BEAM = (16, 10, 8, 6, 5, 4, 4, 4)
"""Widths per ply below the root: a dozen or so replies, then fewer and fewer."""

NEIGHBOUR = neighbour_table(SIZE)
"""``NEIGHBOUR[square, d]``: the square next to ``square`` in direction ``d``, or -1 off the board."""

_rng = np.random.default_rng(20240522)
ZOBRIST = _rng.integers(0, np.iinfo(np.uint64).max, (SQUARES, 4), dtype=np.uint64, endpoint=True)
ZOBRIST[:, EMPTY] = 0
ZOBRIST_SIDE = np.uint64(_rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True))
del _rng

POWER = np.array([1024 >> min(d, 11) for d in range(INF + 1)], np.int64)
"""``POWER[d]`` = 1024 * 2**-d (0 from d = 11 on): the weights of ``c1`` and ``w``."""

# Evaluation scale and weights. Values are in 1/SCALE of a square.
SCALE = 16
TIE = 0.2
"""A square both sides reach equally fast counts this much for the side to move (Lieberum's kappa)."""
PHASE_W = 40.0
"""``w`` at or above this is the opening; ``w`` = 0 the end (no square contested)."""
T1_WEIGHT = (0.35, 1.0)
"""Weight of ``t1`` in the opening and at the end (linear in between)."""
T2_WEIGHT = (0.35, 0.1)
C1_WEIGHT = (0.3, 0.0)
C2_WEIGHT = (0.3, 0.0)
MOBILITY_WEIGHT = (0.08, 0.02)
"""Per square a queen reaches in one move (capped at :data:`MOBILITY_CAP`)."""
MOBILITY_CAP = 20
LOW_MOBILITY = np.array([6.0, 3.0, 1.5, 0.7, 0.3], np.float64)
"""Extra squares lost for a queen that reaches only 0, 1, 2, 3 or 4 squares: nearly shut in."""


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


# --- Rules ------------------------------------------------------------------------------------------


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


# --- Regions and the endgame race ----------------------------------------------------------------


@njit(cache=True)
def region_squares(state: np.ndarray, seat: int) -> tuple[int, bool]:
    """Mark (at ``REGION``) the non-arrow squares connected (king steps) to ``seat``'s queens.

    Returns how many of them are empty, and whether an opposing queen is among
    them (the sides are not separated). Every square ``seat`` could ever use is
    marked: arrows stay, so such a region only ever shrinks.
    """
    for square in range(SQUARES):
        state[REGION + square] = 0
    head, tail = 0, 0
    base = QUEENS + 4 * seat
    for i in range(4):
        state[QUEUE + tail] = state[base + i]
        state[REGION + state[base + i]] = 1
        tail += 1
    empty = 0
    enemy = 2 - seat
    while head < tail:
        square = state[QUEUE + head]
        head += 1
        for d in range(8):
            other = NEIGHBOUR[square, d]
            if other < 0 or state[REGION + other] or state[other] == ARROW:
                continue
            state[REGION + other] = 1
            state[QUEUE + tail] = other
            tail += 1
            if state[other] == EMPTY:
                empty += 1
            elif state[other] == enemy:
                return empty, True  # the count is of no use then
    return empty, False


@njit(cache=True)
def greedy_fill(state: np.ndarray, seat: int) -> tuple[int, int]:
    """A number of turns ``seat`` can surely make alone, and the first of them (a move code, or -1).

    Each queen in turn walks by king steps, shooting back onto the square it
    left, always to the neighbour with the fewest free neighbours (ties: lowest
    direction); a walk only uses squares no other walk used, so the count is a
    lower bound on the turns available, whatever the opponent does elsewhere
    once the sides are separated.
    """
    for square in range(SQUARES):
        state[BLOCKED + square] = state[square] != EMPTY
    count, first = 0, -1
    base = QUEENS + 4 * seat
    for i in range(4):
        here = state[base + i]
        while True:
            best, best_free = -1, 9
            for d in range(8):
                step = NEIGHBOUR[here, d]
                if step < 0 or state[BLOCKED + step]:
                    continue
                free = 0
                for e in range(8):
                    beyond = NEIGHBOUR[step, e]
                    if beyond >= 0 and not state[BLOCKED + beyond] and beyond != here:
                        free += 1
                if free < best_free:
                    best, best_free = step, free
            if best < 0:
                break
            if first < 0:
                first = here * 10000 + best * 100 + here
            state[BLOCKED + best] = 1  # the queen stands there; ``here`` stays blocked by the arrow
            here = best
            count += 1
    return count, first


@njit(cache=True)
def race(state: np.ndarray) -> tuple[int, int, int, int, int]:
    """``(separated, my_low, my_high, their_low, their_high)`` for the side to move.

    When the sides are separated, the lows and highs bound how many turns each
    side can still make (see :func:`greedy_fill` and :func:`region_squares`).
    """
    seat = state[TO_MOVE]
    my_high, contact = region_squares(state, seat)
    if contact:
        return 0, 0, 0, 0, 0
    their_high, _ = region_squares(state, 1 - seat)
    my_low = greedy_fill(state, seat)[0]
    their_low = greedy_fill(state, 1 - seat)[0]
    return 1, my_low, my_high, their_low, their_high


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """The rules, plus a separated endgame whose race the turn counts already decide."""
    seat = state[TO_MOVE]
    if not has_turn(state, seat):
        return LOSS
    separated, my_low, my_high, their_low, their_high = race(state)
    if separated:
        if my_low > their_high:  # the side to move needs strictly more turns than the other
            return WIN
        if my_high <= their_low:
            return LOSS
    return RUNNING


@njit(cache=True)
def endgame_move(state: np.ndarray) -> int:
    """A move that keeps a race the turn counts prove won (the first step of the walk), else -1."""
    separated, my_low, _, _, their_high = race(state)
    if separated and my_low > their_high:
        return greedy_fill(state, state[TO_MOVE])[1]
    return -1


# --- Evaluation ----------------------------------------------------------------------------------


@njit(cache=True)
def distances(state: np.ndarray, seat: int, dist: int, queen_moves: bool) -> None:
    """``state[dist + square]``: the fewest moves ``seat``'s queens need to reach each empty square,
    moving like queens (``queen_moves``) or like kings (one step at a time)."""
    for square in range(SQUARES):
        state[dist + square] = INF
    head, tail = 0, 0
    base = QUEENS + 4 * seat
    for i in range(4):
        state[QUEUE + tail] = state[base + i]
        state[dist + state[base + i]] = 0
        tail += 1
    while head < tail:
        square = state[QUEUE + head]
        head += 1
        reach = state[dist + square] + 1
        for d in range(8):
            other = NEIGHBOUR[square, d]
            while other >= 0 and state[other] == EMPTY:
                if state[dist + other] < reach:
                    break  # reached as fast from another square, which walks this line itself
                if state[dist + other] > reach:
                    state[dist + other] = reach
                    state[QUEUE + tail] = other
                    tail += 1
                if not queen_moves:
                    break
                other = NEIGHBOUR[other, d]


@njit(cache=True)
def queen_distances(state: np.ndarray, seat: int, dist: int) -> None:
    """Distances in queen moves (see :func:`distances`)."""
    distances(state, seat, dist, True)


@njit(cache=True)
def king_distances(state: np.ndarray, seat: int, dist: int) -> None:
    """Distances in king steps (see :func:`distances`)."""
    distances(state, seat, dist, False)


@njit(cache=True)
def mobility(state: np.ndarray, seat: int) -> tuple[int, float]:
    """Squares ``seat``'s queens reach in one move (each capped at :data:`MOBILITY_CAP`), and the
    squares of territory its nearly shut-in queens are likely to lose (:data:`LOW_MOBILITY`)."""
    total, danger = 0, 0.0
    base = QUEENS + 4 * seat
    for i in range(4):
        queen = state[base + i]
        count = 0
        for d in range(8):
            other = NEIGHBOUR[queen, d]
            while other >= 0 and state[other] == EMPTY:
                count += 1
                other = NEIGHBOUR[other, d]
        total += min(count, MOBILITY_CAP)
        if count < len(LOW_MOBILITY):
            danger += LOW_MOBILITY[count]
    return total, danger


@njit(cache=True)
def territory(state: np.ndarray) -> tuple[float, float, float, float, float]:
    """Lieberum's ``(t1, t2, c1, c2, w)`` for the side to move."""
    seat = state[TO_MOVE]
    queen_distances(state, seat, MY_QUEEN_DIST)
    queen_distances(state, 1 - seat, THEIR_QUEEN_DIST)
    king_distances(state, seat, MY_KING_DIST)
    king_distances(state, 1 - seat, THEIR_KING_DIST)
    t1 = t2 = 0.0
    c1 = c2 = 0
    w = 0
    for square in range(SQUARES):
        if state[square] != EMPTY:
            continue
        mine, theirs = state[MY_QUEEN_DIST + square], state[THEIR_QUEEN_DIST + square]
        if mine < theirs:
            t1 += 1.0
        elif mine > theirs:
            t1 -= 1.0
        elif mine < INF:
            t1 += TIE
        if mine < INF and theirs < INF:
            w += POWER[abs(mine - theirs)]
        c1 += POWER[mine] - POWER[theirs]
        mine, theirs = state[MY_KING_DIST + square], state[THEIR_KING_DIST + square]
        if mine < theirs:
            t2 += 1.0
        elif mine > theirs:
            t2 -= 1.0
        elif mine < INF:
            t2 += TIE
        c2 += max(-6, min(6, theirs - mine))
    return t1, t2, 2.0 * c1 / 1024.0, c2 / 6.0, w / 1024.0


@njit(cache=True)
def blend(weights: tuple[float, float], opening: float) -> float:
    """Weight between its opening and end values; ``opening`` is 1 at the opening, 0 at the end."""
    return weights[1] + (weights[0] - weights[1]) * opening


@njit(cache=True)
def evaluate(state: np.ndarray) -> int:
    """Heuristic value for the side to move, in 1/SCALE of a square of territory."""
    separated, my_low, my_high, their_low, their_high = race(state)
    if separated:
        # Count the race from the turns each side surely has, plus a share of the uncertain ones;
        # the side to move needs strictly more turns, hence the half.
        mine = my_low + 0.25 * (my_high - my_low)
        theirs = their_low + 0.25 * (their_high - their_low)
        return int(SCALE * (mine - theirs - 0.5))
    t1, t2, c1, c2, w = territory(state)
    opening = min(w / PHASE_W, 1.0)
    seat = state[TO_MOVE]
    my_reach, my_danger = mobility(state, seat)
    their_reach, their_danger = mobility(state, 1 - seat)
    value = (
        blend(T1_WEIGHT, opening) * t1 + blend(T2_WEIGHT, opening) * t2 + blend(C1_WEIGHT, opening) * c1
        + blend(C2_WEIGHT, opening) * c2 + blend(MOBILITY_WEIGHT, opening) * (my_reach - their_reach)
        - my_danger + their_danger
    )
    return int(SCALE * value)


# --- Move selection and ordering -----------------------------------------------------------------


@njit(cache=True)
def line_value(state: np.ndarray, square: int, seat: int) -> int:
    """How many squares an arrow (or queen) on the empty ``square`` takes from the queens' lines:
    twice what it takes from the opponent's, less what it takes from ``seat``'s own."""
    value = 0
    for d in range(8):
        other = NEIGHBOUR[square, d]
        while other >= 0 and state[other] == EMPTY:
            other = NEIGHBOUR[other, d]
        if other < 0 or state[other] == ARROW:
            continue
        cut = 1  # the square itself, and the empty run behind it as the queen sees it
        behind = NEIGHBOUR[square, 7 - d]
        while behind >= 0 and state[behind] == EMPTY:
            cut += 1
            behind = NEIGHBOUR[behind, 7 - d]
        value += 2 * cut if state[other] != seat + 1 else -cut
    return value


@njit(cache=True)
def reach(state: np.ndarray, square: int) -> int:
    """Empty squares a queen on ``square`` sees (the square itself aside)."""
    count = 0
    for d in range(8):
        other = NEIGHBOUR[square, d]
        while other >= 0 and state[other] == EMPTY:
            count += 1
            other = NEIGHBOUR[other, d]
    return count


@njit(cache=True)
def quick_score(state: np.ndarray, move: int) -> int:
    """A cheap static score of a turn: the queen's gain in reach, and what its new square and the
    arrow take from the opponent's lines (see :func:`line_value`). Same value as :func:`select_moves` uses."""
    seat = state[TO_MOVE]
    queen, to, arrow = move // 10000, move // 100 % 100, move % 100
    before = reach(state, queen)
    stone = state[queen]
    state[queen] = EMPTY
    after = reach(state, to)
    state[queen] = stone
    score = 2 * (after - before) + line_value(state, to, seat)
    if arrow != queen:  # as in select_moves, where the queen's square was not empty
        score += line_value(state, arrow, seat)
    return score


@njit(cache=True)
def select_moves(state: np.ndarray, moves: np.ndarray, width: int) -> int:
    """Write the ``width`` best turns by :func:`quick_score` into ``moves``, best first; return how many."""
    seat = state[TO_MOVE]
    for square in range(SQUARES):
        state[LINES + square] = 0
    for i in range(8):  # line_value of every empty square at once, walking out from the queens
        queen = state[QUEENS + i]
        weight = -1 if i // 4 == seat else 2
        for d in range(8):
            run = 0
            other = NEIGHBOUR[queen, d]
            while other >= 0 and state[other] == EMPTY:
                run += 1
                other = NEIGHBOUR[other, d]
            other = NEIGHBOUR[queen, d]
            while run > 0:
                state[LINES + other] += weight * run
                run -= 1
                other = NEIGHBOUR[other, d]
    n = 0
    base = QUEENS + 4 * seat
    for i in range(4):
        queen = state[base + i]
        before = reach(state, queen)
        stone = state[queen]
        state[queen] = EMPTY
        for d in range(8):
            to = NEIGHBOUR[queen, d]
            while to >= 0 and state[to] == EMPTY:
                step = 2 * (reach(state, to) - before) + state[LINES + to]
                for e in range(8):
                    arrow = NEIGHBOUR[to, e]
                    while arrow >= 0 and state[arrow] == EMPTY:
                        score = step + state[LINES + arrow]
                        if n < width or score > state[BEST + n - 1]:
                            j = n if n < width else width - 1
                            while j > 0 and state[BEST + j - 1] < score:
                                state[BEST + j] = state[BEST + j - 1]
                                moves[j] = moves[j - 1]
                                j -= 1
                            state[BEST + j] = score
                            moves[j] = queen * 10000 + to * 100 + arrow
                            if n < width:
                                n += 1
                        arrow = NEIGHBOUR[arrow, e]
                to = NEIGHBOUR[to, d]
        state[queen] = stone
    return n


@njit(cache=True)
def child_value(state: np.ndarray, move: int) -> int:
    """The value of ``move`` for the side making it: the child's evaluation, or a decided result."""
    play(state, move)
    result = game_result(state)
    if result == RUNNING:
        value = -evaluate(state)
    else:
        value = -result * (MATE_BOUND - 1)
    undo(state, move)
    return value


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """The moves the selective search looks at: every legal turn at the root (or the ``ROOT_WIDTH``
    best by a full evaluation), and the best few by :func:`quick_score` below it."""
    ply = state[PLY]
    if ply == 0:
        n = legal_moves(state, moves)
        width = state[ROOT_WIDTH]
        if width <= 0 or n <= width:
            return n
        for i in range(n):
            state[VALUES + i] = child_value(state, moves[i])
        for i in range(width):  # a partial selection sort: the best ``width`` to the front
            best = i
            for j in range(i + 1, n):
                if state[VALUES + j] > state[VALUES + best]:
                    best = j
            moves[i], moves[best] = moves[best], moves[i]
            state[VALUES + i], state[VALUES + best] = state[VALUES + best], state[VALUES + i]
        return width
    width = state[BEAM + min(ply, BEAM_PLIES) - 1]
    if width <= 0:
        return legal_moves(state, moves)
    return select_moves(state, moves, width)


@njit(cache=True)
def order_hint(state: np.ndarray, move: int) -> int:
    """At the root the full value of the child; deeper the cheap :func:`quick_score`."""
    if state[PLY] == 0:
        return child_value(state, move)
    return quick_score(state, move)


search = make_search(
    "amazons", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The shared search, compiled for the Amazons."""


# --- The master bot -----------------------------------------------------------------------------

DEFAULT_SECONDS = 1.0
"""Thinking time per move when the bot is given no budget."""
OVERSHOOT = 0.05
"""How far past its deadline a search may run: the root's evaluation of every move, and up to
1,024 nodes (tens of microseconds each here) between two looks at the clock."""
TABLE_BITS = 20


class AmazonsMaster(EngineBot):
    """The ``master`` level of the Amazons: selective search over a territory evaluation.

    Once the sides are walled off from each other and the turn counts prove
    the race won, it follows the filling walk without searching. The table
    and history survive from move to move within a game.
    """

    SEARCH, MAX_MOVES, MOVE_SPACE, TABLE_BITS = search, MAX_MOVES, MOVE_SPACE, TABLE_BITS

    def __init__(
        self, game_id: str = "amazons", level: str = "master", seed: int | None = None,
        root_width: int = DEFAULT_ROOT_WIDTH, beam: tuple[int, ...] = DEFAULT_BEAM,
    ) -> None:
        self.root_width = root_width
        self.beam = tuple(beam)
        super().__init__(game_id, level, seed)

    def _warm_up(self) -> None:
        warm_up()

    def position(self, state: AmazonsState) -> np.ndarray:
        """The engine array of ``state`` with this bot's search widths."""
        array = from_state(state)
        set_widths(array, self.root_width, self.beam)
        return array

    def think(self, state: AmazonsState, seconds: float, max_depth: int = 127) -> SearchResult:
        """Search ``state`` for ``seconds`` (for benchmarks and tests); the move is an engine code."""
        return self._searcher.think(self.position(state), time.perf_counter() + seconds, max_depth)

    def choose(self, state: AmazonsState, budget: TimeBudget | None = None) -> AmazonsMove:
        """The best move found before the deadline (``budget`` less a margin; 1 s without one)."""
        start = time.perf_counter()
        if state.result is not None:
            raise ValueError("the game is over: there is no move to choose")
        deadline = start + thinking_seconds(budget, DEFAULT_SECONDS, OVERSHOOT)
        array = self.position(state)
        move = int(endgame_move(array))
        if move >= 0:
            self._last = {"endgame": True, "seconds": time.perf_counter() - start}
        else:
            result = self._searcher.think(array, deadline)
            self._last = {"depth": result.depth, "score": result.score, "nodes": result.nodes,
                          "seconds": time.perf_counter() - start}
            move = result.move
        if move == NO_MOVE:  # cannot happen in a running game; never answer illegally
            return self.game.legal_moves(state)[0]
        return to_reference(move)


_warm = False


def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process."""
    global _warm
    if _warm:
        return
    from protocol.games.amazons import AMAZONS

    array = from_state(AMAZONS.initial_state())
    set_widths(array, 4, (2,))
    searcher = Searcher(search, max_moves=MAX_MOVES, move_space=MOVE_SPACE, table_bits=4)
    searcher.think(array, 0.0, max_depth=2)
    endgame_move(array)
    rules_result(array)
    _warm = True
