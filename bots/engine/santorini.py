"""Santorini engine: compiled rules, threat-aware evaluation and the ``master`` bot.

The position is one ``int64`` array (``STATE_SIZE`` long) that the search
mutates in place: the 25 building levels (0-3, 4 for a dome, square
``row * 5 + col`` as in the reference rules), the squares of the four workers
(seat 0's two, then seat 1's; -1 before they are placed), the seat to move,
and whether the last move climbed onto level 3 (and so won).

A move is one small int (it indexes the search's history table):

================================  ============================================
``w * 64 + step * 8 + build``      a turn: own worker ``w`` (0/1) steps in direction ``step``,
                                  then builds in direction ``build`` from its new square
``WIN_BASE + w * 8 + step``        a winning climb onto level 3, which has no build
``PLACE_BASE + a * 25 + b``        the setup move placing both workers on ``a < b``
================================  ============================================

Directions are numbered so that ``7 - d`` is the opposite of ``d``, which lets
:func:`undo` walk a worker back. Setup is searched like any other move (300
placements, ordered central squares first): two plies of setup are cheap, and
the evaluation sees the first turns that follow.

The search's ``game_result`` hook does more than the rules: besides a climb
just made and a side with no legal turn, it scores as decided a position where
the side to move can climb onto level 3 at once (a win), and one where the
opponent threatens such a climb that no move can stop (a loss: two threatened
squares, or one that no worker can reach to dome). These are exact, and cut
the tree two plies early. :func:`rules_result` is the plain rules, which the
tests compare with the reference.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from bots.base import TimeBudget
from protocol.games.santorini import Placement, SantoriniMove, SantoriniState, Turn

from .budget import thinking_seconds
from .master import EngineBot
from .search import LOSS, NO_MOVE, RUNNING, WIN, Searcher, SearchResult, make_search
from .squares import neighbour_table

SIZE = 5
SQUARES = SIZE * SIZE
DOME = 4
WORKERS = SQUARES
"""Index of the first worker square in the state array (seat 0's two, then seat 1's)."""
TO_MOVE = WORKERS + 4
CLIMBED = TO_MOVE + 1
"""1 once the last move was a climb onto level 3 (which won): a worker placed on level 3 in a
set-up position has not won, so the level alone cannot tell."""
STATE_SIZE = CLIMBED + 1

WIN_BASE = 128
"""First code of a winning climb (``WIN_BASE + worker * 8 + step``)."""
PLACE_BASE = WIN_BASE + 16
"""First code of a placement (``PLACE_BASE + a * 25 + b``, ``a < b``)."""
MOVE_SPACE = PLACE_BASE + SQUARES * SQUARES
"""Every move code is below this (the size of the search's history table)."""
MAX_MOVES = SQUARES * (SQUARES - 1) // 2
"""300 placements on an empty board; a turn never has more than 2 * 8 * 8 = 128 choices."""

NEIGHBOUR = neighbour_table(SIZE)
"""``NEIGHBOUR[square, d]``: the square next to ``square`` in direction ``d``, or -1 off the board."""
ADJACENT = np.zeros((SQUARES, SQUARES), np.bool_)
for _square in range(SQUARES):
    for _other in NEIGHBOUR[_square]:
        if _other >= 0:
            ADJACENT[_square, _other] = True
CENTRE = np.array(
    [0, 1, 2, 1, 0,
     1, 3, 4, 3, 1,
     2, 4, 6, 4, 2,
     1, 3, 4, 3, 1,
     0, 1, 2, 1, 0], np.int64,
)  # fmt: skip
"""How central each square is: a central worker reaches more squares and hinders both opponents."""

_rng = np.random.default_rng(20240521)
ZOBRIST_LEVEL = _rng.integers(0, np.iinfo(np.uint64).max, (SQUARES, 5), dtype=np.uint64, endpoint=True)
ZOBRIST_LEVEL[:, 0] = 0
ZOBRIST_WORKER = _rng.integers(0, np.iinfo(np.uint64).max, (2, SQUARES), dtype=np.uint64, endpoint=True)
ZOBRIST_SIDE = np.uint64(_rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True))
del _rng

