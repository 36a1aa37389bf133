"""How well the Magnetic Cave evaluations predict exactly solved endgames.

``master`` plays ``minimax-4`` (colours alternated, 0.2 s a move by default);
positions at the given brick counts of those games are solved exactly (win,
draw or loss for the side to move, by the engine's null-window search to the
full board); then both evaluations score them: the middle-game one (threat
squares, pairs, line points) and the endgame one (threat squares, squares that
make threat squares, the zugzwang model, the move), which ``master`` blends in
from ``LATE_FROM`` bricks on. Positions with a win at hand or a forced block are
left out: every evaluation gets those right.

    .venv/bin/python benchmarks/cave_endgames.py
    .venv/bin/python benchmarks/cave_endgames.py --games 40 --bricks 38,40,42,44,46,48

Prints, per evaluation: the concordance (over pairs of positions with
different exact values, the share the evaluation orders the same way, ties
counting half; 0.5 is a coin), the correlation with the exact value (-1, 0,
+1), and how many wins, draws and losses it calls right by sign (a value within
``--draw-band`` of 0 calls a draw).
"""

from __future__ import annotations

import sys
import time

import numpy as np
from common import script_parser

from bots.engine.magnetic_cave.evaluation import LATE_RAMP, WIN_AT_HAND, evaluate_phase, search
from bots.engine.magnetic_cave.master import warm_up
from bots.engine.magnetic_cave.position import (
    MAX_MOVES,
    MOVE_SPACE,
    SQUARES,
    from_state,
    open_squares,
    plies_left,
    threat_squares,
)
from bots.engine.search import Searcher
from client.runner.match import play_match
from protocol.games import GAMES

GAME = GAMES["magnetic-cave"]


def positions(records: list, bricks: list[int]) -> list:
    """The reference states at each of ``bricks`` bricks in each game (games over by then are skipped)."""
    found = []
    for record in records:
        state = GAME.initial_state()
        for count, notation in enumerate(record.moves):
            if count in bricks and GAME.outcome(state) is None:
                found.append(state)
            state = GAME.apply(state, GAME.parse_move(notation, state))
    return found


def quiet(position: np.ndarray) -> bool:
    """No win at hand for the side to move and nothing to block: the evaluation's own work."""
    occupied = position[0] | position[1]
    empty = ~occupied
    free = open_squares(occupied)
    return not (threat_squares(position[0], empty) & free or threat_squares(position[1], empty) & free)


def concordance(values: np.ndarray, exact: np.ndarray) -> float:
    """Share of the pairs with different exact values that ``values`` orders the same way (ties: half)."""
    agree = pairs = 0.0
    for i in range(len(exact)):
        better = exact[i] > exact
        pairs += better.sum()
        agree += (values[i] > values[better]).sum() + 0.5 * (values[i] == values[better]).sum()
    return agree / pairs if pairs else float("nan")


def main(argv: list[str] | None = None) -> int:
    """Play the games, solve the positions, score both evaluations."""
    parser = script_parser(__doc__)
    parser.add_argument("--games", type=int, default=20, help="games of master against minimax-4 (default 20)")
    parser.add_argument("--bricks", default="40,42,44,46,48", help="brick counts to take positions at")
    parser.add_argument("--time-per-move", type=float, default=0.2, help="master's seconds a move (default 0.2)")
    parser.add_argument("--solve-seconds", type=float, default=8.0, help="give up on a position after this long")
    parser.add_argument("--draw-band", type=int, default=40, help="values within this of 0 call a draw")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        bricks = sorted({int(text) for text in args.bricks.split(",")})
    except ValueError:
        parser.error(f"--bricks takes brick counts separated by commas, not {args.bricks!r}")
    if not all(0 < count < SQUARES for count in bricks):
        parser.error(f"brick counts must be between 1 and {SQUARES - 1}")
    if args.games < 1 or args.jobs < 1 or args.time_per_move <= 0 or args.solve_seconds <= 0:
        parser.error("--games and --jobs must be at least 1, the times positive")

    print(f"playing {args.games} games of master against minimax-4 ...", file=sys.stderr, flush=True)
    match = play_match("magnetic-cave", "master", "minimax-4", args.games, time_per_move=args.time_per_move,
                       seed=args.seed, jobs=args.jobs, opening_plies=2)
    states = positions(match.records, bricks)
    warm_up()
    searcher = Searcher(search, MAX_MOVES, MOVE_SPACE, table_bits=22)
    exact, middle, endgame = [], [], []
    skipped_tactics = unsolved = 0
    started = time.perf_counter()
    for index, state in enumerate(states, 1):
        position = from_state(state)
        if not quiet(position):
            skipped_tactics += 1
            continue
        value = searcher.window(position, plies_left(position), -1, 1,
                                time.perf_counter() + args.solve_seconds)
        if value is None:
            unsolved += 1
            continue
        exact.append((value > 0) - (value < 0))
        middle.append(evaluate_phase(position, 0))
        endgame.append(evaluate_phase(position, LATE_RAMP))
        if index % 20 == 0:
            print(f"  solved {index}/{len(states)}", file=sys.stderr, flush=True)
    exact_array = np.array(exact)
    print(f"\n{len(exact)} positions solved at {args.bricks} bricks from {args.games} games "
          f"(seed {args.seed}; {skipped_tactics} with a win at hand or a block left out, {unsolved} not solved "
          f"within {args.solve_seconds:g} s; {time.perf_counter() - started:.0f} s of solving)")
    print(f"exact values: {np.sum(exact_array > 0)} wins, {np.sum(exact_array == 0)} draws, "
          f"{np.sum(exact_array < 0)} losses for the side to move\n")
    print(f"{'evaluation':<12}{'concordance':>13}{'correlation':>13}{'wins right':>12}{'draws right':>13}"
          f"{'losses right':>14}")
    for name, values in (("middle game", middle), ("endgame", endgame)):
        array = np.array(values, float)
        called = np.where(np.abs(array) <= args.draw_band, 0, np.sign(array))
        right = [int(np.sum((exact_array == kind) & (called == kind))) for kind in (1, 0, -1)]
        totals = [int(np.sum(exact_array == kind)) for kind in (1, 0, -1)]
        correlation = np.corrcoef(np.clip(array, -WIN_AT_HAND, WIN_AT_HAND), exact_array)[0, 1]
        print(f"{name:<12}{concordance(array, exact_array):>13.3f}{correlation:>13.3f}"
              + "".join(f"{f'{r}/{t}':>{w}}" for r, t, w in zip(right, totals, (12, 13, 14), strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
