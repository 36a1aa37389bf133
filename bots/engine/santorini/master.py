"""Santorini's ``master`` bot: the shared compiled search with a threat-aware evaluation."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from protocol.games.santorini import SantoriniMove, SantoriniState

from ..engine_bot import EngineBot, searched
from ..search import Searcher
from .evaluation import search
from .position import MAX_MOVES, MOVE_SPACE, STATE_SIZE, WORKERS, from_state, legal_moves, rules_result, to_reference


@cache
def warm_up() -> None:
    """Load (or, the first time ever, compile) every compiled function once per process."""
    searcher = Searcher(search, max_moves=MAX_MOVES, move_space=MOVE_SPACE, table_bits=4)
    array = np.zeros(STATE_SIZE, np.int64)
    array[WORKERS : WORKERS + 4] = -1
    searcher.think(array, 0.0, max_depth=1)
    array[WORKERS : WORKERS + 4] = (6, 8, 16, 18)
    searcher.think(array, 0.0, max_depth=2)
    rules_result(array)
    legal_moves(array, np.zeros(MAX_MOVES, np.int32))


class SantoriniMaster(EngineBot):
    """The ``master`` level of Santorini: the shared compiled search with a threat-aware evaluation.

    The transposition table and history survive from move to move within a
    game.
    """

    GAME_ID = "santorini"
    SEARCH, MAX_MOVES, MOVE_SPACE = search, MAX_MOVES, MOVE_SPACE
    TABLE_BITS = 21
    """Transposition table of 2**21 slots (about 40 MB)."""
    _warm_up = staticmethod(warm_up)

    def engine_position(self, state: SantoriniState) -> np.ndarray:
        """The engine array of ``state``."""
        return from_state(state)

    def find_move(self, array: np.ndarray, start: float, deadline: float) -> tuple[int, dict[str, Any]]:
        """The only legal move, else the search's."""
        moves = np.zeros(MAX_MOVES, np.int32)
        if legal_moves(array, moves) == 1:
            return int(moves[0]), {"forced": True}
        result = self._searcher.think(array, deadline)
        return result.move, searched(result)

    def reference_move(self, array: np.ndarray, move: int) -> SantoriniMove:
        """The reference move of an engine move code."""
        return to_reference(array, move)
