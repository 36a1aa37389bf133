"""Quarto's exact solver against a C++ reference solver, on the same positions, same core, same run.

    .venv/bin/python benchmarks/quarto_solver.py [--reference DIR] [--per-bucket 40] [--placed 4,5,6,7,8]

Positions come from seeded random playouts in which every hand-over is safe
(no piece that wins at once is given while another exists), so that none is
decided at once; they are grouped by the number of pieces already placed (a
*bucket*). Each is solved from an empty table, one after another, by:

* ``solver``: Plyhall's exact solver (``bots/engine/quarto/solver.py``), what the
  master plays and analysis values with near the end;
* ``search``: the shared search solving to the end (what the master used
  before the solver), on the first ``--search-limit`` positions of a bucket;
* ``reference``: indjev99's Quarto-Solver (C++, MIT), if ``--reference`` names
  a checkout of https://github.com/indjev99/Quarto-Solver and a C++ compiler
  is present. Its ``src/main.cpp`` is compiled unchanged but for one line
  (below) with the flags of its Makefile (``-O3``; C++20 for its bit-field
  initialisers) into a driver that reads positions on stdin, clears its table
  and times ``eval`` alone. That solver also counts 2x2 squares as wins (a
  Quarto variant); standard Quarto has none, so the square rule's ``if`` is
  switched off in the copy compiled. Without a checkout, the reference's
  figures recorded on the project's machine are printed instead.

Values are compared: both solvers score a win whose placement leaves ``e``
squares empty as ``e + 1``, so every value must agree exactly. Times are
wall-clock means per position.
"""

from __future__ import annotations

import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from common import heading, script_parser, table_header

from bots.engine.quarto.evaluation import generate_moves
from bots.engine.quarto.evaluation import solve as search_solve
from bots.engine.quarto.position import (
    EMPTY_SQUARES,
    IN_HAND,
    MAX_MOVES,
    NO_PIECE,
    WON,
    encode,
    new_position,
    play,
)
from bots.engine.quarto.solver import clear, new_solver_tables, solve, to_search_score

RECORDED_REFERENCE = {4: 0.7758, 5: 0.0900, 6: 0.0098, 7: 0.0019, 8: 0.0004}
"""Mean seconds a position of the reference, by pieces placed, measured on the project's 2-core machine
(this script with ``--reference``, default positions): printed when no checkout is given."""

DRIVER = r"""
#define main quarto_solver_main
#include "main.cpp"
#undef main
#include <chrono>
#include <cstdio>

// One position a line: the piece on each of the 16 squares (-1 empty), then the piece in hand.
int main()
{
    int board[16], hand;
    while (true)
    {
        for (int i = 0; i < 16; ++i)
            if (std::scanf("%d", &board[i]) != 1) return 0;
        if (std::scanf("%d", &hand) != 1) return 0;
        State state;
        for (int i = 0; i < 16; ++i)
        {
            if (board[i] >= 0)
            {
                state.moveSelect(board[i]);
                state.movePlace(i);
            }
        }
        state.moveSelect(hand);
        transTable.clear();
        auto start = std::chrono::steady_clock::now();
        int value = eval(state);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("%d %llu %.9f\n", value, (unsigned long long) totalEvalStates, seconds);
        std::fflush(stdout);
    }
}
"""

SQUARE_RULE = "if (row + WIN_SQ_SIDE <= NUM_ROWS && col + WIN_SQ_SIDE <= NUM_COLS)"


def random_position(rng: random.Random, placed: int) -> np.ndarray:
    """A running position with ``placed`` pieces on the board and one in hand, every hand-over safe."""
    moves = np.zeros(MAX_MOVES, np.int32)
    while True:
        position = new_position()
        play(position, encode(None, rng.randrange(16)))
        for _ in range(placed):
            n = generate_moves(position, moves)
            move = int(moves[rng.randrange(n)])
            play(position, move)
            if position[WON] or move % 17 == NO_PIECE:
                break
        else:
            if generate_moves(position, moves) > 1:  # not decided at once
                return position


