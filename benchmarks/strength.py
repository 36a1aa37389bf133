"""Strength of the ``master`` engines against the ``minimax-N`` yardsticks.

For each game, the largest N whose ``minimax-N`` moves (on average over
positions from random playouts) within the time ``master`` gets per move is
found first; then ``master`` plays that ``minimax-N`` with colours alternated
and a few random opening plies so the games differ.

    .venv/bin/python benchmarks/strength.py --games 100 --time-per-move 0.2 --jobs 2
    .venv/bin/python benchmarks/strength.py --game quarto --games 20
    .venv/bin/python benchmarks/strength.py --game magnetic-cave --depth 4 --master-seat second --seed 5

Prints, per game: N, minimax-N's mean move time, and master's wins, draws,
losses and score with a 95% Wilson interval (target: 90% or more), and its
wins, draws and losses moving first and moving second.
"""

from __future__ import annotations

import random
import sys
import time

from common import script_parser

from bots import MAX_MINIMAX_DEPTH, make_bot
from client.runner.match import play_match
from protocol.games import GAMES

GAME_ORDER = ["connect4", "santorini", "amazons", "magnetic-cave", "quarto"]


def sample_positions(game_id: str, count: int, seed: int) -> list:
    """Positions from random playouts, spread over the opening and middle game."""
    game = GAMES[game_id]
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        state = game.initial_state()
        plies = rng.randrange(0, 24)
        for _ in range(plies):
            if game.outcome(state) is not None:
                break
            state = game.apply(state, rng.choice(game.legal_moves(state)))
        if game.outcome(state) is None:
            positions.append(state)
    return positions


def minimax_move_time(game_id: str, depth: int, positions: list, limit: float) -> float:
    """Mean seconds minimax-``depth`` takes per move over ``positions`` (stops early past ``limit``)."""
    bot = make_bot(game_id, f"minimax-{depth}", seed=1)
    spent = 0.0
    for index, state in enumerate(positions, 1):
        start = time.perf_counter()
        bot.choose(state)
        spent += time.perf_counter() - start
        if spent / index > 3 * limit and index >= 3:
            return spent / index  # clearly too slow: no need to time the rest
    return spent / len(positions)


def pick_depth(game_id: str, time_per_move: float, seed: int) -> tuple[int, float]:
    """The largest N (at least 1) whose minimax-N moves within ``time_per_move`` on average."""
    positions = sample_positions(game_id, 12, seed)
    best, best_time = 1, minimax_move_time(game_id, 1, positions, time_per_move)
    for depth in range(2, MAX_MINIMAX_DEPTH + 1):
        mean = minimax_move_time(game_id, depth, positions, time_per_move)
        print(f"  {game_id}: minimax-{depth} takes {mean:.3f} s a move", file=sys.stderr, flush=True)
        if mean > time_per_move:
            break
        best, best_time = depth, mean
    return best, best_time


def main(argv: list[str] | None = None) -> int:
    """Run the strength table."""
    parser = script_parser(__doc__)
    parser.add_argument("--game", choices=GAME_ORDER + ["all"], default="all")
    parser.add_argument("--games", type=int, default=100, help="games per game id (default 100)")
    parser.add_argument("--time-per-move", type=float, default=0.2, help="master's seconds a move (default 0.2)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--opening-plies", type=int, default=2, help="random plies before each pair of games")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--depth", type=int, help="use this minimax depth instead of measuring one")
    parser.add_argument("--master-seat", choices=("first", "second"),
                        help="play only master's games in this seat (the same games as in a run of twice as many)")
    args = parser.parse_args(argv)
    seat = None if args.master_seat is None else ("first", "second").index(args.master_seat)
    if args.games < 1 or args.time_per_move <= 0 or args.jobs < 1:
        parser.error("--games and --jobs must be at least 1 and --time-per-move positive")
    games = GAME_ORDER if args.game == "all" else [args.game]
    rows = []
    for game_id in games:
        if args.depth:
            depth, mean = args.depth, float("nan")
        else:
            depth, mean = pick_depth(game_id, args.time_per_move, args.seed)
        started = time.perf_counter()

        def progress(done: int, total: int, result: object, game_id: str = game_id) -> None:
            print(f"  {game_id}: {done}/{total} games", file=sys.stderr, flush=True)

        result = play_match(game_id, "master", f"minimax-{depth}", args.games, time_per_move=args.time_per_move,
                            seed=args.seed, jobs=args.jobs, opening_plies=args.opening_plies, progress=progress,
                            seat=seat)
        low, high = result.a_interval()
        tally = result.a
        first, second = result.a_first, result.a_second
        rows.append((game_id, depth, mean, tally.wins, tally.draws, tally.losses, result.a_score, low, high,
                     f"{first.wins}-{first.draws}-{first.losses}", f"{second.wins}-{second.draws}-{second.losses}",
                     time.perf_counter() - started))
    print(f"\nmaster vs minimax-N, {args.games} games each, {args.time_per_move:g} s a move for master, "
          f"{'colours alternated' if seat is None else 'master ' + args.master_seat}, "
          f"{args.opening_plies} random opening plies, seed {args.seed}\n")
    print(f"{'game':<14}{'N':>3}{'mm s/move':>11}{'won':>6}{'drawn':>7}{'lost':>6}{'score':>8}"
          f"{'95% interval':>17}{'W-D-L 1st':>11}{'W-D-L 2nd':>11}{'seconds':>9}")
    for game_id, depth, mean, won, drawn, lost, score, low, high, first, second, seconds in rows:
        print(f"{game_id:<14}{depth:>3}{mean:>11.3f}{won:>6}{drawn:>7}{lost:>6}{score:>8.3f}"
              f"{low:>8.3f} to {high:<5.3f}{first:>11}{second:>11}{seconds:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
