"""Solve the positions of a Connect Four test set and print how fast and how exactly.

    python benchmarks/connect4_solver.py ../shared/data/connect4/Test_L3_R1 [--limit N]

A set file has one position a line, ``MOVES SCORE`` (see the data README). The
positions are solved one after another in a single compiled call, with one
solver table kept across them, as Pascal Pons' reference program does; the
published C++ means are printed alongside. Compiling (or loading compiled code)
happens before the clock starts. Mean time is wall-clock time; the CPU time next to
it is steadier on a shared machine.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from common import script_parser

from bots.engine.connect4.master import warm_up
from bots.engine.connect4.position import from_moves
from bots.engine.connect4.solver import new_solver_tables, solve_many

PUBLISHED_MEAN_SECONDS = {
    "Test_L3_R1": 4.6e-6,
    "Test_L2_R1": 37e-6,
    "Test_L2_R2": 3.2e-3,
    "Test_L1_R1": 255e-6,
    "Test_L1_R2": 97e-3,
    "Test_L1_R3": 5.5,
}
"""Mean time per position of the C++ solver on blog.gamesolver.org."""


def read_set(path: Path, limit: int | None) -> tuple[list[str], list[int]]:
    """Move strings and expected scores of the first ``limit`` lines of a set file."""
    moves, scores = [], []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        text, score = line.split()
        moves.append(text)
        scores.append(int(score))
        if limit is not None and len(moves) >= limit:
            break
    return moves, scores


def human(seconds: float) -> str:
    """Seconds in the unit that reads best."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, solve the set, print the figures."""
    parser = script_parser(__doc__)
    parser.add_argument("setfile", type=Path, help="a test set file of 'MOVES SCORE' lines")
    parser.add_argument("--limit", type=int, default=None, help="solve only the first N positions")
    args = parser.parse_args(argv)

    moves, expected = read_set(args.setfile, args.limit)
    boards = [from_moves(text) for text in moves]
    positions = np.array([b[0] for b in boards], np.uint64)
    masks = np.array([b[1] for b in boards], np.uint64)
    stones = np.array([b[2] for b in boards], np.int64)

    warm_up()
    tables = new_solver_tables()
    start, start_cpu = time.perf_counter(), time.process_time()
    scores, nodes = solve_many(positions, masks, stones, tables)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu

    count = len(moves)
    exact = int(np.sum(scores == np.array(expected)))
    mean = elapsed / count
    print(f"set {args.setfile.name}: {count} positions, {exact} scores exact")
    print(f"mean time {human(mean)} (cpu {human(cpu / count)}), mean nodes {nodes.mean():,.0f}, "
          f"{nodes.sum() / elapsed / 1e6:.2f} M nodes/s, total {human(elapsed)}")
    published = PUBLISHED_MEAN_SECONDS.get(args.setfile.name)
    if published:
        print(f"published C++ mean {human(published)}: ratio {mean / published:.2f}x")
    for text, want, got in zip(moves, expected, scores, strict=True):
        if want != got:
            print(f"  wrong: {text} expected {want}, got {got}")


if __name__ == "__main__":
    main()
