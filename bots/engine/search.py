"""The compiled game-tree search every ``master`` engine shares.

Iterative deepening over a negamax alpha-beta search in its *principal
variation* form (PVS), with a transposition table, move ordering and a clock.
It is written once, here, in plain Python that numba compiles; each game plugs
in its own compiled functions over its own state (a small numpy array the game
mutates in place): ``generate_moves``, ``play``, ``undo``, ``key``, ``evaluate``,
``game_result`` and ``order_hint``, whose stand-ins below say what each must do,
and optionally ``extend`` (forcing moves whose replies cost no depth),
``order_hints`` (every move's ``order_hint`` at once, when that is quicker) and
``legal`` (whether a move code is legal here, so that the table's move and the
killers are tried before the node's moves are generated), and ``may_pass`` with
``pass_turn`` (null-move pruning: where passing is allowed, a side that would still
be ahead after handing the opponent a free move is not searched further), and
``reduce_late`` (late move reductions: late moves searched a ply shallower first) and
``prune_late`` (late move pruning: near the horizon, the latest moves not searched at all).
Moves are small non-negative ints below the game's ``move_space`` (they index
the history table). ``make_search`` turns those functions into one
compiled ``search`` for the game, and :class:`Searcher` holds its memory.

Why PVS and not MTD(f): PVS needs one pass per depth and copes with any
evaluation, whereas MTD(f) makes many null-window passes whose count grows with
the evaluation's granularity and that only pay off with a table large enough to
keep every pass's bounds. PVS also stops cleanly on the clock: each root move
it finishes is a real result at that depth, while a half-done MTD(f) pass
proves nothing. (The Connect Four solver, which needs exact scores in a narrow
range, does use null-window passes over the score: see ``connect4.py``.)

Scores: a heuristic value stays below ``MATE_BOUND``; a side that wins after
``p`` plies from the root scores ``MATE - p``, so a quicker win scores higher
and a later loss scores higher than an earlier one.

Memory: everything is preallocated numpy. The transposition table is one
array of 16-byte ``TABLE_ENTRY`` records (key, value, depth, kind of bound,
best move) so that a probe costs one cache miss; :class:`Workspace` holds the
move lists and ordering scores of each ply, two killer moves per ply, the
history table and the node counter. The compiled search never allocates, so
it is compiled without numba's reference counting (``_nrt=False``), which
saves a quarter to a third of the time per node.

Time: numba cannot read a clock in compiled code, so :func:`clock` steps back
into the interpreter (``numba.objmode``) for ``time.perf_counter()``. That
costs about a microsecond, so the search looks at it once every
``CHECK_EVERY + 1`` nodes; past the deadline it unwinds at once and answers
with the best move of the deepest iteration it finished, or a root move of the
unfinished one that it proved better. A node limit (``Searcher(node_limit=...)``)
stops it the same way, at the same look, once it has searched that many nodes:
the same position then always gets the same answer, whatever the machine's load.

The module is long because it cannot be cut in two: :func:`make_search` rebuilds the search's templates
for each game over this module's own namespace (``globals()``), so the table, the move ordering, the
clock, the hooks' stand-ins and the constants they call must all live here.
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable
from pathlib import Path
from types import FunctionType
from typing import Any, NamedTuple

import numba
import numpy as np
from numba import njit

INFINITY = 32000
MATE = 31000
"""Score of winning at once; a win ``p`` plies from the root scores ``MATE - p``."""
MATE_BOUND = MATE - 1000
"""Scores beyond +-MATE_BOUND are forced results found by search, never heuristic guesses."""
MAX_PLY = 128
"""Deepest ply the search ever reaches (its scratch arrays have this many rows)."""

RUNNING, WIN, DRAW, LOSS = 2, 1, 0, -1
"""What ``game_result`` says: the game goes on, or how it ended for the side to move."""
WIN_NEXT, LOSS_AFTER_REPLY = 3, -3
"""What ``game_result`` may say besides: the side to move wins with its next move, or loses to the opponent's move
after its own whatever it plays. Decided, a ply or two before the end (Santorini's climb at hand, its unstoppable
threat); the scores count those plies, so that "win in n" is the real distance."""

EXACT, LOWER, UPPER = 0, 1, 2
"""Kinds of table entry: an exact value, or a lower / upper bound on it."""
NO_MOVE = -1
NO_VALUE = -INFINITY - 1
"""``probe``'s answer when the table cannot decide the position."""

