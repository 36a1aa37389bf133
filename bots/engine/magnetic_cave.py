"""Magnetic Cave engine: bitboards, threat-based evaluation, and the ``master`` bot.

Bitboards: one ``uint64`` per side, bit ``row * 8 + col`` (the reference
square index, row 0 = rank 1). The position is a ``uint64`` array ``[mine,
theirs, bricks, played_for]``, ``mine`` being the bricks of the side to move,
so a move places a brick and swaps the two words; ``played_for`` says which
side the evaluation plays for (see ``from_state``). A square is open when it is empty and
in the first or last column or beside a brick in its row; shifting the
occupied squares one column each way finds them all at once (so in each row
only the outermost empty squares are open).

Lines of five are found by shifts: in each of four directions a square is
"after ``k`` of our bricks" when shifting our bricks ``k`` steps lands on it;
ANDing those masks finds fives and the *threat squares* (empty squares that
complete a five: an open four has two, a broken four one).

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
  broken threes) count ``LINE_POINTS``, as does a lone brick a little; the
  side the evaluation plays for (the root's side to move: ``master``) counts
  its own lines 1.5 times (``OWN_LINES``), so it builds more than it blocks;
* a win by a chain of fours (``wins_by_fours``, a VCF search over bitboards):
  bricks that each leave one open winning square, so that every reply is a
  forced block, until two open winning squares or a block that opens one of
  ours. It proves wins (it never claims a false one) a few plies beyond the
  horizon for ``WINS_BY_FOURS``; about 3% of the positions of random games
  have one. The squares that make a four fall out of the line counts, which
  count both sides in one pass, so the chain costs the evaluation little.

The endgame evaluation takes over from ``LATE_FROM`` bricks, wholly after
``LATE_RAMP`` more: it counts threat squares (``LATE_THREAT``), squares where a
brick would make one (``LATE_MAKER``), the move (``LATE_TEMPO``), and who the
filling of the board will force (``LATE_ZUGZWANG``, ``zugzwang``). The filling
model: each row's empty squares are runs that fill from both ends; a brick
beside an opposing threat square loses, one beside one's own forces the block
and keeps the move. So once the squares safe for both run out, the side with
more threat squares wins; one more wins only with the right parity. Its
weights are a least-squares fit of four features to the exact values (win,
draw, loss) of 437 positions at 38-49 bricks from games of ``master`` against
``minimax-4``; ``benchmarks/cave_endgames.py`` measures both evaluations
against fresh solved positions.

Drawn endgames: once the search has proved the game a draw (it reaches the
full board), the time left goes to an exact look at every drawing move: the
one that leaves the opponent the most replies that lose, and lose slowly
(beyond ``SHALLOW`` plies), is played. A fallible opponent may miss the only holding
replies; a perfect one draws all the same.

Measured against ``minimax-4`` at 0.2 s a move (``benchmarks/strength.py``,
100 games, seed 1): 60-35-5 (score 0.775) with the chain of fours and the
drawing traps, 62-36-2 (0.800) without them in the same session; the two are
within the noise. Master rarely loses but draws about a third of its games,
as the second player more often, and 0.4 s a move did not help (30
second-player games: 0.733, as at 0.2 s): the draws are not a matter of
depth. Tried and dropped: an ``order_hint`` favouring bricks that make or
stop fours (6% fewer nodes to depth 9, 18% fewer nodes a second); playing
out forced blocks at the horizon (30 second-player games: 0.617 with, 0.717
without); a contempt for draws; a bonus for open squares beside threat
squares; a count of the squares left outside the threat squares' reach,
whose parity predicted solved endgames worse than the evaluation's sign; a
penalty when the opponent would win by a chain of fours were it to move
(56-38-6, no better). A later run with ``--jobs 2``: 58-37-5 (0.765).

Where the results come from (this version): wins as the first player mostly
come at brick 63, the first player's last: the second player runs out of
safe bricks. ``zugzwang`` is that rule, and it is why one threat square is
worth a win to the first player but not to the second. Even ``minimax-2``
drew 14 of 40 games (``master`` scored 0.80 against it), so the draws are
not the opponent's depth either: they are boards striped brick by brick,
each side answering beside the other's brick, with no threat squares left.
Building more than blocking (``OWN_LINES``) is what moved the score, and
more so once the endgame evaluation was held back until brick 28
(``LATE_FROM``) so that the building lasts longer:

* without ``OWN_LINES``, endgame evaluation from brick 20: 0.740-0.775 in four
  runs of 100 games;
* ``OWN_LINES``, from brick 20: 0.82, 0.81, 0.8125, 0.800 and 0.777 in 100,
  100, 200, 100 and 200 games (seeds 1, 2, 3, 1, 4; 0.801 over the 700);
* ``OWN_LINES``, from brick 28: 0.86, 0.8675 and 0.838 (100 games seed 2; 200
  games seed 4: 148-51-1; 200 games seed 1: 140-55-5, first player 87-13-0,
  second 53-42-5; 0.854 over the 500); from brick 36: 0.855; never: 0.84 with 5
  losses (seed 2).

1.75 times as many own points scored 0.745 and 0.815, 1.5 times with the
threat squares too 0.81 (from brick 20). Without ``OWN_LINES`` the endgame
evaluation did not move the score (0.775 and 0.740), and whether it predicts solved positions better
depends on the games they come from (``benchmarks/cave_endgames.py``,
concordance endgame against middle game: 0.907 against 0.827 from games of
the version before ``OWN_LINES``; 0.941 against 0.933 and 0.950 against
0.956 from games of this one, seeds 1 and 2). Also tried and dropped:
the endgame evaluation from brick 4 on (0.63); the zugzwang term in the
middle game (0.76); one more ply after a forced move (0.765); a steeper
point for three in a line, 40 (0.755).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from bots.base import TimeBudget
from protocol.games.magnetic_cave import Brick, CaveState

from .bits import list_squares, lowest_index, mix, popcount
from .budget import thinking_seconds
from .master import DEEP, DRAWN, EngineBot
from .search import DRAW, LOSS, NO_MOVE, RUNNING, Searcher, describe_score, make_search

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
LINE_POINTS = (0, 1, 6, 24)
"""Points of a line of five free of opposing bricks, by our bricks in it (0-3)."""
OWN_LINES = 6
"""The side the evaluation plays for (``state[3]``) counts its own ``LINE_POINTS`` ``OWN_LINES``
quarters, 1.5 times, and the opponent's once: it builds more than it blocks."""
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


