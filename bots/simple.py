"""The two levels that do not search: ``random`` and ``novice``."""

from __future__ import annotations

from typing import Any

from .base import Bot, TimeBudget
from .evaluate import evaluator_for


def _legal_moves(bot: Bot, state: Any) -> list[Any]:
    moves = bot.game.legal_moves(state)
    if not moves:
        raise ValueError("the game is over: there is no move to choose")
    return moves


class RandomBot(Bot):
    """The ``random`` level: a uniformly random legal move (reproducible with a seed)."""

    def choose(self, state: Any, budget: TimeBudget | None = None) -> Any:
        """Any legal move, each as likely as the others."""
        return self.rng.choice(_legal_moves(self, state))


class NoviceBot(Bot):
    """The ``novice`` level: sees one move ahead for each side, otherwise plays at random.

    It wins at once when it can; otherwise it avoids every move after which the
    opponent could win at once (in Quarto: it never hands over a piece that
    wins, if another piece is safe); among what is left it picks at random.
    """

    def __init__(self, game_id: str, level: str, seed: int | None = None) -> None:
        super().__init__(game_id, level, seed)
        self.evaluator = evaluator_for(game_id)

    def choose(self, state: Any, budget: TimeBudget | None = None) -> Any:
        """A winning move, else a random move that does not hand the opponent a win."""
        moves = _legal_moves(self, state)
        wins = self.evaluator.winning_moves(state)
        if wins:
            return self.rng.choice(wins)
        game = self.game
        safe = [move for move in moves if not self.evaluator.has_winning_move(game.apply(state, move))]
        return self.rng.choice(safe or moves)
