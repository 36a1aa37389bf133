"""The Amazons ``master`` bot: selective search over a territory evaluation, and perfect races at the end."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from protocol.games.amazons import AMAZONS, AmazonsMove, AmazonsState

from ..engine_bot import EngineBot, searched
from ..search import Searcher
from .endgame import endgame_move
from .evaluation import search
from .position import (
    DEFAULT_BEAM,
    DEFAULT_ROOT_WIDTH,
    MAX_MOVES,
    MOVE_SPACE,
    from_state,
    rules_result,
    set_widths,
    to_reference,
)


@cache
def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process."""
    array = from_state(AMAZONS.initial_state())
    set_widths(array, 4, (2,))
    searcher = Searcher(search, max_moves=MAX_MOVES, move_space=MOVE_SPACE, table_bits=4)
    searcher.think(array, 0.0, max_depth=2)
    endgame_move(array)
    rules_result(array)


class AmazonsMaster(EngineBot):
    """The ``master`` level of the Amazons: selective search over a territory evaluation.

    Once the sides are walled off from each other and the turn counts prove
    the race won, it follows the filling walk without searching. The table
    and history survive from move to move within a game. ``root_width`` and
    ``beam`` set how selective the search is (see ``set_widths``).
    """

    GAME_ID = "amazons"
    SEARCH, MAX_MOVES, MOVE_SPACE = search, MAX_MOVES, MOVE_SPACE
    OVERSHOOT = 0.05
    """How far past its deadline a search may run: the root's evaluation of every move, and up to
    1,024 nodes (tens of microseconds each here) between two looks at the clock."""
    _warm_up = staticmethod(warm_up)

    def __init__(
        self, game_id: str | None = None, level: str = "master", seed: int | None = None,
        root_width: int = DEFAULT_ROOT_WIDTH, beam: tuple[int, ...] = DEFAULT_BEAM,
        table_bits: int | None = None, node_limit: int | None = None,
    ) -> None:
        self.root_width = root_width
        self.beam = tuple(beam)
        super().__init__(game_id, level, seed, table_bits, node_limit)

    def engine_position(self, state: AmazonsState) -> np.ndarray:
        """The engine array of ``state`` with this bot's search widths."""
        array = from_state(state)
        set_widths(array, self.root_width, self.beam)
        return array

    def find_move(self, array: np.ndarray, start: float, deadline: float) -> tuple[int, dict[str, Any]]:
        """The filling walk's step in a race the turn counts prove won, else the search's move."""
        move = int(endgame_move(array))
        if move >= 0:
            return move, {"endgame": True}
        result = self._searcher.think(array, deadline)
        return result.move, searched(result)

    def reference_move(self, array: np.ndarray, move: int) -> AmazonsMove:
        """The reference move of an engine move code."""
        return to_reference(move)
