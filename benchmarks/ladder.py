"""The baseline ladder: each bot level against the next one up, for every game.

    .venv/bin/python benchmarks/ladder.py --games 100 --jobs 2

For every game it plays random vs novice, novice vs minimax-1, minimax-1 vs
minimax-2, ... up to a per-game depth that keeps the run short in pure
Python, and prints the lower level's (A's) score against the higher one with
a 95% Wilson interval. Each level should lose clearly to the next: a score
well below 0.5. Every pair of games (seats swapped) starts with the same few
random moves, because searching levels are deterministic up to ties and would
otherwise replay two games over and over. A benchmark prints figures; it
passes or fails nothing.
"""

from __future__ import annotations

import sys
import time

from common import script_parser, table_header

from client.runner.match import play_match
from protocol.games import GAMES

MAX_DEPTH = {
    "connect4": 4,
    "magnetic-cave": 3,
    "santorini": 2,
    "quarto": 2,
    "amazons": 1,
}
"""The deepest minimax level laddered per game (a game of minimax-2 Amazons takes seconds)."""


def ladder_levels(max_depth: int) -> list[str]:
    """``random``, ``novice``, ``minimax-1`` ... ``minimax-<max_depth>``."""
    return ["random", "novice"] + [f"minimax-{depth}" for depth in range(1, max_depth + 1)]


def main(argv: list[str] | None = None) -> int:
    """Play the ladder and print its table."""
    parser = script_parser(__doc__)
    parser.add_argument("--games", type=int, default=100, help="games per pair of levels (default 100)")
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="only this game (repeatable)")
    parser.add_argument("--max-depth", type=int, default=None, help="deepest minimax level for every game")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--seed", type=int, default=1, help="match seed (default 1)")
    parser.add_argument(
        "--opening-plies",
        type=int,
        default=2,
        help="random moves that start each pair of games, so searching levels vary their games (default 2)",
    )
    args = parser.parse_args(argv)
    if args.games < 1 or args.jobs < 1:
        parser.error("--games and --jobs must be at least 1")

    header = (
        f"{'game':<15}{'A':<11}{'B':<11}{'games':>6}{'A won':>7}{'drawn':>7}{'A lost':>8}"
        f"{'A score':>9}  {'95% interval':<16}{'distinct':>9}{'seconds':>8}"
    )
    table_header(header)
    for game_id in args.game or list(MAX_DEPTH):
        levels = ladder_levels(args.max_depth if args.max_depth is not None else MAX_DEPTH[game_id])
        for level_a, level_b in zip(levels, levels[1:], strict=False):
            started = time.perf_counter()
            result = play_match(
                game_id,
                level_a,
                level_b,
                args.games,
                seed=args.seed,
                jobs=args.jobs,
                opening_plies=args.opening_plies,
            )
            seconds = time.perf_counter() - started
            low, high = result.a_interval()
            a = result.a
            print(
                f"{game_id:<15}{level_a:<11}{level_b:<11}{a.games:>6}{a.wins:>7}{a.draws:>7}{a.losses:>8}"
                f"{a.score:>9.3f}  {low:.3f} to {high:.3f}{result.distinct_games():>9}{seconds:>8.1f}",
                flush=True,
            )
    print(
        "\nA's score = (wins + draws/2) / games against the next level up, with a 95% Wilson score"
        f" interval; each pair of games starts with the same {args.opening_plies} random moves, seats"
        " swapped; 'distinct' counts the games that differ."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
