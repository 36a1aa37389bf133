"""Game of the Amazons knowledge: mobility.

The evaluation is the difference between the number of squares our queens
can reach in one queen move and the number the opponent's can reach, the
plain *mobility* heuristic of course projects. A side loses when none of its
queens has an empty neighbour, which makes wins at once cheap to find.
"""

from __future__ import annotations

from protocol.games.amazons import EMPTY, NEIGHBOURS, RAYS, AmazonsMove, AmazonsState

from .base import Evaluator


def reachable_squares(board: tuple[int, ...], stone: int) -> int:
    """How many distinct squares the queens ``stone`` (1 or 2) can reach in one queen move."""
    reached: set[int] = set()
    for square, cell in enumerate(board):
        if cell == stone:
            for ray in RAYS[square]:
                for to in ray:
                    if board[to]:
                        break
                    reached.add(to)
    return len(reached)


def liberties(board: tuple[int, ...], stone: int) -> set[int]:
    """The empty squares next to a queen ``stone``: a side with none has no legal turn."""
    return {
        n for square, cell in enumerate(board) if cell == stone for n in NEIGHBOURS[square] if board[n] == EMPTY
    }


class AmazonsEvaluator(Evaluator):
    """Mobility: squares our queens reach minus squares the opponent's reach."""

    game_id = "amazons"

    def evaluate(self, state: AmazonsState, seat: int) -> float:
        """Squares reachable by ``seat``'s queens minus those reachable by the opponent's."""
        board = state.board
        return float(reachable_squares(board, seat + 1) - reachable_squares(board, 2 - seat))

    def winning_moves(self, state: AmazonsState) -> list[AmazonsMove]:
        """Turns after which the opponent's queens have no empty neighbour."""
        if state.result is not None:
            return []
        # A turn fills two squares (the queen's new square and the arrow's) and
        # empties one, so it can only shut the opponent in if its queens have at
        # most two empty neighbours between them.
        if len(liberties(state.board, 2 - state.to_move)) > 2:
            return []
        return super().winning_moves(state)
