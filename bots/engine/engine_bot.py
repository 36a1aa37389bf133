"""What every ``master`` bot shares: one way to choose a move, and search memory built once.

:meth:`EngineBot.choose` does what every master does: it starts the clock,
refuses a finished game, works out the thinking time, turns the reference
state into the engine's position, lets the game search it, keeps the figures
for :meth:`~EngineBot.stats`, turns the answer back into a reference move,
and never answers with an illegal one. A game supplies its compiled search
(class attributes) and three hooks: :meth:`~EngineBot.engine_position`,
:meth:`~EngineBot.find_move` and :meth:`~EngineBot.reference_move`.

A master holds tables of tens of MB (a transposition table, history) that
survive from move to move within a game. They are rebuilt on the other side
of a pickle (the SDK and ``plyhall match`` build bots in worker processes), and
compiled code is loaded when the bot is built, so a move's time goes to
thinking rather than to loading.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bots.base import Bot, TimeBudget
from protocol.games import IllegalMove

from .budget import thinking_seconds
from .search import MAX_PLY, NO_MOVE, Searcher, SearchResult, describe_score


class EngineBot(Bot):
    """Base class of the master bots: a game's search behind :meth:`choose`.

    ``node_limit`` makes every search stop after that many nodes instead of at
    the clock, which is then never looked at: the same position always gets
    the same move (for tests and reproducible analysis). ``table_bits`` sizes
    the transposition table (``TABLE_BITS`` unless told otherwise).
    """

    GAME_ID: ClassVar[str]
    """The game the bot plays unless told otherwise."""
    MEMORY: ClassVar[tuple[str, ...]] = ("_searcher",)
    """Attributes holding search tables: dropped when pickled, rebuilt by :meth:`_memory`."""
    SEARCH: Callable[..., tuple[int, int, int]]
    """The game's compiled search (``make_search``)."""
    MAX_MOVES: int
    """The most moves a position of the game can have."""
    MOVE_SPACE: int
    """Moves are ints below this."""
    TABLE_BITS = 20
    """The transposition table has ``2 ** TABLE_BITS`` entries of 16 bytes unless told otherwise."""
    DEFAULT_SECONDS = 1.0
    """Thinking time per move when the bot is given no budget."""
    OVERSHOOT = 0.0
    """How far past its deadline a search may run (work it cannot interrupt): it comes off the thinking time."""
    OVERHEAD = 0.0
    """Seconds kept back from the move's deadline for converting positions and moves."""

    def __init__(self, game_id: str | None = None, level: str = "master", seed: int | None = None,
                 table_bits: int | None = None, node_limit: int | None = None) -> None:
        super().__init__(self.GAME_ID if game_id is None else game_id, level, seed)
        self.table_bits = self.TABLE_BITS if table_bits is None else table_bits
        self.node_limit = node_limit
        self._last: dict[str, Any] = {}
        self._memory()
        self._warm_up()

    # --- What a game supplies -------------------------------------------------------------------

    def engine_position(self, state: Any) -> np.ndarray:
        """The engine's position of a running reference ``state``."""
        raise NotImplementedError

    def find_move(self, position: np.ndarray, start: float, deadline: float) -> tuple[int, dict[str, Any]]:
        """The engine move to play in ``position`` (``NO_MOVE``: none found), and figures on how it was found.

        The move's clock started at ``start``; the search must stop by
        ``deadline`` (both ``time.perf_counter()``). ``position`` is left as
        it was (the search restores it).
        """
        raise NotImplementedError

    def reference_move(self, position: np.ndarray, move: int) -> Any:
        """The reference move of the engine's ``move`` in ``position`` (before the move)."""
        raise NotImplementedError

    def _memory(self) -> None:
        """Allocate the search tables (``self._searcher`` and any others named in MEMORY)."""
        self._searcher = Searcher(type(self).SEARCH, self.MAX_MOVES, self.MOVE_SPACE, self.table_bits,
                                  self.node_limit)

    def _warm_up(self) -> None:
        """Load (or compile, the very first time) the compiled code."""

    # --- The template -----------------------------------------------------------------------------

    def choose(self, state: Any, budget: TimeBudget | None = None) -> Any:
        """The best move found before the deadline: ``budget`` less a margin (see ``budget.py``), or
        ``DEFAULT_SECONDS`` without one; with a node limit, whatever the searches find within it."""
        start = time.perf_counter()
        if self.game.outcome(state) is not None:
            raise ValueError("the game is over: there is no move to choose")
        deadline = self._deadline(start, budget)
        position = self.engine_position(state)
        move, self._last = self.find_move(position, start, deadline)
        self._last["seconds"] = time.perf_counter() - start
        if move != NO_MOVE:
            answer = self.reference_move(position, move)
            if self._is_legal(state, answer):
                return answer
        return self.game.legal_moves(state)[0]  # cannot happen in a running game; never answer illegally

    def think(self, state: Any, seconds: float | None = None, max_depth: int = MAX_PLY - 1) -> SearchResult:
        """One search of ``state`` for ``seconds`` (``None``: to ``max_depth``, a forced result or the node
        limit, whatever the clock), for benchmarks and tests; the move is the engine's."""
        deadline = math.inf if seconds is None else time.perf_counter() + seconds
        return self._searcher.think(self.engine_position(state), deadline, max_depth)

    def _deadline(self, start: float, budget: TimeBudget | None) -> float:
        if self.node_limit is not None:
            return math.inf
        return start + max(thinking_seconds(budget, self.DEFAULT_SECONDS, self.OVERSHOOT) - self.OVERHEAD, 0.0)

    def _is_legal(self, state: Any, move: Any) -> bool:
        try:
            self.game.apply(state, move)
        except IllegalMove:
            return False
        return True

    # --- Memory -------------------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in self.MEMORY:
            state.pop(name, None)  # tens of MB; rebuilt on the other side
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._memory()

    def new_game(self) -> None:
        """Forget the tables of the last game."""
        self._searcher.clear()

    def stats(self) -> dict[str, Any]:
        """How the last move was found (``depth``, ``score``, ``nodes``, ``seconds``, ... per engine)."""
        return dict(self._last)


def searched(result: SearchResult) -> dict[str, Any]:
    """A search's figures for :meth:`EngineBot.stats`: depth, score (also in words) and nodes."""
    return {"depth": result.depth, "score": result.score, "value": describe_score(result.score), "nodes": result.nodes}
