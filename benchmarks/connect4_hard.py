"""Node counts of Connect Four's solver (over the field's 12-stone book) on the hardest positions of seeded games.

    .venv/bin/python benchmarks/connect4_hard.py [--seed 1] [--games 40] [--stones 12-16] [--keep 20]
    .venv/bin/python benchmarks/connect4_hard.py --moves-file FILE     # measure a set printed before

The set is made, not stored: ``--games`` games from the empty board with seeded random moves (a move that
wins at once is taken, one that loses at once is avoided), every running position of ``--stones`` stones
solved exactly from an empty table, and the ``--keep`` positions that took the most nodes kept. For each
position master's two solves are counted as it makes them: the weak one (win, draw or loss, with its move)
and the exact one (the score and the fastest win or slowest loss). Node counts do not depend on the
machine's load; times do, and are printed only as a guide. ``--print-moves`` lists the set's positions
(columns 1-7) so that another version of the solver can be measured on the very same set with
``--moves-file``.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
from common import script_parser

from bots.engine.connect4.fieldbook import field_book
from bots.engine.connect4.master import warm_up
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
from bots.engine.connect4.solver import NODES, SolverTables, new_solver_tables, solve_column


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


def master_nodes(moves: str, tables: SolverTables) -> tuple[int, int, int]:
    """``(weak nodes, exact nodes, score)`` of master's two solves of ``moves`` from an empty table."""
    position, mask, stones = from_moves(moves)
    tables.entries[:] = 0
    weak = solve_column(np.uint64(position), np.uint64(mask), stones, tables, np.inf, True)
    weak_nodes = int(tables.counters[NODES])
    low_bound = weak[1] if weak[1] > 0 else -CELLS  # as master does: the weak solve's bound goes on
    high_bound = weak[1] if weak[1] < 0 else CELLS
    exact = solve_column(np.uint64(position), np.uint64(mask), stones, tables, np.inf, False, low_bound, high_bound)
    signs_differ = (weak[1] > 0) != (exact[1] > 0) or (weak[1] < 0) != (exact[1] < 0)
    if not exact[2] or (weak[2] and signs_differ):  # (a weak solve of a loss finds no column: master goes on)
        raise SystemExit(f"solver disagreement on {moves}: weak {weak}, exact {exact}")
    return weak_nodes, int(tables.counters[NODES]), int(exact[1])


def main(argv: list[str] | None = None) -> None:
    """Build (or read) the set, count the nodes, print the figures."""
    parser = script_parser(__doc__)
    parser.add_argument("--seed", type=int, default=1, help="seed of the random games")
    parser.add_argument("--games", type=int, default=40, help="number of seeded games")
    parser.add_argument("--stones", default="12-16", help="stones on the board, LOW-HIGH (12 to 41)")
    parser.add_argument("--keep", type=int, default=20, help="positions kept: those with the most nodes")
    parser.add_argument("--moves-file", type=Path, default=None, help="measure these positions (one a line)")
    parser.add_argument("--print-moves", action="store_true", help="print the kept positions' moves")
    args = parser.parse_args(argv)
    try:
        low, high = (int(part) for part in args.stones.split("-"))
    except ValueError:
        parser.error(f"--stones {args.stones!r}: expected LOW-HIGH, two whole numbers such as 12-16")
    if not 12 <= low <= high < CELLS:
        parser.error(f"--stones {args.stones!r}: expected 12 <= LOW <= HIGH <= 41")
    if args.games < 1 or args.keep < 1:
        parser.error("--games and --keep must be at least 1")

    warm_up()
    tables = new_solver_tables(book=field_book())
    if args.moves_file is not None:
        pool = [line.strip() for line in args.moves_file.read_text().splitlines() if line.strip()]
    else:
        pool = seeded_positions(args.seed, args.games, low, high)
    start = time.process_time()
    counted = [(moves, *master_nodes(moves, tables)) for moves in pool]
    cpu = time.process_time() - start
    kept = counted if args.moves_file is not None else sorted(counted, key=lambda row: -(row[1] + row[2]))[: args.keep]

    print(f"{len(pool)} positions solved ({cpu:.1f} s CPU); {len(kept)} measured")
    print(f"{'moves':<20} {'stones':>6} {'score':>5} {'weak nodes':>12} {'exact nodes':>12}")
    for moves, weak, exact, score in kept:
        print(f"{moves:<20} {len(moves):>6} {score:>5} {weak:>12,} {exact:>12,}")
    weak_total = sum(row[1] for row in kept)
    exact_total = sum(row[2] for row in kept)
    print(f"total: weak {weak_total:,} nodes, exact {exact_total:,} nodes, both {weak_total + exact_total:,}")
    if args.print_moves:
        print("\n".join(row[0] for row in kept))


if __name__ == "__main__":
    main()
