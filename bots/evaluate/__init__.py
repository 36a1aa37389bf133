"""Per-game knowledge for the baseline bots: evaluation, immediate wins, move ordering.

Each game has its own module with an :class:`~bots.evaluate.base.Evaluator`
subclass; :func:`evaluator_for` finds it by game id. The shared search in
``bots.minimax`` and the ``novice`` level use only this interface.
"""

from __future__ import annotations

from .amazons import AmazonsEvaluator
from .base import Evaluator
from .connect4 import Connect4Evaluator
from .magnetic_cave import MagneticCaveEvaluator
from .quarto import QuartoEvaluator
from .santorini import SantoriniEvaluator

EVALUATORS: dict[str, type[Evaluator]] = {
    cls.game_id: cls
    for cls in (
        Connect4Evaluator,
        SantoriniEvaluator,
        AmazonsEvaluator,
        MagneticCaveEvaluator,
        QuartoEvaluator,
    )
}
"""Game id -> evaluator class."""


def evaluator_for(game_id: str) -> Evaluator:
    """The evaluator of a game; ``KeyError`` naming the games that have one."""
    try:
        return EVALUATORS[game_id]()
    except KeyError:
        raise KeyError(f"no evaluator for game {game_id!r}; games: {', '.join(EVALUATORS)}") from None


__all__ = ["EVALUATORS", "Evaluator", "evaluator_for"]
