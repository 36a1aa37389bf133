"""The cost of ``Hall.handle`` alone for a move: the room, the rules, the clocks and the hall's routing, without the
frame read, decoding, validation or encoding that ``hall_cost.py`` counts too.

The moves of ``hall_cost.py``'s table (``--rooms`` Connect Four rooms, random legal moves, games that end start
again) are recorded on one table, validated, then replayed on a second table built the same way (``Env.fixed``,
the same times), so the replay's states are the recording's and nothing but ``Hall.handle`` (and ``Hall.committed``
after a game's end) runs in the measured loop::

    .venv/bin/python benchmarks/handle_cost.py --moves 20000 --repeats 5
    valgrind --tool=callgrind --instr-atstart=no .venv/bin/python benchmarks/handle_cost.py --instructions --moves 2000
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hall_cost import Table, callgrind, instructions_so_far, move_arguments  # noqa: E402
from writer_cost import play  # noqa: E402

from server.core.hall import HallOutbox  # noqa: E402

WARM_UP = 2000


def record(rooms: int, seed: int, moves: int) -> list[tuple[int, Any, float, bool]]:
    """``moves`` validated move requests played on a table of their own (``writer_cost.play``): (connection,
    request, time, game ended) of each."""
    table = Table(rooms, seed)
    script = []
    handle = table.hall.handle

    def recording(conn: int, msg: Any, now: float) -> HallOutbox:
        out = handle(conn, msg, now)
        script.append((conn, msg, now, bool(out.ended)))
        return out

    table.hall.handle = recording  # type: ignore[method-assign]
    play(table, moves)
    return script


def replay(table: Table, script: list[tuple[int, Any, float, bool]]) -> None:
    """Hand ``script``'s moves to ``table``'s hall, in order (a game's end committed, as the writer would)."""
    hall = table.hall
    for conn, msg, now, ended in script:
        out = hall.handle(conn, msg, now)
        if ended:
            hall.committed(out, now)


def main() -> None:
    parser = move_arguments(__doc__.splitlines()[0], "a repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats (CPU time: the minimum counts; default 5)")
    args = parser.parse_args()
    if args.rooms < 1 or args.moves < 1 or args.repeats < 1:
        parser.error("--rooms, --moves and --repeats must be at least 1")
    repeats = 1 if args.instructions or args.profile else args.repeats
    script = record(args.rooms, args.seed, WARM_UP + args.moves * repeats)
    table = Table(args.rooms, args.seed)
    replay(table, script[:WARM_UP])
    parts = [script[WARM_UP + i * args.moves:WARM_UP + (i + 1) * args.moves] for i in range(repeats)]
    if args.instructions:
        callgrind("-i", "on")
        start = instructions_so_far()
        replay(table, parts[0])
        spent = instructions_so_far() - start
        callgrind("-i", "off")
        print(f"Hall.handle alone, {args.rooms} rooms: {spent / args.moves:,.0f} instructions a move "
              f"({args.moves} moves)")
        return
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        replay(table, parts[0])
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return
    figures = []
    for part in parts:
        start = time.process_time()
        replay(table, part)
        figures.append((time.process_time() - start) / args.moves * 1e6)
    print(f"Hall.handle alone, {args.rooms} rooms: min {min(figures):.1f} us, median "
          f"{sorted(figures)[len(figures) // 2]:.1f} us CPU ({repeats} x {args.moves} moves)")


if __name__ == "__main__":
    main()
