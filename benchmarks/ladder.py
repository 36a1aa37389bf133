"""The baseline ladder: each bot level against the next one up, for every game.

    .venv/bin/python benchmarks/ladder.py --games 100 --jobs 2
    nice .venv/bin/python benchmarks/ladder.py --anchors --games 30 --jobs 2   # the anchors' measured ratings

For every game it plays random vs novice, novice vs minimax-1, minimax-1 vs
minimax-2, ... up to a per-game depth that keeps the run short in pure
Python, and prints the lower level's (A's) score against the higher one with
a 95% Wilson interval. Each level should lose clearly to the next: a score
well below 0.5. Every pair of games (seats swapped) starts with the same few
random moves, because searching levels are deterministic up to ties and would
otherwise replay two games over and over. A benchmark prints figures; it
passes or fails nothing.

``--anchors`` turns the scores into ratings, per game, for the ladder's anchors
(``protocol.ratings.anchors_from_scores``: ``random`` is 800 in every game, each
level rated from the one below by the Elo difference its score means, the levels
above the deepest one measured spaced by convention) and prints the scores and the
table as Python, to paste into protocol/ratings.py (``LADDER_SCORES``,
``MEASURED_ANCHORS``).
"""

from __future__ import annotations

import sys
import time

from common import script_parser, table_header

from client.runner.match import play_match
from protocol.games import GAMES
from protocol.ratings import ANCHOR_LEVELS, anchors_from_scores

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
    parser.add_argument("--anchors", action="store_true",
                        help="print each game's anchor ratings from the scores (protocol.ratings.MEASURED_ANCHORS)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.jobs < 1:
        parser.error("--games and --jobs must be at least 1")
    if args.max_depth is not None and not 1 <= args.max_depth <= 8:
        parser.error("--max-depth must be from 1 to 8")
    measured: dict[str, list[tuple[float, int]]] = {}

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
            measured.setdefault(game_id, []).append((a.score, a.games))
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
    if args.anchors:
        print_anchors(measured, argv)
    return 0


def print_anchors(measured: dict[str, list[tuple[float, int]]], argv: list[str] | None) -> None:
    """Each game's scores and anchor ratings, as the Python of ``protocol.ratings.LADDER_SCORES`` and
    ``MEASURED_ANCHORS``."""
    command = " ".join(["benchmarks/ladder.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"\n# Measured by: nice .venv/bin/python {command}")
    kept = {game_id: [(round(score, 3), games) for score, games in scores] for game_id, scores in measured.items()}
    print("LADDER_SCORES = {")
    for game_id, scores in kept.items():
        cells = ", ".join(f"({score:.3f}, {games})" for score, games in scores)
        print(f'    "{game_id}": ({cells}),')
    print("}")
    print("MEASURED_ANCHORS = {")
    for game_id, scores in kept.items():
        ratings = anchors_from_scores(scores)  # from the scores as printed: the two tables agree
        cells = [f'"{level}": {ratings[level]:.0f}' for level in ANCHOR_LEVELS]
        print(f'    "{game_id}": {{  # measured up to {ladder_levels(len(scores) - 1)[-1]}')
        print("        " + ", ".join(cells[:6]) + ",")
        print("        " + ", ".join(cells[6:]) + "},")
    print("}")


if __name__ == "__main__":
    sys.exit(main())