def clear_table(source: str) -> str:
    """The statement that clears the reference's transposition table before each position: through the variable
    declared with type ``TransTable`` (``transTable`` in older checkouts), or ``TransTable`` itself where newer ones
    name the table so (an object, or a class of static members)."""
    declared = re.search(r"^\s*(?:static\s+|inline\s+)*TransTable\s+(\w+)\s*[;({=]", source, re.M)
    if declared:
        return f"{declared.group(1)}.clear();"
    if re.search(r"\bTransTable\s*::\s*clear\s*\(", source):
        return "TransTable::clear();"
    return "TransTable.clear();" if re.search(r"\bTransTable\b", source) else "transTable.clear();"


def build_reference(checkout: Path, work: Path) -> Path:
    """Compile the reference's ``src/main.cpp`` into the driver; the executable's path."""
    source = (checkout / "src" / "main.cpp").read_text()
    if SQUARE_RULE in source:
        source = source.replace(SQUARE_RULE, "if (false) // standard Quarto: no 2x2 squares")
        print("reference: its 2x2-square wins switched off (standard Quarto)")
    (work / "main.cpp").write_text(source)
    (work / "driver.cpp").write_text(DRIVER.replace("transTable.clear();", clear_table(source)))
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        raise SystemExit("no C++ compiler (g++ or c++) on PATH: run without --reference")
    command = [compiler, "-std=c++20", "-Wall", "-O3", "-I", str(work),
               "-o", str(work / "driver"), str(work / "driver.cpp")]
    print("reference:", " ".join(command[:6]), "...")
    subprocess.run(command, check=True)
    return work / "driver"