CHECK_EVERY = 1023
"""Nodes between two looks at the clock, less one (a power of two less one)."""
NODES, STOPPED, LIMIT = 0, 1, 2
"""Indexes into ``Workspace.counters``: nodes searched, 1 once stopped, and the node limit."""
NO_LIMIT = 1 << 62
"""The node limit of a search that only the clock stops."""

ROOT_PLY = np.int64(0)
"""The root's ply, a numpy int on purpose: numba compiles a separate version of a function for
each literal int argument, and a cached recursive function compiled for a literal crashes when
loaded again (numba issue #6061)."""

MOVED, PASSED = np.int64(0), np.int64(1)
"""``negamax``'s ``after_pass``: whether the last move was a null move. numpy ints, like ``ROOT_PLY``, and
not ``True``/``False``, which numba would type as literals (with the crash that note describes)."""

HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
SHIFT_32 = np.uint64(32)


TABLE_ENTRY = np.dtype(
    [("key", np.uint64), ("value", np.int16), ("depth", np.int8), ("flag", np.int8), ("move", np.int32)]
)
"""One transposition table slot, 16 bytes: the full 64-bit key (so a hit is never another
position's), the value (mate scores stored relative to the slot's position), the depth
searched (-1: empty), the kind of value (``EXACT``/``LOWER``/``UPPER``) and the best or
refuting move found there. The fields sit together so that a probe costs one cache miss,
not five as with one array per field."""


class Workspace(NamedTuple):
    """Scratch memory: moves and ordering scores per ply, killers, history and counters."""

    moves: np.ndarray
    scores: np.ndarray
    killers: np.ndarray
    history: np.ndarray
    counters: np.ndarray


def new_table(bits: int = 20) -> np.ndarray:
    """An empty transposition table: a preallocated array of ``2**bits`` ``TABLE_ENTRY`` slots.

    Slots are found by a hash of the position key. A new entry replaces another
    position's; for the same position it replaces a shallower or equal one.
    """
    table = np.zeros(1 << bits, TABLE_ENTRY)
    clear_table(table)
    return table


def clear_table(table: np.ndarray) -> None:
    """Mark every slot empty (this also touches every page now rather than mid-search)."""
    table["key"] = 0
    table["depth"] = -1
    table["move"] = NO_MOVE


def new_workspace(max_moves: int, move_space: int) -> Workspace:
    """Scratch memory for a game with at most ``max_moves`` moves per position."""
    return Workspace(
        moves=np.zeros((MAX_PLY, max_moves), np.int32),
        scores=np.zeros((MAX_PLY, max_moves), np.int64),
        killers=np.full((MAX_PLY, 2), NO_MOVE, np.int32),
        history=np.zeros(move_space, np.int64),
        counters=np.array([0, 0, NO_LIMIT], np.int64),
    )


# --- Compiled helpers that know nothing of any game ---------------------------------------------


@njit(cache=True)
def clock() -> float:
    """``time.perf_counter()`` from compiled code (about a microsecond: call it sparingly)."""
    with numba.objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def out_of_time(work: Workspace, deadline: float) -> bool:
    """Count a node; now and then compare the count with the node limit, and the clock with ``deadline``.

    True once either is past.
    """
    return count_node(work.counters, CHECK_EVERY, deadline)


@njit(cache=True, _nrt=False, inline="always")  # at every node: a call would cost a third of the solver's speed
def count_node(counters: np.ndarray, check_every: int, deadline: float) -> bool:
    """Count a node in ``counters`` (``NODES``, ``STOPPED``, ``LIMIT``); every ``check_every + 1`` nodes
    compare the count with the limit and the clock with ``deadline``. True once either is past (the search
    and both exact solvers stop this way)."""
    counters[NODES] += 1
    if counters[NODES] & check_every == 0 and (counters[NODES] >= counters[LIMIT] or clock() > deadline):
        counters[STOPPED] = 1
    return counters[STOPPED] != 0


