"""The Connect Four solver's speed on master's hard positions: nodes, CPU seconds, nodes a second, against a baseline.

    .venv/bin/python benchmarks/connect4_speed.py [--seeds 1-5] [--from-stones 12] [--rounds 3] [--against REV]
        [--table-bits 18,23]

The positions are those ``connect4_accuracy.py --nodes`` samples (4 a number of stones, plies 0-20, for each seed
in ``--seeds``) with at least ``--from-stones`` stones: below 12 the openings answer without the solver. Each is
solved as a fresh master solves it (:func:`~bots.engine.connect4.master.solve_in_steps` from an empty table, the
table cleared outside the clock), one position after another in one process; a round prints the nodes in all,
the CPU seconds of the solves, the nodes a CPU second and the load average.

``--against REV`` (a git revision, e.g. ``HEAD~1``) checks that revision out with ``git archive`` into a scratch
folder and runs the same rounds on its code too, alternating with the tree's own rounds so that a change of load
falls on both alike. A first round on each code, not printed, compiles what needs compiling. Timings on a shared
machine are noisy: compare the medians, and the node counts, which do not depend on load. ``--table-bits`` runs
this tree's rounds once for each size of the solver's table (``2 ** bits`` entries of 8 bytes) instead; the last
code listed (the baseline, else the last size) is the one the others are compared with.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, script_parser


def positions(seeds: range, from_stones: int) -> list[str]:
    """The move strings of the sampled positions of ``seeds`` with at least ``from_stones`` stones."""
    from connect4_accuracy import DATA, read_positions, sample

    found = read_positions(DATA)
    if len(found) == 1:
        raise SystemExit(f"no test sets in {DATA} (the shared data folder sits beside the checkout)")
    return [moves for seed in seeds for drawn in sample(found, range(0, 21), 4, seed).values()
            for moves, _ in drawn if len(moves) >= from_stones]


def worker(tree: Path, seeds: range, from_stones: int, table_bits: int | None) -> dict[str, float]:
    """Solve the positions with the code of ``tree`` (imported first), with a table of ``2 ** table_bits``
    entries if given; their nodes and CPU seconds in all."""
    sys.path.insert(0, str(tree))
    import numpy as np

    from bots.engine.connect4.fieldbook import field_book
    from bots.engine.connect4.master import solve_in_steps, warm_up
    from bots.engine.connect4.position import from_moves
    from bots.engine.connect4.solver import new_solver_tables

    warm_up()
    if table_bits is None:
        tables = new_solver_tables(book=field_book())
    else:
        tables = new_solver_tables(book=field_book(), size=1 << table_bits)
    nodes, seconds = 0, 0.0
    chosen = positions(seeds, from_stones)
    for moves in chosen[:1]:  # once unclocked: whatever a revision's warm-up left to load (its clock's first reading)
        position, mask, stones = from_moves(moves)
        solve_in_steps(np.uint64(position), np.uint64(mask), stones, tables, np.inf)
    for moves in chosen:
        position, mask, stones = from_moves(moves)
        tables.entries.fill(0)
        started = time.process_time()
        steps = solve_in_steps(np.uint64(position), np.uint64(mask), stones, tables, np.inf)
        seconds += time.process_time() - started
        if not steps.solved:
            raise SystemExit(f"{moves}: not solved without a deadline")
        nodes += sum(steps.nodes)
    return {"nodes": nodes, "seconds": seconds, "positions": len(chosen)}


def run_round(tree: Path, args: list[str]) -> dict[str, float]:
    """One round in a fresh process on the code of ``tree``."""
    done = subprocess.run([sys.executable, __file__, "--worker", str(tree), *args],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the round on {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the rounds (alternating between the codes and table sizes), print the figures."""
    parser = script_parser(__doc__)
    parser.add_argument("--seeds", default="1-5", help="the sampling seeds, as FIRST-LAST (default 1-5)")
    parser.add_argument("--from-stones", type=int, default=12, help="the fewest stones of a position (default 12)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds on each code (default 3)")
    parser.add_argument("--against", metavar="REV", help="a git revision to compare with")
    parser.add_argument("--table-bits", default="",
                        help="table sizes to compare on this tree, as powers of two separated by commas (e.g. 18,23)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)  # a round on the code of this folder
    parser.add_argument("--bits", type=int, help=argparse.SUPPRESS)  # the worker's table size
    args = parser.parse_args(argv)
    try:
        first, _, last = args.seeds.partition("-")
        seeds = range(int(first), int(last or first) + 1)
        sizes = [int(text) for text in args.table_bits.split(",") if text.strip()]
    except ValueError:
        parser.error("--seeds takes FIRST-LAST (e.g. 1-5), --table-bits whole numbers separated by commas")
    if not seeds or args.rounds < 1 or not 0 <= args.from_stones <= 20 or any(not 10 <= b <= 26 for b in sizes):
        parser.error("--seeds needs at least one seed, --rounds at least 1, --from-stones 0 to 20, "
                     "--table-bits 10 to 26")
    shared = ["--seeds", args.seeds, "--from-stones", str(args.from_stones)]
    if args.worker is not None:
        print(json.dumps(worker(args.worker, seeds, args.from_stones, args.bits)))
        return 0
    with tempfile.TemporaryDirectory(prefix="c4speed-") as scratch:
        runs = {"this tree": (ROOT, shared)} if not sizes else {
            f"2**{bits}": (ROOT, [*shared, "--bits", str(bits)]) for bits in sizes}
        if args.against:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against],
                                     capture_output=True, check=False)
            if archive.returncode:
                parser.error(f"--against {args.against}: {archive.stderr.decode().strip()}")
            subprocess.run(["tar", "-x", "-C", scratch], input=archive.stdout, check=True)
            runs[args.against] = (Path(scratch), shared)
        for tree, options in runs.values():
            run_round(tree, options)  # compiles the solver if its code changed (the revision's always), unclocked
        print(f"{'round':>5} {'code':>12} {'positions':>9} {'nodes':>12} {'CPU s':>8} {'M nodes/s':>10} {'load':>5}",
              flush=True)
        rates: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for number in range(1, args.rounds + 1):
            for name, (tree, options) in runs.items():
                figures = run_round(tree, options)
                rate = figures["nodes"] / figures["seconds"] / 1e6
                rates[name].append(rate)
                cpu[name].append(figures["seconds"])
                print(f"{number:>5} {name:>12} {figures['positions']:>9} {figures['nodes']:>12,} "
                      f"{figures['seconds']:>8.3f} {rate:>10.2f} {os.getloadavg()[0]:>5.2f}", flush=True)
    medians = {name: (statistics.median(rates[name]), statistics.median(cpu[name])) for name in runs}
    print("\nmedians: " + "; ".join(f"{name} {rate:.2f} M nodes/s, {seconds:.3f} CPU s"
                                    for name, (rate, seconds) in medians.items()))
    if len(medians) > 1:
        (base, theirs), *others = reversed(medians.items())
        for name, ours in others:
            print(f"{name} / {base}: nodes a second x{ours[0] / theirs[0]:.2f}, CPU seconds x{ours[1] / theirs[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