class Reference:
    """The reference driver as a running process: one position in, ``(value, nodes, seconds)`` out."""

    def __init__(self, driver: Path) -> None:
        self.process = subprocess.Popen([str(driver)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def solve(self, position: np.ndarray) -> tuple[int, int, float]:
        """Solve one position (the driver clears its table first)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        board = [int(position[s]) for s in range(16)]
        self.process.stdin.write(" ".join(map(str, [*board, int(position[IN_HAND])])) + "\n")
        self.process.stdin.flush()
        value, nodes, seconds = self.process.stdout.readline().split()
        return int(value), int(nodes), float(seconds)

    def close(self) -> None:
        """End the driver."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def empty_squares(position: np.ndarray) -> int:
    """Empty squares of an engine position."""
    return bin(int(position[EMPTY_SQUARES])).count("1")


def main(argv: list[str] | None = None) -> None:
    """Build the positions, solve them every way asked, print the table."""
    parser = script_parser(__doc__)
    parser.add_argument("--reference", type=Path, help="a checkout of indjev99/Quarto-Solver to build and compare")
    parser.add_argument("--per-bucket", type=int, default=40, help="positions per number of pieces placed")
    parser.add_argument("--placed", default="4,5,6,7,8", help="numbers of pieces placed, comma-separated")
    parser.add_argument("--search-limit", type=int, default=2,
                        help="positions per bucket the shared search also solves (0: none; it is slow early)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        buckets = [int(x) for x in args.placed.split(",")]
    except ValueError:
        parser.error(f"--placed takes comma-separated numbers of pieces, such as 4,5,6, not {args.placed!r}")
    if any(not 1 <= b <= 14 for b in buckets) or args.per_bucket < 1 or args.search_limit < 0:
        parser.error("--placed numbers must be 1-14, --per-bucket at least 1, --search-limit at least 0")
    if args.reference is not None and not (args.reference / "src" / "main.cpp").is_file():
        parser.error(f"--reference {args.reference}: no src/main.cpp there (a checkout of indjev99/Quarto-Solver)")

    rng = random.Random(args.seed)
    positions = {b: [random_position(rng, b) for _ in range(args.per_bucket)] for b in buckets}
    tables = new_solver_tables()
    solve(positions[buckets[-1]][0], tables)  # load the compiled code before any clock starts
    search_solve(positions[buckets[-1]][0].copy(), table_bits=10)

    with tempfile.TemporaryDirectory(prefix="plyhall-quarto-reference-") as tmp:
        reference = None if args.reference is None else Reference(build_reference(args.reference, Path(tmp)))
        heading("Quarto exact solving, mean seconds a position (positions alternate between the solvers)")
        table_header(f"{'placed':>6} {'n':>4} {'solver':>10} {'nodes':>10} {'Mnodes/s':>9} {'search':>10} "
                     f"{'reference':>10} {'ref nodes':>10} {'solver/ref':>10} {'search/solver':>13} {'agree':>7}")
        totals = {"solver": 0.0, "reference": 0.0}
        disagreements: list[tuple[np.ndarray, int, int]] = []
        for b in buckets:
            times, nodes, values, theirs = [], 0, [], []
            for position in positions[b]:
                if reference is not None:
                    theirs.append(reference.solve(position))
                clear(tables)
                start = time.perf_counter()
                score, _, _ = solve(position, tables)
                times.append(time.perf_counter() - start)
                nodes += int(tables.counters[0])
                values.append(score)
            searched = []
            for position, value in zip(positions[b][: args.search_limit], values, strict=False):
                start = time.perf_counter()
                exact = search_solve(position.copy(), table_bits=22)
                searched.append(time.perf_counter() - start)
                if exact != to_search_score(value, empty_squares(position)):
                    print(f"  search and solver disagree on a position with {b} placed: {exact} against {value}")
            mean = statistics.fmean(times)
            totals["solver"] += sum(times)
            search_text, ratio_search = f"{'-':>10}", f"{'-':>13}"
            if searched:
                search_text = f"{statistics.fmean(searched):10.4f}"
                ratio_search = f"{statistics.fmean(searched) / statistics.fmean(times[: len(searched)]):12.1f}x"
            if theirs:
                ref_mean = statistics.fmean(r[2] for r in theirs)
                totals["reference"] += sum(r[2] for r in theirs)
                agree = sum(r[0] == v for r, v in zip(theirs, values, strict=True))
                disagreements += [(p, v, r[0]) for p, v, r in zip(positions[b], values, theirs, strict=True)
                                  if r[0] != v]
                ref_text, agree_text = f"{ref_mean:10.4f}", f"{agree}/{len(values)}"
                ref_nodes = f"{statistics.fmean(r[1] for r in theirs):10.0f}"
            else:
                ref_mean = RECORDED_REFERENCE.get(b, float("nan"))
                ref_text, agree_text, ref_nodes = f"{ref_mean:9.4f}*", "-", f"{'-':>10}"
            print(f"{b:6d} {len(times):4d} {mean:10.4f} {nodes / len(times):10.0f} {nodes / sum(times) / 1e6:9.2f} "
                  f"{search_text} {ref_text} {ref_nodes} {mean / ref_mean:9.2f}x {ratio_search} {agree_text:>7}",
                  flush=True)
        if reference is not None:
            reference.close()
    if reference is not None:
        print(f"all positions: solver {totals['solver']:.1f} s, reference {totals['reference']:.1f} s, "
              f"ratio {totals['solver'] / totals['reference']:.2f}x")
        judge_disagreements(disagreements)
    else:
        print("* the reference's figures recorded on the project's machine (no --reference checkout given)")


def judge_disagreements(disagreements: list[tuple[np.ndarray, int, int]]) -> None:
    """Let the shared search (exact, and tested against brute force) settle the values the solvers disagree on.

    Only positions of 7 or more placed pieces are settled (the search is slow before).
    """
    if not disagreements:
        return
    settled = solver_right = 0
    for position, ours, _theirs in disagreements:
        if empty_squares(position) > 9:
            continue
        settled += 1
        exact = search_solve(position.copy(), table_bits=20)
        solver_right += exact == to_search_score(ours, empty_squares(position))
    print(f"values differing: {len(disagreements)}; of the {settled} with 7 or more placed, the shared search "
          f"agrees with the solver on {solver_right} and with the reference on {settled - solver_right}")


if __name__ == "__main__":
    main()