@njit(cache=True)
def slot_of(table: np.ndarray, key: np.uint64) -> int:
    """The slot for ``key``: Fibonacci hashing, so similar keys spread over the table."""
    return int(((key * HASH_MULTIPLIER) >> SHIFT_32) & np.uint64(len(table) - 1))


@njit(cache=True)
def probe(
    table: np.ndarray, key: np.uint64, depth: int, alpha: int, beta: int, ply: int
) -> tuple[int, int]:
    """``(value, move)`` stored for ``key``: the value if it settles this node, else ``NO_VALUE``."""
    entry = table[slot_of(table, key)]
    if entry.key != key or entry.depth < 0:
        return NO_VALUE, NO_MOVE
    move = int(entry.move)
    if entry.depth < depth:
        return NO_VALUE, move
    value = int(entry.value)
    if value > MATE_BOUND:  # stored as "mate in n from here": make it "from the root" again
        value -= ply
    elif value < -MATE_BOUND:
        value += ply
    flag = entry.flag
    if flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha):
        return value, move
    return NO_VALUE, move


@njit(cache=True)
def store(
    table: np.ndarray, key: np.uint64, depth: int, value: int, alpha: int, beta: int,
    move: int, ply: int,
) -> None:
    """Record a searched node; ``alpha``/``beta`` are the window it was searched with."""
    entry = table[slot_of(table, key)]
    if entry.key == key and entry.depth > depth:
        return
    if value <= alpha:
        flag = UPPER
    elif value >= beta:
        flag = LOWER
    else:
        flag = EXACT
    if value > MATE_BOUND:
        value += ply
    elif value < -MATE_BOUND:
        value -= ply
    entry.key = key
    entry.value = value
    entry.depth = depth
    entry.flag = flag
    entry.move = move


@njit(cache=True)
def pick_next(work: Workspace, ply: int, i: int, n: int) -> int:
    """Swap the best-scored of moves ``i..n-1`` of this ply into place ``i``; return it.

    A selection sort done lazily: after a cutoff the rest are never sorted.
    """
    moves, scores = work.moves[ply], work.scores[ply]
    best = i
    for j in range(i + 1, n):
        if scores[j] > scores[best]:
            best = j
    moves[i], moves[best] = moves[best], moves[i]
    scores[i], scores[best] = scores[best], scores[i]
    return moves[i]


@njit(cache=True)
def remember_cutoff(work: Workspace, ply: int, move: int, depth: int) -> None:
    """A move refuted this node: make it a killer for the ply and credit its history."""
    killers = work.killers[ply]
    if killers[0] != move:
        killers[1] = killers[0]
        killers[0] = move
    work.history[move] += depth * depth


# --- What a game supplies: stand-ins here, replaced by the game's compiled functions -------------


def generate_moves(state: Any, moves: np.ndarray) -> int:
    """Write the moves worth searching in ``state`` into ``moves``; return how many (0: none legal)."""
    raise NotImplementedError


def play(state: Any, move: int) -> None:
    """Make ``move`` in ``state``, in place."""
    raise NotImplementedError


def undo(state: Any, move: int) -> None:
    """Take back ``move``, the last move made in ``state``."""
    raise NotImplementedError


def key(state: Any) -> np.uint64:
    """A 64-bit key of the position, for the transposition table."""
    raise NotImplementedError


def evaluate(state: Any) -> int:
    """Heuristic value of ``state`` for the side to move, within +-MATE_BOUND."""
    raise NotImplementedError


def game_result(state: Any) -> int:
    """``RUNNING``, or how the game ended for the side to move: ``WIN``, ``DRAW`` or ``LOSS`` (or ``WIN_NEXT``,
    ``LOSS_AFTER_REPLY``: decided, ending a ply or two later)."""
    raise NotImplementedError


def order_hint(state: Any, move: int) -> int:
    """Game knowledge for move ordering: moves with higher hints are tried first (keep it small)."""
    raise NotImplementedError


@njit(cache=True, inline="always")  # nothing to call at every node of the games without the hook
def never(state: Any) -> bool:
    """The default of the yes-or-no hooks ``extend``, ``may_pass``, ``reduce_late`` and ``prune_late``: no
    move is forcing, no side passes, no move is reduced or pruned."""
    return False


