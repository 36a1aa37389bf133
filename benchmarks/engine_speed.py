"""Speed of the compiled ``master`` engines: nodes per second and depth reached per game phase.

    .venv/bin/python benchmarks/engine_speed.py [--game quarto] [--seconds 1] [--positions 4]

For each game it builds positions from seeded random playouts (moves that keep
the game running and leave the side to move more than one move worth
searching, so no position is decided at once), at a few points of the game
(its *phases*), and lets the shared search think on each for ``--seconds``
from an empty table, as a bot's first move would. It prints the depth reached
(mean and range), how many searches reached the end of the game or a forced
result (``solved``), and nodes per second. Loading the compiled code (or
compiling it, the first time) happens before the clock starts and is printed
apart.

Another game joins by adding a factory to ``ENGINES``: a function returning
an :class:`EngineProfile` (its search, how to turn a reference state into the
engine's position, and the phases to sample).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from common import script_parser, table_header

from bots.engine.search import MATE_BOUND, MAX_PLY, Searcher
from protocol.games import GAMES


@dataclass(frozen=True)
class EngineProfile:
    """What the benchmark needs to know about one game's engine."""

    game_id: str
    search: Callable[..., Any]
    max_moves: int
    move_space: int
    to_position: Callable[[Any], np.ndarray]
    """Reference state -> the engine's position array."""
    plies_left: Callable[[np.ndarray], int]
    """The most moves the game can still last (the search goes no deeper)."""
    generate_moves: Callable[[np.ndarray, np.ndarray], int]
    warm_up: Callable[[], None]
    phases: dict[str, int]
    """Phase name -> number of moves played from the start to reach it."""


def connect4_profile() -> EngineProfile:
    """Connect Four's heuristic search (its master tries the exact solver first: see connect4_solver.py)."""
    from bots.engine.connect4 import evaluation, master, position

    return EngineProfile(
        "connect4", evaluation.search, position.WIDTH, position.WIDTH,
        lambda state: np.array(position.from_state(state), np.uint64),
        lambda board: position.CELLS - int(board[2]),
        evaluation.generate_moves, master.warm_up, {"opening": 4, "middle": 14, "endgame": 24},
    )


def santorini_profile() -> EngineProfile:
    """Santorini: phases after the two placements and 2, 10 and 18 turns."""
    from bots.engine.santorini import evaluation, master, position

    return EngineProfile(
        "santorini", evaluation.search, position.MAX_MOVES, position.MOVE_SPACE, position.from_state,
        lambda board: MAX_PLY - 1, evaluation.generate_moves, master.warm_up,
        {"opening": 4, "middle": 12, "endgame": 20},
    )


def amazons_profile() -> EngineProfile:
    """The Amazons: phases after 4, 20 and 40 turns."""
    from bots.engine.amazons import evaluation, master, position

    return EngineProfile(
        "amazons", evaluation.search, position.MAX_MOVES, position.MOVE_SPACE, position.from_state,
        lambda board: MAX_PLY - 1, evaluation.generate_moves, master.warm_up,
        {"opening": 4, "middle": 20, "endgame": 40},
    )


def magnetic_cave_profile() -> EngineProfile:
    """Magnetic Cave: phases after 6, 20 and 36 bricks."""
    from bots.engine.magnetic_cave import evaluation, master, position

    return EngineProfile(
        "magnetic-cave", evaluation.search, position.MAX_MOVES, position.MOVE_SPACE,
        position.from_state, position.plies_left,
        evaluation.generate_moves, master.warm_up, {"opening": 6, "middle": 20, "endgame": 36},
    )


def quarto_profile() -> EngineProfile:
    """Quarto: phases after the opening hand-over and 3, 5, 7 and 9 placements (13 to 7 empty squares)."""
    from bots.engine.quarto import evaluation, master, position

    return EngineProfile(
        "quarto", evaluation.search, position.MAX_MOVES, position.MOVE_SPACE, position.from_state,
        position.plies_left, evaluation.generate_moves, master.warm_up,
        {"opening": 4, "middle": 6, "late middle": 8, "endgame": 10},
    )


