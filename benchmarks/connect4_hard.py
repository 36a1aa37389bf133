"""Node counts of Connect Four's solver (over the field's 12-stone book) on the hardest positions of seeded games.

    .venv/bin/python benchmarks/connect4_hard.py [--seed 1] [--games 40] [--stones 12-16] [--keep 20]
    .venv/bin/python benchmarks/connect4_hard.py --moves-file FILE     # measure a set printed before

The set is made, not stored: ``--games`` games from the empty board with seeded random moves (a move that
wins at once is taken, one that loses at once is avoided), every running position of ``--stones`` stones
solved exactly from an empty table, and the ``--keep`` positions that took the most nodes kept. For each
position master's steps are counted as it makes them (``solve_in_steps``): a column proven to hold some score
(``held``: that score, ``-`` none), the weak solve (win, draw or loss, with its move) and the exact one (the
score and the fastest win or slowest loss). Node counts do not depend on the
machine's load; times do, and are printed only as a guide. ``--print-moves`` lists the set's positions
(columns 1-7) so that another version of the solver can be measured on the very same set with
``--moves-file``. ``--budget N`` also shows what master would play within N solver nodes a move (about what
it searches in 0.1 s: 0.4 million nodes at 4.5 million a second), counted, not timed.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
from common import script_parser

from bots.engine.connect4.fieldbook import field_book
from bots.engine.connect4.master import solve_in_steps, warm_up
from bots.engine.connect4.position import (
    CELLS,
    WIDTH,
    column_mask,
    drop,
    from_moves,
    non_losing_moves,
    playable,
    winning_squares,
)
from bots.engine.connect4.solver import SolverTables, new_solver_tables


def seeded_positions(seed: int, games: int, low: int, high: int) -> list[str]:
    """Move strings of every running position of ``low`` to ``high`` stones in ``games`` seeded games."""
    rng = random.Random(seed)
    found: list[str] = []
    for _ in range(games):
        position, mask, moves = np.uint64(0), np.uint64(0), ""
        while len(moves) < min(high, CELLS):
            free = playable(mask)
            if free & winning_squares(position, mask):
                break  # the side to move wins at once: the game is over for this set
            safe = int(non_losing_moves(position, mask))
            allowed = safe if safe else int(free)
            choices = [c for c in range(WIDTH) if allowed & int(column_mask(c))]
            column = rng.choice(choices)
            position, mask = drop(position, mask, column)
            moves += str(column + 1)
            if low <= len(moves) <= high and safe:
                found.append(moves)
    return sorted(set(found), key=lambda m: (len(m), m))


def master_nodes(moves: str, tables: SolverTables) -> tuple[int, int, int, int, int]:
    """``(held nodes, weak nodes, exact nodes, score, floor)`` of master's three steps on ``moves`` from an empty
    table: the column held first (``floor``, ``-CELLS`` when none), the weak solve, the exact one."""
    position, mask, stones = from_moves(moves)
    tables.entries[:] = 0
    steps = solve_in_steps(np.uint64(position), np.uint64(mask), stones, tables, np.inf)
    if not steps.solved or steps.score < steps.floor:
        raise SystemExit(f"solver disagreement on {moves}: {steps}")
    return (*steps.nodes, steps.score, steps.floor)


SOLVED, HELD_OPTIMAL, HELD_KEPT = "solved (optimal)", "held, optimal (floor = score)", "held, outcome kept"
HELD_RISKY, SEARCHED = "held, outcome not sure", "left to the heuristic search"


def budget_verdict(moves: str, score: int, budget: int, tables: SolverTables) -> str:
    """What master's solve of ``moves`` (exact score ``score``) leaves within ``budget`` nodes: a solved move, a
    held column (optimal when its floor is the score; the outcome kept when the floor has the score's sign, or in
    a lost position), or nothing (master then plays the heuristic search's move)."""
    position, mask, stones = from_moves(moves)
    tables.entries[:] = 0
    steps = solve_in_steps(np.uint64(position), np.uint64(mask), stones, tables, np.inf, budget)
    if steps.solved:
        return SOLVED
    if steps.held < 0:
        return SEARCHED
    if steps.floor == score:
        return HELD_OPTIMAL
    kept = score < 0 or (score == 0 and steps.floor >= 0) or (score > 0 and steps.floor > 0)
    return HELD_KEPT if kept else HELD_RISKY


def main(argv: list[str] | None = None) -> None:
    """Build (or read) the set, count the nodes, print the figures."""
    parser = script_parser(__doc__)
    parser.add_argument("--seed", type=int, default=1, help="seed of the random games")
    parser.add_argument("--games", type=int, default=40, help="number of seeded games")
    parser.add_argument("--stones", default="12-16", help="stones on the board, LOW-HIGH (12 to 41)")
    parser.add_argument("--keep", type=int, default=20, help="positions kept: those with the most nodes")
    parser.add_argument("--moves-file", type=Path, default=None, help="measure these positions (one a line)")
    parser.add_argument("--print-moves", action="store_true", help="print the kept positions' moves")
    parser.add_argument("--budget", type=int, default=0,
                        help="also say what master's move would be within this many solver nodes (0: no)")
    args = parser.parse_args(argv)
    try:
        low, high = (int(part) for part in args.stones.split("-"))
    except ValueError:
        parser.error(f"--stones {args.stones!r}: expected LOW-HIGH, two whole numbers such as 12-16")
    if not 12 <= low <= high < CELLS:
        parser.error(f"--stones {args.stones!r}: expected 12 <= LOW <= HIGH <= 41")
    if args.games < 1 or args.keep < 1 or args.budget < 0:
        parser.error("--games and --keep must be at least 1, --budget 0 or more")

    warm_up()
    tables = new_solver_tables(book=field_book())
    if args.moves_file is not None:
        pool = [line.strip() for line in args.moves_file.read_text().splitlines() if line.strip()]
    else:
        pool = seeded_positions(args.seed, args.games, low, high)
    start = time.process_time()
    counted = [(moves, *master_nodes(moves, tables)) for moves in pool]
    cpu = time.process_time() - start
    kept = counted if args.moves_file is not None else sorted(counted, key=lambda row: -sum(row[1:4]))[: args.keep]

    print(f"{len(pool)} positions solved ({cpu:.1f} s CPU); {len(kept)} measured")
    print(f"{'moves':<20} {'stones':>6} {'score':>5} {'held':>5} {'held nodes':>12} {'weak nodes':>12} "
          f"{'exact nodes':>12}")
    for moves, held, weak, exact, score, floor in kept:
        shown = "-" if floor == -CELLS else str(floor)
        print(f"{moves:<20} {len(moves):>6} {score:>5} {shown:>5} {held:>12,} {weak:>12,} {exact:>12,}")
    if args.budget:
        print(f"\nwithin {args.budget:,} nodes a move (from an empty table), master's move:")
        verdicts = [budget_verdict(moves, score, args.budget, tables) for moves, *_, score, _ in kept]
        for verdict in (SOLVED, HELD_OPTIMAL, HELD_KEPT, HELD_RISKY, SEARCHED):
            print(f"  {verdict:<40} {verdicts.count(verdict):>3}")
    held_total, weak_total, exact_total = (sum(row[i] for row in kept) for i in (1, 2, 3))
    print(f"total: held {held_total:,} nodes, weak {weak_total:,} nodes, exact {exact_total:,} nodes, "
          f"all {held_total + weak_total + exact_total:,}")
    if args.print_moves:
        print("\n".join(row[0] for row in kept))


if __name__ == "__main__":
    main()