def extend(state: Any) -> bool:
    """Optional hook, asked after a move: True when the move was forcing (the side now to move has few
    replies, all answers to a threat), so that the reply does not use up a ply of the depth."""
    raise NotImplementedError


@njit(cache=True, inline="always")
def never_legal(state: Any, move: int) -> bool:
    """The default ``legal`` hook: nothing is searched before the node's moves are generated."""
    return False


def legal(state: Any, move: int) -> bool:
    """Optional hook: True when ``move`` (any code below the game's move space) is legal in ``state``.

    With it, the search tries the table's move and the ply's killers before generating the node's
    moves, and a cutoff by one of them spares the generating and ordering (most cutoffs come from
    the first move tried). A legal move that ``generate_moves`` would have pruned may be searched
    this way: it must only prune moves that do not change the node's value."""
    raise NotImplementedError


def order_hints(state: Any, moves: np.ndarray, n: int, hints: np.ndarray) -> None:
    """Optional hook: write ``order_hint(state, moves[i])`` into ``hints[i]`` for the first ``n`` moves, all at once.

    Where a game's hints share work across a node's moves (what stands where, worked out once),
    this is quicker than asking ``order_hint`` move by move, which the default does; the values must
    be the same."""
    raise NotImplementedError


EXTEND_BELOW_PLY = 32
"""Forcing moves are extended only this near the root (a bound on how long a line can grow)."""


@njit(cache=True, inline="always")
def no_pass(state: Any) -> None:
    """The default ``pass_turn`` hook: never called, since ``never`` allows no pass."""


def may_pass(state: Any) -> bool:
    """Optional hook: True where the search may try a *null move* (the side to move passes) to prune.

    A pass is not a legal move: it asks "if I did nothing, would the opponent still fail to
    bring my score below beta?"; at a node where the answer is yes, a real move is assumed to do
    at least as well (no zugzwang), and the node is cut off after a shallow search. Allow it only
    where having to move cannot hurt and no threat is pending (the opponent's free move would
    otherwise only waste the probe)."""
    raise NotImplementedError


def pass_turn(state: Any) -> None:
    """Optional hook, with ``may_pass``: hand the move to the other side, nothing else changed (and
    ``key`` changing with it). Called twice, it must restore ``state``."""
    raise NotImplementedError


def reduce_late(state: Any) -> bool:
    """Optional hook, asked at a node: True when its late moves may be searched shallower first.

    At a node searched with a null window, a move tried after the first ``REDUCE_AFTER`` (the
    ordering's best guesses, table move and killers among them) is searched ``REDUCTION`` ply less
    deep, unless it is forcing (``extend``); only if it then beats alpha is it searched again to the
    full depth. Moves late in a good ordering rarely cut off, so this buys depth for the early ones."""
    raise NotImplementedError


def prune_late(state: Any) -> bool:
    """Optional hook, asked at a node: True when its latest moves may be left out near the horizon.

    At a node searched with a null window with fewer than ``REDUCE_FROM_DEPTH`` plies left, once
    ``PRUNE_AFTER[depth]`` moves are searched, the rest are not, unless forcing (``extend``); the
    node then fails low to alpha rather than to the best of the moves it tried. Never while every
    move tried loses by force, nor in a search for a forced result (beta a mate score), so that no
    win or loss is proven from a node that left moves out."""
    raise NotImplementedError


REDUCE_AFTER = 3
"""Late move reductions start with the node's fourth move."""
REDUCE_FROM_DEPTH = 3
"""... and only with at least this many plies left."""
REDUCTION = 1
"""How many plies shallower a late move is searched first."""
PRUNE_AFTER = np.array([0, 10, 20], dtype=np.int64)
"""With the ``prune_late`` hook, how many moves a null-window node searches with 1 or 2 plies left."""

NULL_REDUCTION = 2
"""How many plies shallower than the node's moves the null move is searched (the usual R = 2)."""
NULL_MIN_DEPTH = NULL_REDUCTION + 2
"""Null moves are tried only with at least this many plies left: nearer the horizon they save little."""