# --- Bitboards -----------------------------------------------------------------------------------


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
        mine_only = starts & ~(b0 | b1 | b2) & ~a2
        theirs_only = starts & ~(a0 | a1 | a2) & ~b2
        total += LINE_POINTS[1] * np.int64(popcount(mine_only & a0 & ~a1))
        their_total += LINE_POINTS[1] * np.int64(popcount(theirs_only & b0 & ~b1))
        total += LINE_POINTS[2] * np.int64(popcount(mine_only & ~a0 & a1))
        their_total += LINE_POINTS[2] * np.int64(popcount(theirs_only & ~b0 & b1))
        threes = mine_only & a0 & a1
        their_threes = theirs_only & b0 & b1
        total += LINE_POINTS[3] * np.int64(popcount(threes))
        their_total += LINE_POINTS[3] * np.int64(popcount(their_threes))
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


# --- Conversions ---------------------------------------------------------------------------------


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


# --- Search hooks --------------------------------------------------------------------------------


@njit(cache=True)
def legal_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """Every open square, in index order (all the reference rules allow); 0 once the game is over."""
    if game_result(state) != RUNNING:
        return 0
    return list_squares(open_squares(state[0] | state[1]), moves)


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
    """No game hint: the table move, killers and history order better than any cheap rule.

    Measured to depth 10 on 12 positions: a hint counting the threat squares a
    brick makes saved 1% of the nodes and took 2.3 times as long; one favouring
    central squares cost 2% more nodes.
    """
    return 0