# Evaluation weights, in points (a level climbed is worth tens of points).
HEIGHT_POINTS = np.array([0, 40, 110, 0, 0], np.int64)
"""A worker's own level: higher workers are one step nearer the win and see more climbs."""
STEP_UP_POINTS = np.array([6, 14, 0, 0, 0], np.int64)
"""Per free neighbour exactly one level above a worker on level 0 or 1 (somewhere to climb)."""
LEVEL_TWO_POINTS = 9
"""Per free level-2 neighbour of a worker on level 2: one build there makes a threat."""
MOBILITY_POINTS = 3
"""Per square a worker can step onto."""
TRAPPED_POINTS = 60
"""A worker that cannot move at all."""
CENTRE_POINTS = 3
"""Per point of :data:`CENTRE`."""
THREAT_POINTS = 35
"""The opponent threatens to climb onto level 3: the side to move must spend its turn on a dome."""
TEMPO_POINTS = 5
"""Being the one to move."""


# --- State and moves ----------------------------------------------------------------------------


def from_state(state: SantoriniState) -> np.ndarray:
    """The engine array of a reference position."""
    array = np.zeros(STATE_SIZE, np.int64)
    array[:SQUARES] = state.levels
    array[WORKERS : WORKERS + 4] = state.workers
    array[TO_MOVE] = state.to_move
    mover = state.workers[2 * (1 - state.to_move) : 4 - 2 * state.to_move]
    if state.result is not None and any(square >= 0 and state.levels[square] == 3 for square in mover):
        array[CLIMBED] = 1
    return array


def to_reference(array: np.ndarray, move: int) -> SantoriniMove:
    """The reference move for engine move ``move`` in the position ``array`` (before the move)."""
    move = int(move)
    if move >= PLACE_BASE:
        first, second = divmod(move - PLACE_BASE, SQUARES)
        return Placement(first, second)
    seat = int(array[TO_MOVE])
    if move >= WIN_BASE:
        worker, step = divmod(move - WIN_BASE, 8)
        square = int(array[WORKERS + 2 * seat + worker])
        return Turn(square, int(NEIGHBOUR[square, step]), None)
    worker, rest = divmod(move, 64)
    step, build = divmod(rest, 8)
    square = int(array[WORKERS + 2 * seat + worker])
    to = int(NEIGHBOUR[square, step])
    return Turn(square, to, int(NEIGHBOUR[to, build]))


def from_reference(array: np.ndarray, move: SantoriniMove) -> int:
    """The engine code of a reference move in the position ``array``; ``ValueError`` if it has none."""
    if isinstance(move, Placement):
        first, second = sorted((move.first, move.second))
        return PLACE_BASE + first * SQUARES + second
    seat = int(array[TO_MOVE])
    for worker in range(2):
        square = int(array[WORKERS + 2 * seat + worker])
        if square != move.worker:
            continue
        for step in range(8):
            if NEIGHBOUR[square, step] != move.to:
                continue
            if move.build is None:
                return WIN_BASE + worker * 8 + step
            for build in range(8):
                if NEIGHBOUR[move.to, build] == move.build:
                    return worker * 64 + step * 8 + build
    raise ValueError(f"{move} is not a move of a worker of the side to move")


# --- Rules --------------------------------------------------------------------------------------


@njit(cache=True)
def legal_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """Write every legal move (placements during setup) into ``moves``; return how many."""
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    w0, w1, w2, w3 = state[WORKERS], state[WORKERS + 1], state[WORKERS + 2], state[WORKERS + 3]
    n = 0
    if state[mine] < 0:
        for a in range(SQUARES):
            if state[a] == DOME or a == w0 or a == w1 or a == w2 or a == w3:
                continue
            for b in range(a + 1, SQUARES):
                if state[b] == DOME or b == w0 or b == w1 or b == w2 or b == w3:
                    continue
                moves[n] = PLACE_BASE + a * SQUARES + b
                n += 1
        return n
    for worker in range(2):
        frm = state[mine + worker]
        limit = state[frm] + 1
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to < 0:
                continue
            height = state[to]
            if height > limit or height == DOME or to == w0 or to == w1 or to == w2 or to == w3:
                continue
            if height == 3 and limit == 3:
                moves[n] = WIN_BASE + worker * 8 + step
                n += 1
                continue
            for build in range(8):
                square = NEIGHBOUR[to, build]
                if square < 0 or state[square] == DOME:
                    continue
                if square != frm and (square == w0 or square == w1 or square == w2 or square == w3):
                    continue
                moves[n] = worker * 64 + step * 8 + build
                n += 1
    return n