# --- The search, compiled once per game by make_search (it calls the game's functions) ----------

TABLE_MOVE_BONUS = 1 << 40
KILLER_BONUS = 1 << 30
HINT_WEIGHT = 1 << 20


def hint_each_move(state: Any, moves: np.ndarray, n: int, hints: np.ndarray) -> None:
    """The default ``order_hints`` hook: ``order_hint`` move by move."""
    for i in range(n):
        hints[i] = order_hint(state, moves[i])


def score_moves(state: Any, ply: int, n: int, table_move: int, work: Workspace) -> None:
    """Ordering scores for this ply's moves: table move, killers, game hint, then history."""
    moves, scores = work.moves[ply], work.scores[ply]
    killers = work.killers[ply]
    order_hints(state, moves, n, scores)
    for i in range(n):
        move = moves[i]
        score = scores[i] * HINT_WEIGHT + work.history[move]
        if move == table_move:
            score += TABLE_MOVE_BONUS
        elif move == killers[0] or move == killers[1]:
            score += KILLER_BONUS
        scores[i] = score


def negamax(
    state: Any, depth: int, alpha: int, beta: int, ply: int,
    table: np.ndarray, work: Workspace, deadline: float, after_pass: int,
) -> int:
    """Value of ``state`` for the side to move, looking ``depth`` plies ahead (fail-soft PVS).

    Exact when strictly inside ``(alpha, beta)``, else a bound on that side.
    Once time is up it returns 0, which the caller ignores. ``after_pass`` is
    ``PASSED`` when the last move was a null move (two never follow each other), else ``MOVED``.
    """
    if out_of_time(work, deadline):
        return 0
    result = game_result(state)
    if result != RUNNING:
        if result == WIN_NEXT or result == LOSS_AFTER_REPLY:
            return MATE - ply - 1 if result == WIN_NEXT else -(MATE - ply - 2)
        return result * (MATE - ply)
    if depth <= 0 or ply >= MAX_PLY - 1:
        return evaluate(state)

    # Nothing here can beat winning at the next move, nor be worse than losing now.
    alpha = max(alpha, -MATE + ply)
    beta = min(beta, MATE - ply - 1)
    if alpha >= beta:
        return alpha

    position = key(state)
    value, table_move = probe(table, position, depth, alpha, beta, ply)
    if value != NO_VALUE:
        return value

    # Null-move pruning, only in null-window searches (never on the principal variation) and never
    # against a forced result; the static value must already reach beta.
    if (after_pass == MOVED and depth >= NULL_MIN_DEPTH and beta - alpha == 1 and abs(beta) < MATE_BOUND
            and may_pass(state) and evaluate(state) >= beta):
        pass_turn(state)
        value = -negamax(state, depth - 1 - NULL_REDUCTION, -beta, 1 - beta, ply + 1, table, work, deadline, PASSED)
        pass_turn(state)
        if work.counters[STOPPED]:
            return 0
        if value >= beta:
            return beta if value > MATE_BOUND else value

    original_alpha = alpha
    best, best_move = -INFINITY, NO_MOVE
    # With a ``legal`` hook, the table's move and the two killers are tried first (stages 0-2), and the
    # node's moves are generated and ordered only when none of them made a cutoff (stage 3 on).
    tried0, tried1, tried2 = NO_MOVE, NO_MOVE, NO_MOVE
    stage, n, i, searched = 0, -1, 0, 0
    pruned = False  # (by ``prune_late``)
    while True:
        if stage < 3:
            move = table_move if stage == 0 else work.killers[ply][stage - 1]
            stage += 1
            if move == NO_MOVE or move == tried0 or move == tried1 or not legal(state, move):
                continue
            if tried0 == NO_MOVE:
                tried0 = move
            elif tried1 == NO_MOVE:
                tried1 = move
            else:
                tried2 = move
        else:
            if n < 0:
                n = generate_moves(state, work.moves[ply])
                if n == 0:
                    return LOSS * (MATE - ply)  # no legal turn loses (Amazons, Santorini)
                score_moves(state, ply, n, table_move, work)
            if i == n:
                break
            move = pick_next(work, ply, i, n)
            i += 1
            if tried0 != NO_MOVE and (move == tried0 or move == tried1 or move == tried2):
                continue
        # A late move at a null-window node, unless forcing, is first searched REDUCTION plies shallower
        # (with the ``reduce_late`` hook); only one that then beats alpha is searched to the full depth.
        # Nearer the horizon the latest are not searched at all (with the ``prune_late`` hook).
        score = NO_VALUE  # (below alpha) until a reduced search gives the move a score
        if searched >= REDUCE_AFTER and beta - alpha == 1:
            reduce = depth >= REDUCE_FROM_DEPTH and reduce_late(state)
            prune = (depth < REDUCE_FROM_DEPTH and searched >= PRUNE_AFTER[depth] and best > -MATE_BOUND
                     and abs(beta) < MATE_BOUND and prune_late(state))
            if reduce or prune:
                play(state, move)
                forcing = extend(state)
                if reduce and not forcing:
                    score = -negamax(state, depth - 1 - REDUCTION, -beta, -alpha, ply + 1, table, work, deadline, MOVED)
                undo(state, move)
                if prune and not forcing:
                    pruned = True
                    continue
        if score == NO_VALUE or score > alpha:
            score = move_value(state, move, best == -INFINITY, depth, alpha, beta, ply, table, work, deadline)
        searched += 1
        if work.counters[STOPPED]:
            return 0
        if score > best:
            best, best_move = score, move
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    remember_cutoff(work, ply, move, depth)
                    break
    if pruned and best < alpha:
        best = alpha  # an upper bound no lower than alpha: the moves left out might have scored more
    store(table, position, depth, best, original_alpha, beta, best_move, ply)
    return best