ENGINES: dict[str, Callable[[], EngineProfile]] = {
    "connect4": connect4_profile,
    "santorini": santorini_profile,
    "amazons": amazons_profile,
    "magnetic-cave": magnetic_cave_profile,
    "quarto": quarto_profile,
}
"""Game id -> factory of its engine profile (imports the engine only when asked for)."""


def sample_position(profile: EngineProfile, moves: int, rng: random.Random) -> Any:
    """A running reference state ``moves`` moves into a random game, with a real choice to make."""
    game = GAMES[profile.game_id]
    scratch = np.zeros(profile.max_moves, np.int32)
    while True:
        state = game.initial_state()
        for _ in range(moves):
            options = game.legal_moves(state)
            rng.shuffle(options)
            afters = (game.apply(state, move) for move in options)
            state = next((after for after in afters if interesting(profile, after, scratch)), None)
            if state is None:
                break
        if state is not None:
            return state


def interesting(profile: EngineProfile, state: Any, scratch: np.ndarray) -> bool:
    """The game goes on and the side to move has more than one move worth searching."""
    if GAMES[profile.game_id].outcome(state) is not None:
        return False
    return profile.generate_moves(profile.to_position(state), scratch) > 1


@dataclass
class PhaseFigures:
    """Totals over the positions of one phase."""

    depths: list[int]
    solved: int
    nodes: int
    seconds: float


def measure(profile: EngineProfile, moves: int, positions: int, seconds: float, rng: random.Random) -> PhaseFigures:
    """Let the search think ``seconds`` on each of ``positions`` sampled positions."""
    figures = PhaseFigures([], 0, 0, 0.0)
    for _ in range(positions):
        position = profile.to_position(sample_position(profile, moves, rng))
        searcher = Searcher(profile.search, profile.max_moves, profile.move_space)
        plies = profile.plies_left(position)
        result = searcher.think(position, time.perf_counter() + seconds, max_depth=plies)
        figures.depths.append(result.depth)
        figures.solved += result.depth >= plies or abs(result.score) > MATE_BOUND
        figures.nodes += result.nodes
        figures.seconds += result.seconds
    return figures


def main(argv: list[str] | None = None) -> int:
    """Measure every engine asked for and print one table."""
    parser = script_parser(__doc__)
    parser.add_argument("--game", action="append", choices=sorted(ENGINES), help="only this game (repeatable)")
    parser.add_argument("--seconds", type=float, default=1.0, help="thinking time per position (default 1)")
    parser.add_argument("--positions", type=int, default=4, help="positions per phase (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random playouts (default 1)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.positions < 1:
        parser.error("--seconds must be positive and --positions at least 1")

    header = f"{'game':<15}{'phase':<13}{'moves in':>9}{'depth':>7}{'range':>9}{'solved':>8}{'Mnodes/s':>10}"
    table_header(header)
    for game_id in args.game or list(ENGINES):
        started = time.perf_counter()
        profile = ENGINES[game_id]()
        profile.warm_up()
        print(f"{game_id:<15}(loading the compiled engine took {time.perf_counter() - started:.1f} s)", flush=True)
        rng = random.Random(f"{args.seed}-{game_id}")
        for phase, moves in profile.phases.items():
            figures = measure(profile, moves, args.positions, args.seconds, rng)
            depths = figures.depths
            print(
                f"{game_id:<15}{phase:<13}{moves:>9}{sum(depths) / len(depths):>7.1f}"
                f"{f'{min(depths)}-{max(depths)}':>9}{f'{figures.solved}/{len(depths)}':>8}"
                f"{figures.nodes / figures.seconds / 1e6:>10.2f}",
                flush=True,
            )
    print(f"\n{args.seconds:g} s per position from an empty table; depth in plies (moves); "
          "solved = reached the end of the game or a forced result.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