@njit(cache=True)
def play(state: np.ndarray, move: int) -> None:
    """Make ``move`` for the side to move."""
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    if move >= PLACE_BASE:
        state[mine] = (move - PLACE_BASE) // SQUARES
        state[mine + 1] = (move - PLACE_BASE) % SQUARES
    elif move >= WIN_BASE:
        index = mine + (move - WIN_BASE) // 8
        state[index] = NEIGHBOUR[state[index], (move - WIN_BASE) % 8]
        state[CLIMBED] = 1
    else:
        index = mine + move // 64
        to = NEIGHBOUR[state[index], (move // 8) % 8]
        state[index] = to
        state[NEIGHBOUR[to, move % 8]] += 1
    state[TO_MOVE] = 1 - seat


@njit(cache=True)
def undo(state: np.ndarray, move: int) -> None:
    """Take back ``move``, the last move made."""
    seat = 1 - state[TO_MOVE]
    state[TO_MOVE] = seat
    mine = WORKERS + 2 * seat
    if move >= PLACE_BASE:
        state[mine] = -1
        state[mine + 1] = -1
    elif move >= WIN_BASE:
        index = mine + (move - WIN_BASE) // 8
        state[index] = NEIGHBOUR[state[index], 7 - (move - WIN_BASE) % 8]
        state[CLIMBED] = 0
    else:
        index = mine + move // 64
        to = state[index]
        state[NEIGHBOUR[to, move % 8]] -= 1
        state[index] = NEIGHBOUR[to, 7 - (move // 8) % 8]


@njit(cache=True)
def key(state: np.ndarray) -> np.uint64:
    """Zobrist key of the levels, the workers of each seat (in either order) and the side to move."""
    k = np.uint64(0)
    for square in range(SQUARES):
        k ^= ZOBRIST_LEVEL[square, state[square]]
    for i in range(4):
        square = state[WORKERS + i]
        if square >= 0:
            k ^= ZOBRIST_WORKER[i // 2, square]
    if state[TO_MOVE]:
        k ^= ZOBRIST_SIDE
    return k


@njit(cache=True)
def occupied(state: np.ndarray, square: int) -> bool:
    """True when a worker stands on ``square``."""
    return (
        state[WORKERS] == square or state[WORKERS + 1] == square
        or state[WORKERS + 2] == square or state[WORKERS + 3] == square
    )


@njit(cache=True)
def can_step(state: np.ndarray, frm: int, to: int) -> bool:
    """True when a worker on ``frm`` may step onto the neighbouring square ``to``."""
    height = state[to]
    return height != DOME and height <= state[frm] + 1 and not occupied(state, to)


@njit(cache=True)
def rules_result(state: np.ndarray) -> int:
    """The rules alone: ``LOSS`` after the opponent's climb onto level 3 or with no legal turn."""
    if state[CLIMBED]:
        return LOSS
    seat = state[TO_MOVE]
    if state[WORKERS] < 0 or state[WORKERS + 2] < 0:
        return RUNNING
    mine = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[mine + worker]
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to >= 0 and can_step(state, frm, to):
                return RUNNING
    return LOSS


@njit(cache=True)
def climb_targets(state: np.ndarray, seat: int) -> tuple[int, int]:
    """Free level-3 squares next to a level-2 worker of ``seat``: how many (0, 1 or 2+), and one of them."""
    count, target = 0, -1
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        if state[frm] != 2:
            continue
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to >= 0 and state[to] == 3 and to != target and not occupied(state, to):
                if target >= 0:
                    return 2, target
                count, target = 1, to
    return count, target


@njit(cache=True)
def can_block(state: np.ndarray, seat: int, target: int) -> bool:
    """True when some turn of ``seat`` domes ``target`` (or stands on it without climbing there from 2)."""
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to < 0 or not can_step(state, frm, to):
                continue
            if to == target:
                if state[frm] == 3:
                    return True  # only in a set-up position: a step across from level 3 blocks
                continue
            if ADJACENT[to, target]:
                return True
    return False


@njit(cache=True)
def generate_moves(state: np.ndarray, moves: np.ndarray) -> int:
    """The moves worth searching: :func:`legal_moves` less those that lose at once.

    A climb onto level 3 is the only move needed when there is one. Otherwise,
    when the opponent threatens such a climb, only the moves that dome its
    target (or, in a set-up position, stand on it) are kept; and a build that
    raises a square to level 3 next to an opponent's worker on level 2 hands
    it the win. When every move loses, all of them are kept.
    """
    n = legal_moves(state, moves)
    if n == 0 or moves[0] >= PLACE_BASE:
        return n
    for i in range(n):
        if WIN_BASE <= moves[i] < PLACE_BASE:
            moves[0] = moves[i]
            return 1
    seat = state[TO_MOVE]
    mine = WORKERS + 2 * seat
    count, target = climb_targets(state, 1 - seat)
    other = WORKERS + 2 * (1 - seat)
    high0 = state[state[other]] == 2
    high1 = state[state[other + 1]] == 2
    kept = 0
    for i in range(n):
        move = moves[i]
        frm = state[mine + move // 64]
        to = NEIGHBOUR[frm, (move // 8) % 8]
        build = NEIGHBOUR[to, move % 8]
        if count > 0:
            keep = build == target or to == target
        else:
            keep = not (
                state[build] == 2
                and ((high0 and ADJACENT[state[other], build]) or (high1 and ADJACENT[state[other + 1], build]))
            )
        if keep:
            moves[kept] = move
            kept += 1
    if kept == 0:
        return legal_moves(state, moves)
    return kept


@njit(cache=True)
def game_result(state: np.ndarray) -> int:
    """The search's verdict: the rules, plus a climb at hand (``WIN``) or an unstoppable one (``LOSS``)."""
    result = rules_result(state)
    if result != RUNNING or state[WORKERS] < 0 or state[WORKERS + 2] < 0:
        return result
    seat = state[TO_MOVE]
    if climb_targets(state, seat)[0] > 0:
        return WIN
    count, target = climb_targets(state, 1 - seat)
    if count == 1 and not can_block(state, seat, target):
        return LOSS
    if count >= 2:
        # One turn domes one square. (Only in a set-up position can a worker on level 3 step
        # across onto one threatened square and dome another: leave that to the search.)
        mine = WORKERS + 2 * seat
        if state[state[mine]] != 3 and state[state[mine + 1]] != 3:
            return LOSS
    return RUNNING


# --- Evaluation and ordering --------------------------------------------------------------------


@njit(cache=True)
def side_value(state: np.ndarray, seat: int) -> int:
    """Points of ``seat``'s two workers: level, climbs within reach, mobility and centrality."""
    value = 0
    base = WORKERS + 2 * seat
    for worker in range(2):
        frm = state[base + worker]
        height = state[frm]
        value += HEIGHT_POINTS[height] + CENTRE_POINTS * CENTRE[frm]
        mobility = 0
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to < 0 or occupied(state, to):
                continue
            level = state[to]
            if level == DOME or level > height + 1:
                continue
            mobility += 1
            if level == height + 1:
                value += STEP_UP_POINTS[height]
            elif height == 2 and level == 2:
                value += LEVEL_TWO_POINTS
        value += MOBILITY_POINTS * mobility
        if mobility == 0:
            value -= TRAPPED_POINTS
    return value


@njit(cache=True)
def evaluate(state: np.ndarray) -> int:
    """Heuristic value for the side to move (``game_result`` has settled every climb at hand)."""
    seat = state[TO_MOVE]
    if state[WORKERS] < 0 or state[WORKERS + 2] < 0:  # setup: central squares are better
        value = 0
        for i in range(4):
            square = state[WORKERS + i]
            if square >= 0:
                value += CENTRE[square] if i // 2 == seat else -CENTRE[square]
        return CENTRE_POINTS * value
    value = side_value(state, seat) - side_value(state, 1 - seat) + TEMPO_POINTS
    if climb_targets(state, 1 - seat)[0] > 0:
        value -= THREAT_POINTS
    return value


@njit(cache=True)
def order_hint(state: np.ndarray, move: int) -> int:
    """Climbs first; domes on the opponent's climbs; no new level 3 next to an opponent on level 2."""
    if move >= PLACE_BASE:
        return CENTRE[(move - PLACE_BASE) // SQUARES] + CENTRE[(move - PLACE_BASE) % SQUARES]
    if move >= WIN_BASE:
        return 1000
    seat = state[TO_MOVE]
    frm = state[WORKERS + 2 * seat + move // 64]
    to = NEIGHBOUR[frm, (move // 8) % 8]
    build = NEIGHBOUR[to, move % 8]
    height, level = state[to], state[build]
    hint = 4 * height + 3 * (height - state[frm])
    other = WORKERS + 2 * (1 - seat)
    near_high_opponent = False
    for i in range(2):
        square = state[other + i]
        if state[square] >= 2 and ADJACENT[square, build]:
            near_high_opponent = True
    if level == 3 and near_high_opponent:
        hint += 30  # a dome where the opponent could climb
    elif level == 2:
        if near_high_opponent:
            hint -= 20  # would hand the opponent a climb onto level 3
        elif height == 2:
            hint += 8  # a level 3 next to our own worker on level 2: a threat
    elif level == 1 and height >= 1:
        hint += 2
    return hint


search = make_search(
    "santorini", generate_moves=generate_moves, play=play, undo=undo, key=key, evaluate=evaluate,
    game_result=game_result, order_hint=order_hint,
)
"""The shared search, compiled for Santorini."""


# --- The master bot -----------------------------------------------------------------------------

DEFAULT_SECONDS = 1.0
"""Thinking time per move when the bot is given no budget."""
TABLE_BITS = 21
"""Transposition table of 2**21 slots (about 40 MB)."""


class SantoriniMaster(EngineBot):
    """The ``master`` level of Santorini: the shared compiled search with a threat-aware evaluation.

    The transposition table and history survive from move to move within a
    game. Compiled code is loaded (or, the very first time, compiled) when the
    bot is built, so a move's time goes to thinking.
    """

    SEARCH, MAX_MOVES, MOVE_SPACE, TABLE_BITS = search, MAX_MOVES, MOVE_SPACE, TABLE_BITS

    def __init__(self, game_id: str = "santorini", level: str = "master", seed: int | None = None) -> None:
        super().__init__(game_id, level, seed)

    def _warm_up(self) -> None:
        warm_up()

    def think(self, state: SantoriniState, seconds: float, max_depth: int = 127) -> SearchResult:
        """Search ``state`` for ``seconds`` (for benchmarks and tests); the move is an engine code."""
        return self._searcher.think(from_state(state), time.perf_counter() + seconds, max_depth)

    def choose(self, state: SantoriniState, budget: TimeBudget | None = None) -> SantoriniMove:
        """The best move found before the deadline (``budget`` less a margin; 1 s without one)."""
        start = time.perf_counter()
        if state.result is not None:
            raise ValueError("the game is over: there is no move to choose")
        deadline = start + thinking_seconds(budget, DEFAULT_SECONDS)
        legal = self.game.legal_moves(state)
        if len(legal) == 1:
            self._last = {"forced": True}
            return legal[0]
        array = from_state(state)
        result = self._searcher.think(array, deadline)
        self._last = {"depth": result.depth, "score": result.score, "nodes": result.nodes,
                      "seconds": time.perf_counter() - start}
        if result.move == NO_MOVE:
            return legal[0]  # cannot happen in a running game; never answer illegally
        move = to_reference(array, result.move)
        return move if move in legal else legal[0]


_warm = False


def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process."""
    global _warm
    if _warm:
        return
    searcher = Searcher(search, max_moves=MAX_MOVES, move_space=MOVE_SPACE, table_bits=4)
    array = np.zeros(STATE_SIZE, np.int64)
    array[WORKERS : WORKERS + 4] = -1
    searcher.think(array, 0.0, max_depth=1)
    array[WORKERS : WORKERS + 4] = (6, 8, 16, 18)
    searcher.think(array, 0.0, max_depth=2)
    rules_result(array)
    legal_moves(array, np.zeros(MAX_MOVES, np.int32))
    _warm = True