def move_value(
    state: Any, move: int, first: bool, depth: int, alpha: int, beta: int, ply: int,
    table: np.ndarray, work: Workspace, deadline: float,
) -> int:
    """The value of playing ``move`` at this node (``depth`` plies left, window ``(alpha, beta)``), by PVS.

    The ``first`` move, the best by the ordering, is searched with the full
    window. Every other move is first searched with a null window, which cheaply
    proves it no better than ``alpha``; only a move that turns out better is
    searched again with the full window, to find out by how much. Used by
    :func:`negamax` at every node and by :func:`search` at the root.
    """
    play(state, move)
    next_depth = depth - 1
    if ply < EXTEND_BELOW_PLY and extend(state):
        next_depth = depth  # a forcing move: the forced reply is searched for free
    if first:
        score = -negamax(state, next_depth, -beta, -alpha, ply + 1, table, work, deadline, MOVED)
    else:
        score = -negamax(state, next_depth, -alpha - 1, -alpha, ply + 1, table, work, deadline, MOVED)
        if alpha < score < beta:
            score = -negamax(state, next_depth, -beta, -alpha, ply + 1, table, work, deadline, MOVED)
    undo(state, move)
    return score


def search(
    state: Any, max_depth: int, deadline: float, table: np.ndarray, work: Workspace
) -> tuple[int, int, int]:
    """Iterative deepening from ``state``: ``(best move, its score, deepest finished depth)``.

    Each iteration searches the previous iteration's best move first. When the
    clock runs out mid-iteration, a root move that iteration finished with a
    better score than the first one is kept; otherwise the previous answer
    stands. The move is ``NO_MOVE`` only when there is no legal move.
    """
    work.counters[NODES] = 0
    work.counters[STOPPED] = 0
    work.killers[:] = NO_MOVE
    for move in range(len(work.history)):
        work.history[move] >>= 1  # keep some history from the last move, but let it fade
    root = work.moves[ROOT_PLY]
    n = generate_moves(state, root)
    if n == 0:
        return NO_MOVE, LOSS * MATE, 0
    score_moves(state, ROOT_PLY, n, table_move_at(table, key(state)), work)
    for i in range(n):
        pick_next(work, ROOT_PLY, i, n)  # sort the root moves once, best hint first

    best_move, best_score, finished = root[0], -INFINITY, 0
    for depth in range(1, max_depth + 1):
        bring_to_front(root, n, best_move)
        alpha, beta = -INFINITY, INFINITY
        iteration_move = NO_MOVE
        for i in range(n):
            move = root[i]
            score = move_value(state, move, i == 0, depth, alpha, beta, ROOT_PLY, table, work, deadline)
            if work.counters[STOPPED]:
                break
            if score > alpha:
                alpha, iteration_move = score, move
        if iteration_move != NO_MOVE:
            best_move, best_score = iteration_move, alpha
        if work.counters[STOPPED]:
            break
        finished = depth
        store(table, key(state), depth, best_score, -INFINITY, INFINITY, best_move, ROOT_PLY)
        if abs(best_score) > MATE_BOUND:
            break  # a forced result: looking deeper changes nothing
    return best_move, best_score, finished


