"""Santorini knowledge: height, steps up within reach, and wins next turn.

A worker is worth more the higher it stands (3 points a level) and the more
free squares one level higher it could step onto (1 point each). The player
to move with a worker on level 2 next to a free level 3 wins next turn, so
the evaluation counts that as nearly won; the same threat held by the player
*not* to move only weighs a little, since the player to move may still block
it. With one ply of search this makes a bot block a win next turn, the way a
classic course-project evaluation does. During setup, central squares (more
neighbours) are better.
"""

from __future__ import annotations

from protocol.games.santorini import (
    DOME,
    NEIGHBOURS,
    NO_WORKER,
    Placement,
    SantoriniMove,
    SantoriniState,
    WorkerTurn,
)

from .base import Evaluator

HEIGHT_POINTS = 3.0
STEP_UP_POINTS = 1.0
WIN_NEXT_TURN_POINTS = 500.0
"""The player to move can climb onto level 3: won unless the rules surprise us."""
THREAT_POINTS = 20.0
"""The player not to move could climb onto level 3 next turn, if not blocked."""


def climbs_to_three(state: SantoriniState, seat: int) -> list[WorkerTurn]:
    """The winning turns ``seat`` would have if it were to move: level 2 up onto a free level 3."""
    levels, workers = state.levels, state.workers
    climbs = []
    for worker in workers[2 * seat : 2 * seat + 2]:
        if worker != NO_WORKER and levels[worker] == 2:
            climbs.extend(
                WorkerTurn(worker, to, None) for to in NEIGHBOURS[worker] if levels[to] == 3 and to not in workers
            )
    return climbs


def open_squares(state: SantoriniState, seat: int) -> set[int]:
    """Squares some worker of ``seat`` could move onto (free, no dome, at most one level up)."""
    levels, workers = state.levels, state.workers
    squares = set()
    for worker in workers[2 * seat : 2 * seat + 2]:
        limit = levels[worker] + 1
        squares.update(
            to for to in NEIGHBOURS[worker] if to not in workers and levels[to] <= limit and levels[to] != DOME
        )
    return squares


class SantoriniEvaluator(Evaluator):
    """Worker height and reachable steps up; a win next turn for the player to move."""

    game_id = "santorini"

    def evaluate(self, state: SantoriniState, seat: int) -> float:
        """Height, step-up and threat points of ``seat`` minus the opponent's."""
        levels, workers = state.levels, state.workers
        if NO_WORKER in workers:
            # setup: prefer central squares, which keep the most room to move
            return sum(
                len(NEIGHBOURS[sq]) * (1.0 if i // 2 == seat else -1.0)
                for i, sq in enumerate(workers)
                if sq != NO_WORKER
            )
        score = 0.0
        for side in (0, 1):
            value = 0.0
            for worker in workers[2 * side : 2 * side + 2]:
                height = levels[worker]
                value += HEIGHT_POINTS * height
                value += STEP_UP_POINTS * sum(
                    1 for to in NEIGHBOURS[worker] if levels[to] == height + 1 and to not in workers
                )
            if climbs_to_three(state, side):
                value += WIN_NEXT_TURN_POINTS if side == state.to_move else THREAT_POINTS
            score += value if side == seat else -value
        return score

    def winning_moves(self, state: SantoriniState) -> list[SantoriniMove]:
        """Climbs onto level 3, and turns that leave the opponent no legal move."""
        if state.result is not None:
            return []
        if NO_WORKER in state.workers:
            if all(level <= 1 for level in state.levels):
                return []  # a worker on level 0 or 1 always has somewhere to go
            return super().winning_moves(state)
        seat = state.to_move
        wins: list[SantoriniMove] = list(climbs_to_three(state, seat))
        # One turn occupies one square and builds on one more, so it can only
        # shut the opponent in if it has at most two squares to move to.
        if len(open_squares(state, 1 - seat)) <= 2:
            game = self.game
            for move in game.legal_moves(state):
                if move.build is not None:
                    outcome = game.outcome(game.apply(state, move))
                    if outcome is not None and outcome.winner == seat:
                        wins.append(move)
        return wins

    def has_winning_move(self, state: SantoriniState) -> bool:
        """True when the player to move can win at once."""
        if state.result is None and NO_WORKER not in state.workers and climbs_to_three(state, state.to_move):
            return True
        return bool(self.winning_moves(state))

    def order_moves(self, state: SantoriniState, moves: list[SantoriniMove]) -> list[SantoriniMove]:
        """Turns that climb highest first; placements on central squares first."""
        levels = state.levels

        def rank(move: SantoriniMove) -> int:
            if isinstance(move, Placement):
                return -(len(NEIGHBOURS[move.first]) + len(NEIGHBOURS[move.second]))
            return -levels[move.to]

        return sorted(moves, key=rank)
