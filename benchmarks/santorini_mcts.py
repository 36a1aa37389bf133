"""Santorini's ``master`` against a compiled Monte Carlo tree search, at equal time per move.

    .venv/bin/python benchmarks/santorini_mcts.py [--games 60] [--time-per-move 0.2] [--jobs 2]

OpenSpiel has no Santorini and Plyhall ships no trained network, so the
opponent is the strongest AlphaZero-like player that can be built here
without one: UCT (Monte Carlo tree search with the UCB1 rule) compiled with
numba over the engine's own move generator, with the two enhancements that
matter most in Santorini, taken from the MCTS literature:

* *decisive moves*: a node whose side to move can climb onto level 3 keeps
  that climb as its only child, and a playout takes any winning climb it has;
* *anti-decisive moves* in playouts: a playout move after which the opponent
  could climb onto level 3 at once is avoided while another exists.

Each move it runs simulations until its time is up (the full ``T``; the master
keeps a margin of its own and thinks ``T - min(0.15, T/4)``), from a fresh tree,
and plays the most visited child. Its simulations a second are printed. With
``--equal-thinking`` it thinks as long as the master does (``T`` less the
master's margin, as a tree search sending its moves over a network would
have to keep one too): the same thinking time for both, not the same clock.

Games start from the 30 placements of ``../shared/data/santorini/opening_positions.txt``
(each played twice, seats swapped), so the set-up is not part of the test.
Prints master's wins, draws (none in Santorini), losses and score with a 95%
Wilson interval, and its results moving first and second.

The PUCT opponent's value and priors are the master's own evaluation and
ordering hint, so a change to them changes the opponent too. To measure such a
change against an opponent that stays put, ``--master-from OTHER_CHECKOUT``
plays the master of another checkout (its ``bots`` package, loaded under
another name) against this checkout's opponent.

``--master-time-per-move S`` gives the master a longer (or shorter) clock than
its opponent: time odds, to measure how far from equal strength it is.
"""

from __future__ import annotations

import concurrent.futures
import functools
import importlib
import importlib.util
import math
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
from common import ROOT, script_parser
from numba import njit

from bots.base import TimeBudget
from bots.engine.budget import thinking_seconds
from bots.engine.santorini.evaluation import evaluate, game_result, generate_moves, order_hints
from bots.engine.santorini.master import SantoriniMaster
from bots.engine.santorini.position import (
    NEIGHBOUR,
    TO_MOVE,
    WIN_BASE,
    WORKERS,
    from_state,
    legal_moves,
    play,
    rules_result,
    to_reference,
)
from bots.engine.search import LOSS, WIN, clock
from protocol.games import get_game
from protocol.statistics import wilson_interval
from server.tournament.openings import parse_openings

OPENINGS = ROOT.parent / "shared" / "data" / "santorini" / "opening_positions.txt"
CAPACITY = 1 << 21
"""Tree nodes (about 50 MB of arrays); a search stops growing the tree when they run out."""
EXPLORATION = 1.0
"""UCB1's exploration constant (results are 0 or 1)."""
C_PUCT = 1.5
"""PUCT's exploration constant (AlphaZero's form: prior times sqrt(parent visits) / (1 + visits))."""
PRIOR_TEMPERATURE = 8.0
"""Ordering-hint points per unit of log prior."""
VALUE_SCALE = 120.0
"""Evaluation points per unit of log-odds of winning."""
MAX_MOVES = 300


@njit(cache=True)
def _threatens(state: np.ndarray) -> bool:
    """True when the side to move can climb onto level 3 now."""
    seat = state[TO_MOVE]
    for worker in range(2):
        frm = state[WORKERS + 2 * seat + worker]
        if frm < 0 or state[frm] != 2:
            continue
        for step in range(8):
            to = NEIGHBOUR[frm, step]
            if to >= 0 and state[to] == 3:
                free = True
                for i in range(4):
                    if state[WORKERS + i] == to:
                        free = False
                if free:
                    return True
    return False


@njit(cache=True)
def _playout(state: np.ndarray, moves: np.ndarray) -> int:
    """Play random moves (a winning climb when there is one, and no move that hands the opponent one while
    another exists) to the end; the seat that wins."""
    for _ in range(400):
        if rules_result(state) == LOSS:
            return 1 - state[TO_MOVE]
        n = legal_moves(state, moves)
        chosen = -1
        for i in range(n):
            if WIN_BASE <= moves[i] < WIN_BASE + 16:
                chosen = moves[i]
                break
        if chosen < 0:
            start = np.random.randint(n)
            for k in range(n):
                move = moves[(start + k) % n]
                trial = state.copy()
                play(trial, move)
                if not _threatens(trial):
                    chosen = move
                    break
            if chosen < 0:
                chosen = moves[start]
        play(state, chosen)
    return -1