def search_window(
    state: Any, depth: int, alpha: int, beta: int, deadline: float, table: np.ndarray, work: Workspace
) -> int:
    """One search of ``state`` to ``depth`` plies in the window ``(alpha, beta)``, no iterative deepening.

    Fail-soft like :func:`negamax`: exact strictly inside the window, else a
    bound on that side. A null window around a score answers "better or
    worse than that?" far quicker than finding the exact value, e.g. "win,
    draw or loss?" once ``depth`` reaches the end of the game. Check
    ``work.counters[STOPPED]`` afterwards: a stopped search's value means nothing.
    """
    work.counters[NODES] = 0
    work.counters[STOPPED] = 0
    work.killers[:] = NO_MOVE
    return negamax(state, depth, alpha, beta, ROOT_PLY, table, work, deadline, MOVED)


@njit(cache=True)
def table_move_at(table: np.ndarray, key: np.uint64) -> int:
    """The move stored for ``key``, whatever its depth, or ``NO_MOVE``."""
    entry = table[slot_of(table, key)]
    if entry.key == key and entry.depth >= 0:
        return int(entry.move)
    return NO_MOVE


@njit(cache=True)
def bring_to_front(moves: np.ndarray, n: int, move: int) -> None:
    """Move ``move`` to the front of ``moves[:n]``, keeping the others in order."""
    for i in range(n):
        if moves[i] == move:
            for j in range(i, 0, -1):
                moves[j] = moves[j - 1]
            moves[0] = move
            return


# --- Specialising the search for a game ----------------------------------------------------------

GAME_TEMPLATES = (hint_each_move, score_moves, move_value, negamax, search, search_window)
"""The functions above that call a game's functions: compiled anew for each game."""
TEMPLATE_HOOKS = {"order_hints": "hint_each_move"}
"""Optional hooks whose stand-in is a template (it calls the game's other functions)."""
INLINED = frozenset({"move_value", "hint_each_move"})
"""Templates compiled into their callers (numba's ``inline="always"``), never as functions of their own.
``move_value`` and ``negamax`` call each other, and numba crashes (a segmentation fault) loading cached
functions that recurse through one another; inlined, ``negamax`` only calls itself, as before, and the
search pays no extra call per node."""

HOOKS = ("generate_moves", "play", "undo", "key", "evaluate", "game_result", "order_hint")
OPTIONAL_HOOKS = {"extend": never, "legal": never_legal, "may_pass": never, "pass_turn": no_pass, "reduce_late": never,
                  "prune_late": never}
"""Hooks a game may leave out, and what stands in for them."""


