"""The game knowledge a baseline bot needs, with plain defaults that work for any game.

An :class:`Evaluator` answers three questions about a position of the reference
rules: how good is it for a seat (:meth:`~Evaluator.evaluate`), which moves
win at once (:meth:`~Evaluator.winning_moves`), and in what order should a
search try the moves (:meth:`~Evaluator.order_moves`). The defaults use only
the public ``Game`` interface; each game's module overrides what it can answer
faster or better from the state's fields, and its tests check the override
against these brute-force defaults.
"""

from __future__ import annotations

from typing import Any, ClassVar

from protocol.games import GAMES, Game


class Evaluator:
    """Evaluation, immediate tactics and move ordering for one game.

    Subclasses set ``game_id`` and override :meth:`evaluate`; the other methods
    have correct (if slow) defaults.
    """

    game_id: ClassVar[str]

    @property
    def game(self) -> Game:
        """The reference rules of this evaluator's game."""
        return GAMES[self.game_id]

    def evaluate(self, state: Any, seat: int) -> float:
        """A heuristic score of a running position for ``seat``: positive is good for it.

        Scores stay far below ``bots.minimax.WIN``, which is kept for positions
        that are actually won. The default knows nothing and says 0.
        """
        return 0.0

    def winning_moves(self, state: Any) -> list[Any]:
        """The legal moves that win the game at once for the player to move."""
        game = self.game
        seat = game.to_move(state)
        wins = []
        for move in game.legal_moves(state):
            outcome = game.outcome(game.apply(state, move))
            if outcome is not None and outcome.winner == seat:
                wins.append(move)
        return wins

    def has_winning_move(self, state: Any) -> bool:
        """True when the player to move can win at once (a running position, or False)."""
        return bool(self.winning_moves(state))

    def order_moves(self, state: Any, moves: list[Any]) -> list[Any]:
        """``moves`` in the order a search should try them, likely best first.

        Must keep equally ranked moves in their given order (a stable sort), so
        that a bot's random shuffle still breaks ties. The default keeps the order.
        """
        return moves
