"""Magnetic Cave knowledge: open lines of five.

Every line of five squares (96 of them) holding bricks of only one colour is
an *open line* for that colour, worth more the fuller it is (1, 4, 16, 64
points for one to four bricks). The score is our open lines minus the
opponent's.
"""

from __future__ import annotations

from protocol.games.magnetic_cave import SIZE, WINDOWS, Brick, CaveState

from .base import Evaluator

LINE_POINTS = (0.0, 1.0, 4.0, 16.0, 64.0, 0.0)
"""Points for an open line of five by the number of our bricks in it (five is a win, scored apart)."""

CENTRE = (SIZE - 1) / 2


class MagneticCaveEvaluator(Evaluator):
    """Open lines of five, ours minus the opponent's."""

    game_id = "magnetic-cave"

    def evaluate(self, state: CaveState, seat: int) -> float:
        """Open-line points of ``seat`` minus those of the opponent."""
        board = state.board
        mine, theirs = seat + 1, 2 - seat
        score = 0.0
        for window in WINDOWS:
            cells = [board[sq] for sq in window]
            if theirs not in cells:
                score += LINE_POINTS[cells.count(mine)]
            elif mine not in cells:
                score -= LINE_POINTS[cells.count(theirs)]
        return score

    def order_moves(self, state: CaveState, moves: list[Brick]) -> list[Brick]:
        """Squares near the centre first: more lines of five pass through them."""
        def distance(move: Brick) -> float:
            col, row = move.square % SIZE, move.square // SIZE
            return abs(col - CENTRE) + abs(row - CENTRE)

        return sorted(moves, key=distance)