search = make_search(
    "magnetic_cave", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The shared search, compiled for Magnetic Cave."""


# --- The master bot -------------------------------------------------------------------------------

DEFAULT_SECONDS = 3.0
"""Thinking time per move without a budget: the original assignment's 3-second rule."""
OVERHEAD = 0.01
"""Seconds kept back from the move's deadline for converting positions and moves."""


class MagneticCaveMaster(EngineBot):
    """The ``master`` level: the shared search with threat pruning and a threat-based evaluation.

    Iterative deepening runs until the deadline, a forced result, or the end of
    the game. The table survives from move to move within a game.
    """

    SEARCH, MAX_MOVES, MOVE_SPACE = search, MAX_MOVES, MOVE_SPACE

    def __init__(self, game_id: str = "magnetic-cave", level: str = "master", seed: int | None = None,
                 table_bits: int | None = None) -> None:
        super().__init__(game_id, level, seed, table_bits)

    def _warm_up(self) -> None:
        warm_up()

    def choose(self, state: CaveState, budget: TimeBudget | None = None) -> Brick:
        """The best brick found before the deadline (``budget`` less a margin, see ``budget.py``; 3 s without one)."""
        start = time.perf_counter()
        if state.result is not None:
            raise ValueError("the game is over: there is no move to choose")
        deadline = start + max(thinking_seconds(budget, DEFAULT_SECONDS) - OVERHEAD, 0.0)
        position = from_state(state)
        plies = plies_left(position)
        result = self._searcher.think(position, deadline, max_depth=plies)
        move, traps = result.move, 0
        if result.score == 0 and result.depth >= plies:
            move, traps = self._drawing_trap(position, result.move, deadline)
        self._last = {
            "depth": result.depth, "score": result.score, "value": describe_score(result.score),
            "nodes": result.nodes, "seconds": time.perf_counter() - start, "traps": traps,
        }
        legal = self.game.legal_moves(state)
        if move != NO_MOVE and to_brick(move) in legal:
            return to_brick(move)
        return legal[0]  # cannot happen in a running game; never answer illegally

    def _drawing_trap(self, position: np.ndarray, move: int, deadline: float) -> tuple[int, int]:
        """Among the moves that hold the proven draw, the one with the most replies that lose.

        A fallible opponent may miss the only replies that hold: this picks,
        by null-window searches (``EngineBot._solved_kind``), the drawing move that leaves it the most replies that
        lose slowly (see ``SHALLOW``), else ``move`` (the search's choice).
        When time runs out it answers with the best found so far. Returns the
        move and how many such replies it leaves.
        """
        moves = np.zeros(MAX_MOVES, np.int32)
        replies = np.zeros(MAX_MOVES, np.int32)
        best, best_traps = move, 0
        for candidate in moves[: generate_moves(position, moves)]:
            play(position, candidate)
            traps = 0
            running = game_result(position) == RUNNING
            if running and self._solved_kind(position, plies_left(position), deadline) is DRAWN:
                for reply in replies[: legal_moves(position, replies)]:
                    play(position, reply)
                    if game_result(position) == RUNNING:
                        traps += self._solved_kind(position, plies_left(position), deadline) is DEEP
                    undo(position, reply)
            undo(position, candidate)
            if traps > best_traps:  # a drawing move, with at least this many losing replies
                best, best_traps = int(candidate), traps
            if time.perf_counter() > deadline:
                break
        return best, best_traps


_warm = False


def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process.

    The search runs past 1,024 nodes so that it looks at the clock: its first
    call from compiled code costs about 0.1 s, which must not fall on a move.
    """
    global _warm
    if _warm:
        return
    position = np.zeros(4, np.uint64)
    legal_moves(position, np.zeros(MAX_MOVES, np.int32))
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=10)
    searcher.think(position, 0.0, max_depth=4)
    searcher.window(position, 3, -1, 1, 0.0)  # the drawing traps' search
    _warm = True
