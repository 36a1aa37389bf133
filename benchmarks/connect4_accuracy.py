"""How often Connect Four's ``master`` plays a proven-optimal move, by stones on the board, at given times a move.

    .venv/bin/python benchmarks/connect4_accuracy.py [--per-ply 4] [--plies 0-20] [--times 0.1,1]

Positions come from the public test sets in ``../shared/data/connect4`` (each
line a position and its exact score), a sample of ``--per-ply`` positions for
every number of stones in ``--plies``; 0 stones is the empty board (score 1:
the first player wins with its 21st stone). For each position and each time, a fresh
``master`` chooses a move within that time; the move is *optimal* when its
exact value equals the position's score (the fastest win, the slowest loss, or
a draw kept), which one null-window solve of the position after it proves (the
solver over the field's 12-stone book), and *keeps the outcome* when it does not
turn a win into a draw or loss, or a draw into a loss. A check that takes longer
than ``--verify-seconds`` is counted as unverified, not as right or wrong.

Prints, per number of stones: the positions, and at each time the optimal moves
and the outcome-changing ones.

``--nodes`` counts instead of timing: for each sampled position, the solver nodes master's solve needs for its
exact best move (the openings below 12 stones, then :func:`~bots.engine.connect4.master.solve_in_steps` to the
end), from an empty table as a fresh bot has, and (``in a game``) from the table master keeps from its move two
stones before in the same game. Node counts do not depend on the machine's load: a position fits a time control
when its count is well inside the nodes searched in that time (about 0.3 million in master's 0.075 s of a 0.1 s
move on a quiet machine). ``--budget`` sets the count to compare with (default 300,000).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np
from common import ROOT, script_parser

from bots import TimeBudget, make_bot
from bots.engine.connect4.book import TABLE_STONES, after, opening_move, wins_at_once
from bots.engine.connect4.fieldbook import field_book
from bots.engine.connect4.master import solve_in_steps, warm_up
from bots.engine.connect4.position import CELLS, from_moves
from bots.engine.connect4.solver import NODES, STOPPED, SolverTables, new_solver_tables, solver_negamax
from protocol.games import GAMES

DATA = ROOT.parent / "shared" / "data" / "connect4"
SETS = ("Test_L1_R1", "Test_L1_R2", "Test_L1_R3", "Test_L2_R1", "Test_L2_R2", "Test_L3_R1")
GAME = GAMES["connect4"]
OPTIMAL, KEPT, CHANGED, UNVERIFIED = "optimal", "kept", "changed", "unverified"


def read_positions(folder: Path) -> dict[int, list[tuple[str, int]]]:
    """``(moves, score)`` of every position in the test sets, by number of stones, and the empty board."""
    found: dict[int, list[tuple[str, int]]] = {0: [("", 1)]}
    for name in SETS:
        path = folder / name
        if not path.exists():
            continue
        for line in path.read_text().split("\n"):
            fields = line.split()
            if len(fields) == 2:
                found.setdefault(len(fields[0]), []).append((fields[0], int(fields[1])))
    return found


def sample(positions: dict[int, list[tuple[str, int]]], plies: range, per_ply: int,
           seed: int) -> dict[int, list[tuple[str, int]]]:
    """``per_ply`` positions of each number of stones in ``plies``, drawn with ``seed`` (the same draw in the timed
    and the node-counting mode, and in ``connect4_speed.py``)."""
    rng = random.Random(seed)
    return {ply: rng.sample(positions.get(ply, []), min(per_ply, len(positions.get(ply, [])))) for ply in plies}


def judge(moves: str, score: int, column: int, tables: object, seconds: float) -> str:
    """Whether dropping in ``column`` (0-based) after ``moves`` is optimal, keeps the outcome, or changes it."""
    position, mask, stones = from_moves(moves)
    if wins_at_once(position, mask, column):
        return OPTIMAL if score == (CELLS + 1 - stones) // 2 else KEPT  # a win at once is the fastest
    child, child_mask = (np.uint64(value) for value in after(position, mask, column))
    deadline = time.perf_counter() + seconds

    def at_most(bound: int) -> bool | None:
        """Is the position after the move worth at most ``bound`` for the opponent (None: no time)?"""
        tables.counters[STOPPED] = 0
        value = solver_negamax(child, child_mask, stones + 1, bound, bound + 1, tables, deadline)
        return None if tables.counters[STOPPED] else value <= bound

    optimal = at_most(-score)
    if optimal is None:
        return UNVERIFIED
    if optimal:
        return OPTIMAL
    outcome = (score > 0) - (score < 0)  # the move keeps a win if the opponent then loses, a draw if it can't win
    kept = at_most(-1 if outcome > 0 else 0) if outcome >= 0 else True
    return UNVERIFIED if kept is None else KEPT if kept else CHANGED


def solve_nodes(moves: str, score: int | None, tables: SolverTables) -> int:
    """The solver nodes master spends on its exact best move after ``moves`` with the table as ``tables`` holds it
    (``SystemExit`` should the solve disagree with the test set's ``score``, if given)."""
    position, mask, stones = from_moves(moves)
    found = opening_move(position, mask, stones, tables)
    if found is not None:
        solved, nodes = found[1], int(tables.counters[NODES]) if stones >= TABLE_STONES else 0
    else:
        steps = solve_in_steps(np.uint64(position), np.uint64(mask), stones, tables, np.inf)
        solved, nodes = steps.score if steps.solved else None, sum(steps.nodes)
    if score is not None and solved != score:
        raise SystemExit(f"master's solve of {moves} gives {solved}, the test set {score}")
    return nodes


def count_nodes(samples: dict[int, list[tuple[str, int]]], budget: int) -> None:
    """Print the nodes master's solve needs on each sample, from an empty table and within a game."""
    tables = new_solver_tables(book=field_book())
    print(f"{'stones':>6} {'positions':>9} {'max nodes':>12} {'in a game':>12} {'worst position':>22}", flush=True)
    fresh: list[tuple[int, str]] = []
    in_game: list[tuple[int, str]] = []
    for ply, drawn in samples.items():
        rows = []
        for moves, score in drawn:
            tables.entries.fill(0)
            rows.append((solve_nodes(moves, score, tables), moves))
            tables.entries.fill(0)  # master's move two stones before, then this one with the table it left
            if len(moves) >= 2:
                solve_nodes(moves[:-2], None, tables)
            in_game.append((solve_nodes(moves, score, tables), moves))
        fresh += rows
        worst = max(rows, default=(0, ""))
        game_worst = max((n for n, m in in_game if len(m) == ply), default=0)
        print(f"{ply:>6} {len(drawn):>9} {worst[0]:>12,} {game_worst:>12,} {worst[1]:>22}", flush=True)
    for name, counted in (("from an empty table", fresh), ("within a game", in_game)):
        counts = sorted(n for n, _ in counted)
        if not counts:
            continue
        share = [counts[min(len(counts) - 1, int(q * len(counts)))] for q in (0.5, 0.9)]
        over = sum(n > budget for n in counts)
        print(f"\n{name}: {len(counts)} positions, {sum(counts):,} nodes in all, median {share[0]:,}, "
              f"90th percentile {share[1]:,}, "
              f"max {counts[-1]:,}; over {budget:,}: {over}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Sample the positions, let master move at each time, check every move."""
    parser = script_parser(__doc__)
    parser.add_argument("--per-ply", type=int, default=4, help="positions a number of stones (default 4)")
    parser.add_argument("--plies", default="0-20", help="numbers of stones, as FIRST-LAST (default 0-20)")
    parser.add_argument("--times", default="0.1,1", help="seconds a move, separated by commas (default 0.1,1)")
    parser.add_argument("--verify-seconds", type=float, default=120.0,
                        help="give up checking one move after this long (default 120)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show-misses", action="store_true",
                        help="print each position where a move was not optimal (to the standard error)")
    parser.add_argument("--nodes", action="store_true",
                        help="count the solver nodes of master's exact move on each position instead of timing moves")
    parser.add_argument("--budget", type=int, default=300_000,
                        help="with --nodes: the node count the positions are compared with (default 300000)")
    args = parser.parse_args(argv)
    try:
        first, _, last = args.plies.partition("-")
        plies = range(int(first), int(last or first) + 1)
        times = [float(text) for text in args.times.split(",")]
    except ValueError:
        parser.error("--plies takes FIRST-LAST (numbers of stones), --times seconds separated by commas")
    if args.per_ply < 1 or not times or min(times) <= 0 or args.verify_seconds <= 0 or args.budget < 1:
        parser.error("--per-ply and --budget must be at least 1, the times positive")
    positions = read_positions(DATA)
    if len(positions) == 1:
        parser.error(f"no test sets in {DATA} (the shared data folder sits beside the checkout)")
    samples = sample(positions, plies, args.per_ply, args.seed)
    warm_up()
    if args.nodes:  # the same samples as a timed run of the same seed
        count_nodes(samples, args.budget)
        return 0
    tables = new_solver_tables(book=field_book())
    print(f"{'stones':>6} {'positions':>9}" + "".join(f"{f'optimal {t:g} s':>14}{'changed':>9}" for t in times)
          + f"{'unverified':>11}", flush=True)
    totals = {t: [0, 0] for t in times}
    started = time.perf_counter()
    for ply, drawn in samples.items():
        counts = {t: {OPTIMAL: 0, KEPT: 0, CHANGED: 0, UNVERIFIED: 0} for t in times}
        for moves, score in drawn:
            state = GAME.initial_state()
            for char in moves:
                state = GAME.apply(state, GAME.parse_move(char, state))
            for seconds in times:
                bot = make_bot("connect4", "master", args.seed)
                bot.new_game()
                move = bot.choose(state, TimeBudget(per_move=seconds))
                verdict = judge(moves, score, move.column, tables, args.verify_seconds)
                counts[seconds][verdict] += 1
                if args.show_misses and verdict != OPTIMAL:
                    print(f"{verdict} at {seconds:g} s: {moves} (score {score}), column {move.column + 1}, "
                          f"{bot.stats()}", file=sys.stderr)
        unverified = sum(c[UNVERIFIED] for c in counts.values())
        row = f"{ply:>6} {len(drawn):>9}"
        for seconds in times:
            c = counts[seconds]
            row += f"{c[OPTIMAL]:>14}{c[CHANGED]:>9}"
            totals[seconds][0] += c[OPTIMAL]
            totals[seconds][1] += len(drawn) - c[UNVERIFIED]
        print(row + f"{unverified:>11}", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s; optimal over the checked moves: "
          + ", ".join(f"{totals[t][0]}/{totals[t][1]} at {t:g} s" for t in times), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