@njit(cache=True)
def _leaf_value(state: np.ndarray, moves: np.ndarray, priors: np.ndarray, hints: np.ndarray) -> tuple[float, int]:
    """PUCT's leaf: ``(value for the side to move, moves)``; the moves (the search's, pruned exactly) into
    ``moves`` with softmax priors of the search's ordering hints (``hints``: scratch) into ``priors`` (0 moves:
    decided)."""
    result = game_result(state)
    if result == WIN:
        return 1.0, 0
    if result == LOSS:
        return 0.0, 0
    n = generate_moves(state, moves)
    order_hints(state, moves, n, hints)
    top = -1e9
    for i in range(n):
        priors[i] = hints[i] / PRIOR_TEMPERATURE
        top = max(top, priors[i])
    total = 0.0
    for i in range(n):
        priors[i] = np.exp(priors[i] - top)
        total += priors[i]
    for i in range(n):
        priors[i] /= total
    return 1.0 / (1.0 + np.exp(-evaluate(state) / VALUE_SCALE)), n


@njit(cache=True)
def _add_children(
    node: int, n: int, used: int, moves: np.ndarray, priors: np.ndarray,
    first: np.ndarray, count: np.ndarray, move_of: np.ndarray, prior: np.ndarray,
) -> int:
    """Give ``node`` the ``n`` children ``moves`` (with ``priors``) from slot ``used`` on; the next free slot."""
    first[node], count[node] = used, n
    move_of[used : used + n] = moves[:n]
    prior[used : used + n] = priors[:n]
    return used + n


@njit(cache=True)
def mcts_move(root: np.ndarray, deadline: float, seed: int, guided: bool) -> tuple[int, int]:
    """``(move, simulations)``: the most visited move after simulations until ``deadline``: UCT with
    playouts, or (``guided``) PUCT with the master's evaluation and move ordering in place of a network."""
    np.random.seed(seed)
    first = np.full(CAPACITY, -1, np.int32)
    count = np.zeros(CAPACITY, np.int32)
    move_of = np.zeros(CAPACITY, np.int32)
    visits = np.zeros(CAPACITY, np.float64)
    wins = np.zeros(CAPACITY, np.float64)  # for the seat that moved into the node
    prior = np.zeros(CAPACITY, np.float64)
    priors = np.zeros(MAX_MOVES, np.float64)
    moves = np.zeros(MAX_MOVES, np.int32)
    hints = np.zeros(MAX_MOVES, np.int64)
    scratch = np.zeros(MAX_MOVES, np.int32)
    path = np.zeros(512, np.int32)
    simulations = 0
    # The root always gets every legal move (a winning climb alone), whatever a verdict says of it.
    n = legal_moves(root, moves)
    for i in range(n):
        if WIN_BASE <= moves[i] < WIN_BASE + 16:
            return moves[i], 0
    priors[:n] = 1.0 / n
    used = _add_children(0, n, 1, moves, priors, first, count, move_of, prior)
    while True:
        if simulations & 31 == 0 and clock() > deadline and simulations > 0:
            break
        simulations += 1
        state = root.copy()
        node = 0
        depth = 0
        path[0] = 0
        # Selection
        while first[node] >= 0:
            best, best_value = -1, -1.0
            log_n = np.log(visits[node] + 1.0)
            root_n = np.sqrt(visits[node] + 1.0)
            for c in range(first[node], first[node] + count[node]):
                if guided:
                    q = wins[c] / visits[c] if visits[c] > 0 else 0.5
                    value = q + C_PUCT * prior[c] * root_n / (1.0 + visits[c])
                elif visits[c] == 0:
                    value = 1e9 + np.random.random()
                else:
                    value = wins[c] / visits[c] + EXPLORATION * np.sqrt(log_n / visits[c])
                if value > best_value:
                    best, best_value = c, value
            node = best
            play(state, move_of[node])
            depth += 1
            path[depth] = node
        # Expansion
        winner = -1
        leaf = -1.0  # PUCT: the leaf's value for its side to move
        if guided:
            leaf, n = _leaf_value(state, moves, priors, hints)
            if n > 0 and used + n <= CAPACITY:
                used = _add_children(node, n, used, moves, priors, first, count, move_of, prior)
        elif rules_result(state) == LOSS:
            winner = 1 - state[TO_MOVE]
        else:
            n = legal_moves(state, moves)
            decisive = -1
            for i in range(n):
                if WIN_BASE <= moves[i] < WIN_BASE + 16:
                    decisive = moves[i]
            if decisive >= 0:
                moves[0] = decisive
                n = 1
            if used + n <= CAPACITY:
                used = _add_children(node, n, used, moves, priors, first, count, move_of, prior)  # (UCT: no priors)
                node = first[node] + np.random.randint(n)
                play(state, move_of[node])
                depth += 1
                path[depth] = node
            winner = _playout(state, scratch)
        # Backpropagation: a node's wins count for the seat that moved into it.
        mover = root[TO_MOVE]
        for d in range(1, depth + 1):
            c = path[d]
            visits[c] += 1.0
            if guided:
                wins[c] += leaf if mover == state[TO_MOVE] else 1.0 - leaf
            elif winner == mover:
                wins[c] += 1.0
            elif winner < 0:
                wins[c] += 0.5
            mover = 1 - mover
        visits[0] += 1.0
    best, most = -1, -1.0
    for c in range(first[0], first[0] + count[0]):
        if visits[c] > most:
            best, most = c, visits[c]
    return move_of[best], simulations


