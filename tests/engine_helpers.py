"""Set-up shared by the engine tests: random game positions, and an engine's move list as ints."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np


def random_game_states(game: Any, games: int, seed: object, finished: bool = True) -> list[Any]:
    """Every position of ``games`` random games of ``game``, either seat first.

    ``finished`` keeps each game's last, finished position too.
    """
    rng = random.Random(seed)
    states = []
    for _ in range(games):
        state = game.initial_state(first=rng.randrange(2))
        while game.outcome(state) is None:
            states.append(state)
            state = game.apply(state, rng.choice(game.legal_moves(state)))
        if finished:
            states.append(state)
    return states


def engine_moves(position: np.ndarray, generator: Callable[[np.ndarray, np.ndarray], int], max_moves: int) -> list[int]:
    """The moves ``generator`` (an engine's ``legal_moves`` or ``generate_moves``) writes for ``position``."""
    moves = np.zeros(max_moves, np.int32)
    return [int(m) for m in moves[: generator(position, moves)]]
