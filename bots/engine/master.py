"""What every ``master`` bot shares: search memory that is built once and never pickled.

A master bot holds tables of tens of MB (a transposition table, history) that
survive from move to move within a game. They are rebuilt on the other side
of a pickle (the SDK and ``plyhall match`` build bots in worker processes), and
compiled code is loaded when the bot is built, so a move's time goes to
thinking rather than to loading.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bots.base import Bot

from .search import MATE, Searcher


class EngineBot(Bot):
    """Base class of the master bots: subclasses say how to build their memory and warm up."""

    MEMORY: tuple[str, ...] = ("_searcher",)
    """Attributes holding search tables: dropped when pickled, rebuilt by :meth:`_memory`."""
    SEARCH: Callable[..., tuple[int, int, int]]
    """The game's compiled search (``make_search``)."""
    MAX_MOVES: int
    """The most moves a position of the game can have."""
    MOVE_SPACE: int
    """Moves are ints below this."""
    TABLE_BITS = 20
    """The transposition table has ``2 ** TABLE_BITS`` entries of 16 bytes unless told otherwise."""

    def __init__(self, game_id: str, level: str = "master", seed: int | None = None,
                 table_bits: int | None = None) -> None:
        super().__init__(game_id, level, seed)
        self.table_bits = self.TABLE_BITS if table_bits is None else table_bits
        self._last: dict[str, Any] = {}
        self._memory()
        self._warm_up()

    def _memory(self) -> None:
        """Allocate the search tables (``self._searcher`` and any others named in MEMORY)."""
        self._searcher = Searcher(type(self).SEARCH, self.MAX_MOVES, self.MOVE_SPACE, self.table_bits)

    def _warm_up(self) -> None:
        """Load (or compile, the very first time) the compiled code."""

    def _solved_kind(self, position: np.ndarray, plies: int, deadline: float) -> object:
        """How a running ``position`` at most ``plies`` from the end goes for the side to move, with best play.

        ``LOST``, ``DRAWN``, ``QUICK`` (a win within ``SHALLOW`` plies) or
        ``DEEP`` (a later win); ``TIME_UP`` when the clock ran out first. Two
        null-window searches answer this far quicker than an exact value. The
        trap passes of the masters classify the opponent's replies with it.
        """
        value = self._searcher.window(position, plies, -1, 1, deadline)  # win, draw or loss?
        if value is None:
            return TIME_UP
        if value <= 0:
            return LOST if value < 0 else DRAWN
        # Mate scores are proven distances, so "at least MATE - SHALLOW" means "a win within SHALLOW plies"
        # even when the table answers from a deeper search.
        quick = self._searcher.window(position, min(plies, SHALLOW), MATE - SHALLOW - 1, MATE - SHALLOW, deadline)
        if quick is None:
            return TIME_UP
        return QUICK if quick >= MATE - SHALLOW else DEEP

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


SHALLOW = 3
"""A loss that shows within this many plies after a reply is one a 4-ply search sees and avoids."""
LOST, DRAWN, QUICK, DEEP, TIME_UP = (object() for _ in range(5))
"""What :meth:`EngineBot._solved_kind` finds: lost; drawn; won within ``SHALLOW`` plies, or later; or
the clock ran out first."""
QUICK_TIE_BREAK = 0.01
"""Between equal chances, a little for more quickly losing replies (a weaker opponent misses some)."""


def trap_chance(replies: int, deep: int, quick: int) -> float:
    """The chance that an opponent who avoids quick losses, and picks at random otherwise, loses.

    ``deep`` of its ``replies`` lose too late for a shallow search to see,
    ``quick`` soon enough. Ties go to more quick losses (a weaker opponent
    misses some of those). The Quarto master's traps choose among drawing
    moves by this chance; any game whose engine can tell quick from deep
    losses can do the same.
    """
    if replies <= quick:
        return 1.0 + QUICK_TIE_BREAK  # every reply loses soon: a win, which the search finds first
    return deep / (replies - quick) + QUICK_TIE_BREAK * quick / replies