def make_search(game: str, **hooks: Callable[..., Any]) -> Callable[..., tuple[int, int, int]]:
    """The compiled :func:`search` for one game, given its compiled functions (see the top).

    Each template in ``GAME_TEMPLATES`` is rebuilt over a namespace where the
    hook names mean the game's functions, and compiled with ``cache=True``.
    Why not a closure: numba keys a closure's cache entry on its pickled cells,
    and a pickled jitted function carries a fresh random id in each process, so a
    closure over the game's functions would recompile in every process (and pile
    up cache files). The rebuilt functions instead get their own cache name,
    ``<template>__<game>_<digest>``, where the digest covers the source files of
    the game's functions, because numba would not notice a change there. The
    search is compiled without numba's reference counting, which applies to the
    game's functions too: they must not allocate (``np.empty`` fails to compile)
    and must return scalars; keep scratch space in the state array instead.
    """
    missing = [name for name in HOOKS if name not in hooks]
    optional = [*OPTIONAL_HOOKS, *TEMPLATE_HOOKS]
    unknown = [name for name in hooks if name not in HOOKS and name not in optional]
    if missing or unknown:
        raise TypeError(f"make_search needs exactly {', '.join(HOOKS)} (and may take {', '.join(optional)}); "
                        f"missing {missing}, unknown {unknown}")
    hooks = {**OPTIONAL_HOOKS, **hooks}
    namespace = dict(globals())
    namespace.update(hooks)
    tag = f"{game}_{_source_digest(hooks.values())}"
    for template in GAME_TEMPLATES:
        function = FunctionType(template.__code__, namespace, template.__name__, template.__defaults__)
        function.__qualname__ = f"{template.__name__}__{tag}"
        function.__doc__ = template.__doc__
        inline = "always" if template.__name__ in INLINED else "never"
        namespace[template.__name__] = njit(cache=True, _nrt=False, inline=inline)(function)
        for hook, stand_in in TEMPLATE_HOOKS.items():
            if hook not in hooks and template.__name__ == stand_in:
                namespace[hook] = namespace[stand_in]
    compiled = namespace["search"]
    compiled.window = namespace["search_window"]  # see Searcher.window
    return compiled


def _source_digest(functions: Any) -> str:
    files = sorted({inspect.getsourcefile(getattr(f, "py_func", f)) or "" for f in functions})
    digest = hashlib.sha256()
    for name in files:
        digest.update(Path(name).read_bytes() if name else b"")
    return digest.hexdigest()[:12]


def describe_score(score: int) -> str:
    """A search score in words: ``"win in 3"``, ``"loss in 2"`` (plies), or a heuristic value."""
    if score > MATE_BOUND:
        return f"win in {MATE - score}"
    if score < -MATE_BOUND:
        return f"loss in {MATE + score}"
    return f"{score:+d}"


class SearchResult(NamedTuple):
    """What one :meth:`Searcher.think` found."""

    move: int
    score: int
    depth: int
    nodes: int
    seconds: float


class Searcher:
    """A game's compiled search together with its table and scratch memory.

    The table survives from move to move (positions recur in a game);
    :meth:`clear` empties it for a new game. With ``node_limit`` set, every search
    also stops after that many nodes (rounded up to the next look at the
    clock), which makes its answers reproducible.
    """

    def __init__(
        self, search_function: Callable[..., tuple[int, int, int]], max_moves: int, move_space: int,
        table_bits: int = 20, node_limit: int | None = None,
    ) -> None:
        self.search_function = search_function
        self.table = new_table(table_bits)
        self.work = new_workspace(max_moves, move_space)
        self.node_limit = node_limit

    def clear(self) -> None:
        """Forget every table entry and ordering statistic."""
        clear_table(self.table)
        self.work.history[:] = 0

    def window(self, state: np.ndarray, depth: int, alpha: int, beta: int, deadline: float) -> int | None:
        """The value of ``state`` at ``depth`` plies in the window ``(alpha, beta)`` (see :func:`search_window`).

        ``None`` when the clock ran out first.
        """
        depth = max(1, min(depth, MAX_PLY - 1))
        self.work.counters[LIMIT] = NO_LIMIT if self.node_limit is None else self.node_limit
        value = self.search_function.window(state, depth, alpha, beta, deadline, self.table, self.work)
        return None if self.work.counters[STOPPED] else int(value)

    def think(self, state: np.ndarray, deadline: float, max_depth: int = MAX_PLY - 1) -> SearchResult:
        """Search ``state`` (mutated and restored) until ``deadline`` (``time.perf_counter()``).

        Stops early at ``max_depth``, on a forced result, or at the node limit. ``move`` is ``NO_MOVE``
        only when the position has no legal move.
        """
        start = time.perf_counter()
        max_depth = max(1, min(max_depth, MAX_PLY - 1))
        self.work.counters[LIMIT] = NO_LIMIT if self.node_limit is None else self.node_limit
        move, score, depth = self.search_function(state, max_depth, deadline, self.table, self.work)
        return SearchResult(
            int(move), int(score), int(depth), int(self.work.counters[NODES]), time.perf_counter() - start
        )