CANDIDATE = "candidate_bots"
"""The name another checkout's ``bots`` package is loaded under (see ``--master-from``)."""
CANDIDATE_CACHE = Path(tempfile.gettempdir()) / "plyhall-candidate-numba-cache"
"""Where numba caches the other checkout's compiled functions (by their source's full path)."""


@functools.cache
def master_class(checkout: str | None) -> Any:
    """``SantoriniMaster`` of this checkout (``None``) or of the checkout at ``checkout``, whose ``bots`` package
    is loaded as :data:`CANDIDATE` beside this one's (its own relative imports stay within it)."""
    if checkout is None:
        return SantoriniMaster
    package = Path(checkout) / "bots"
    spec = importlib.util.spec_from_file_location(CANDIDATE, package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    if spec is None or spec.loader is None:
        raise ImportError(f"no bots package in {checkout}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[CANDIDATE] = module
    # numba would cache the candidate's compiled functions beside its sources, under this other package
    # name, and that checkout would then fail to load its own cache: keep them in a folder of their own.
    cache_dir = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(CANDIDATE_CACHE)
    try:
        spec.loader.exec_module(module)
        return importlib.import_module(f"{CANDIDATE}.engine.santorini.master").SantoriniMaster
    finally:
        numba.config.CACHE_DIR = cache_dir


def mcts_seconds(seconds: float, equal_thinking: bool, master: Any = SantoriniMaster) -> float:
    """How long the tree search thinks a move when the clock gives ``seconds`` a move: all of it, or with
    ``equal_thinking`` as long as ``master`` (``seconds`` less its margin: what ``EngineBot.choose`` gives
    its search)."""
    if not equal_thinking:
        return seconds
    return thinking_seconds(TimeBudget(per_move=seconds), master.DEFAULT_SECONDS, master.OVERSHOOT) - master.OVERHEAD


def play_game(index: int, opening: tuple[str, ...], seconds: float, seed: int, guided: bool,
              master_from: str | None = None, equal_thinking: bool = False,
              master_seconds: float | None = None) -> tuple[int, int, int, int]:
    """One game from ``opening``, master (this checkout's, or ``master_from``'s) in seat ``index % 2``:
    ``(master's seat, the winner (-1: none), MCTS's simulations in all, MCTS's moves)``. The master's clock
    gives it ``master_seconds`` a move when set (time odds), else ``seconds`` like its opponent."""
    game = get_game("santorini")
    state = game.start(*opening)
    master_seat = index % 2
    bot = master_class(master_from)(seed=seed)
    bot.new_game()
    budget = TimeBudget(per_move=seconds if master_seconds is None else master_seconds)
    thinks = mcts_seconds(seconds, equal_thinking, type(bot))
    sims = moves = 0
    rng = random.Random(seed)
    while game.outcome(state) is None:
        if game.to_move(state) == master_seat:
            move = bot.choose(state, budget)
        else:
            array = from_state(state)
            code, count = mcts_move(array, time.perf_counter() + thinks, rng.randrange(2**31), guided)
            move = to_reference(array, code)
            sims += count
            moves += 1
        state = game.apply(state, move)
    outcome = game.outcome(state)
    return master_seat, -1 if outcome.winner is None else outcome.winner, sims, moves


def main(argv: list[str] | None = None) -> None:
    """Play the match and print the score."""
    parser = script_parser(__doc__)
    parser.add_argument("--games", type=int, default=60, help="games (an even number: each opening twice)")
    parser.add_argument("--time-per-move", type=float, default=0.2, help="seconds a move, for both sides")
    parser.add_argument("--jobs", type=int, default=1, help="games played at once (one core each)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--opponent", choices=("puct", "uct"), default="puct",
                        help="puct: guided by the master's evaluation (default); uct: random playouts")
    parser.add_argument("--master-from", metavar="CHECKOUT", type=Path,
                        help="play the master of another checkout against this checkout's opponent")
    parser.add_argument("--equal-thinking", action="store_true",
                        help="the tree search thinks as long as the master (the move's time less the master's "
                             "margin) rather than the whole move's time")
    parser.add_argument("--master-time-per-move", type=float, metavar="SECONDS",
                        help="time odds: the master's seconds a move (default: --time-per-move, as its opponent)")
    args = parser.parse_args(argv)
    guided = args.opponent == "puct"
    if args.games < 2 or args.games % 2 or not 0 < args.time_per_move < math.inf or args.jobs < 1:
        parser.error("--games must be even and at least 2, --time-per-move a number of seconds above 0, "
                     "--jobs at least 1")
    if args.master_time_per_move is not None and not 0 < args.master_time_per_move < math.inf:
        parser.error("--master-time-per-move must be a number of seconds above 0")
    if not OPENINGS.is_file():
        parser.error(f"{OPENINGS} not found (the shared data folder sits beside the checkout)")
    master_from = None
    if args.master_from is not None:
        if not (args.master_from / "bots" / "engine" / "santorini" / "master.py").is_file():
            parser.error(f"--master-from: {args.master_from} is not a Plyhall checkout (no bots/engine/santorini)")
        master_from = str(args.master_from.resolve())
        print(f"master from {master_from}, opponent from {ROOT}", flush=True)
        master_class(master_from)(seed=0).new_game()  # compile it here first, as below
    openings = [o.moves for o in parse_openings(OPENINGS.read_text(), "santorini", source=str(OPENINGS))]
    # Load compiled code in this process first (the workers load it from numba's cache).
    mcts_move(from_state(get_game("santorini").start(*openings[0])), 0.0, 0, guided)

    results = []
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(play_game, i, openings[(i // 2) % len(openings)], args.time_per_move, args.seed + i,
                               guided, master_from, args.equal_thinking, args.master_time_per_move)
                   for i in range(args.games)]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            results.append(future.result())
            if done % 10 == 0:
                print(f"  {done}/{args.games} games, {time.perf_counter() - started:.0f} s", flush=True)
    won = sum(1 for seat, winner, _, _ in results if winner == seat)
    lost = sum(1 for seat, winner, _, _ in results if winner not in (seat, -1))
    drawn = len(results) - won - lost
    score = (won + 0.5 * drawn) / len(results)
    low, high = wilson_interval(score, len(results))
    first = [r for r in results if r[0] == 0]
    second = [r for r in results if r[0] == 1]
    sims = sum(r[2] for r in results) / max(1, sum(r[3] for r in results))
    thinks = mcts_seconds(args.time_per_move, args.equal_thinking)
    print(f"\nSantorini: master against {args.opponent.upper()} "
          f"({sims / thinks:,.0f} simulations a second, {sims:,.0f} a move), "
          + (f"{args.time_per_move} s a move each; " if args.master_time_per_move is None else
             f"master {args.master_time_per_move} s a move, {args.opponent.upper()} {args.time_per_move} s; ")
          + f"{args.opponent.upper()} thinks {thinks:.3g} s a move"
          + (", the master's thinking time at that clock" if args.equal_thinking else ", the whole move"))
    print(f"won {won}  drawn {drawn}  lost {lost}  score {score:.3f}  95% interval {low:.3f} to {high:.3f}")
    print(f"moving first: {sum(r[1] == 0 for r in first)}-{len(first) - sum(r[1] == 0 for r in first)}; "
          f"moving second: {sum(r[1] == 1 for r in second)}-{len(second) - sum(r[1] == 1 for r in second)} "
          f"(master's wins-losses)")


if __name__ == "__main__":
    main()
