"""Connect Four's openings: the field's book and the opening table (load time, memory), master's start-up, and the
time ``plyhall analyse`` takes a game now that every position is exact.

    .venv/bin/python benchmarks/connect4_openings.py [--games 5] [--seed 1]

* Book: reading ``book_12ply_distances.dat`` (bitbully-databases) into our arrays, their size.
* Table: making the opening table from scratch (in a scratch cache folder), and loading it.
* Start-up: a fresh process that imports the bots and makes a ``master`` bot (which loads the compiled code,
  the book and the table), once with an empty cache folder (the table is made first) and once more with the
  table there (warm); its wall time and peak resident memory.
* Analysis: ``--games`` long games, each from a few seeded random stones on, then played on by moves that keep
  the result as slowly as possible (the loser holds out, the winner takes its time: up to 42 plies), each
  analysed by one analyser as the server's worker does; wall and CPU seconds a game.

Figures depend on the machine and whatever else runs on it.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

from common import ROOT, heading, scratch, script_parser

STARTUP = ("import resource, time; t = time.perf_counter(); c = time.process_time(); from bots import make_bot; "
           "make_bot('connect4', 'master', 1); "
           "print(time.perf_counter() - t, time.process_time() - c, "
           "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")


def startup(cache: str) -> tuple[float, float, float]:
    """Seconds (wall and CPU) and peak MB of a fresh process making a master bot, with ``XDG_CACHE_HOME=cache``
    (the CPU seconds say what the start-up costs whatever the machine's load)."""
    done = subprocess.run([sys.executable, "-c", STARTUP], cwd=ROOT, capture_output=True, text=True, check=True,
                          env={**os.environ, "XDG_CACHE_HOME": cache})
    seconds, cpu, mb = done.stdout.split()
    return float(seconds), float(cpu), float(mb)


def long_game(analyser: object, seed: int, random_stones: int = 3) -> list[str]:
    """A few seeded random stones, then moves keeping the result, the slowest first (ties broken by the seed)."""
    from bots.analysis import flip

    game = analyser.game
    rng = random.Random(seed)
    state, moves = game.initial_state(), []
    while game.outcome(state) is None:
        legal = game.legal_moves(state)
        if len(moves) < random_stones:
            move = rng.choice(legal)
        else:
            rank = {}
            for candidate in legal:
                value = flip(analyser.value(game.apply(state, candidate)))
                rank[game.notation(candidate)] = (value.expected, value.plies if value.expected >= 0.5 else 0)
            best = max(rank.values())
            move = game.parse_move(rng.choice(sorted(m for m, r in rank.items() if r == best)), state)
        moves.append(game.notation(move))
        state = game.apply(state, move)
    return moves


def main(argv: list[str] | None = None) -> int:
    """Measure and print."""
    parser = script_parser(__doc__)
    parser.add_argument("--games", type=int, default=5, help="games analysed (default 5)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")

    with scratch("connect4-openings") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
        from bots.analysis import Analyser, analyse
        from bots.engine.connect4 import book
        from bots.engine.connect4.fieldbook import book_path, read_field_book

        heading("Connect Four openings")
        started = time.perf_counter()
        field = read_field_book(book_path())
        print(f"book: {len(field.keys):,} positions of 12 stones, read in {time.perf_counter() - started:.2f} s, "
              f"{(field.keys.nbytes + field.values.nbytes) / 1e6:.1f} MB in memory")
        started = time.perf_counter()
        table = book.make_table()
        made = time.perf_counter() - started
        started = time.perf_counter()
        book.Book.load(book.table_path())
        print(f"table: {len(table):,} positions of up to {book.TABLE_STONES} stones, made in {made:.1f} s, "
              f"loaded in {time.perf_counter() - started:.3f} s, {book.table_path().stat().st_size / 1e6:.2f} MB file")

        cold = startup(str(tmp / "cold-cache"))
        warm = startup(str(tmp / "cold-cache"))
        print(f"master start-up: {cold[0]:.1f} s ({cold[1]:.1f} s CPU) with no table yet (made first), "
              f"{warm[0]:.1f} s ({warm[1]:.1f} s CPU) warm; peak memory {warm[2]:.0f} MB")

        analyser = Analyser("connect4")
        games = [long_game(analyser, args.seed + i) for i in range(args.games)]
        print(f"{'game':>4} {'plies':>5} {'wall s':>7} {'cpu s':>6} {'exact':>6}")
        walls = []
        for number, moves in enumerate(games, 1):
            wall, cpu = time.perf_counter(), time.process_time()
            result = analyse("connect4", moves, analyser=analyser)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            walls.append(wall)
            exact = sum(p["exact"] for p in result["positions"])
            print(f"{number:>4} {len(moves):>5} {wall:>7.2f} {cpu:>6.2f} {exact:>3}/{len(result['positions'])}")
        print(f"analysis: mean {sum(walls) / len(walls):.2f} s a game, worst {max(walls):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
