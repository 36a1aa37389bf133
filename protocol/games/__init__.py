"""The rules of the five games behind one interface (see ``base.Game``).

>>> from protocol.games import GAMES
>>> c4 = GAMES["connect4"]
>>> state = c4.start("4", "4", "3")
>>> print(state)            # doctest: +SKIP
"""

from __future__ import annotations

from .amazons import AMAZONS
from .base import COORDS, Game, Grid, IllegalMove, OptionError, Outcome
from .connect4 import CONNECT4
from .magnetic_cave import MAGNETIC_CAVE
from .quarto import QUARTO
from .santorini import SANTORINI

GAMES: dict[str, Game] = {
    CONNECT4.id: CONNECT4,
    SANTORINI.id: SANTORINI,
    AMAZONS.id: AMAZONS,
    MAGNETIC_CAVE.id: MAGNETIC_CAVE,
    QUARTO.id: QUARTO,
}
"""Game id -> game object."""


def get_game(game_id: str) -> Game:
    """The game registered under ``game_id``; ``KeyError`` naming the accepted ids."""
    try:
        return GAMES[game_id]
    except (KeyError, TypeError):
        raise KeyError(f"unknown game {game_id!r}; games: {', '.join(GAMES)}") from None


__all__ = ["COORDS", "GAMES", "Game", "Grid", "IllegalMove", "OptionError", "Outcome", "get_game"]
