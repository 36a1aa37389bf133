"""Quarto knowledge: wins and losses, and the one that is a move away.

A Quarto position is hard to judge before it is decided, so the search scores
wins and losses (sooner is better), and the evaluation knows one thing only:
a player holding a piece that completes a line wins with its next placement
(:data:`WIN_IN_HAND`), so handing over such a piece loses. Without it a
``minimax-1`` search, which stops right after its own move, handed over
winning pieces that ``novice`` never hands over (benchmarks/ladder.py measured
novice 10-0 over it). What the bots need is quick: whether the piece in hand
can complete a line.
"""

from __future__ import annotations

from protocol.games.quarto import EMPTY, LINES, LINES_THROUGH, QuartoMove, QuartoState

from .base import Evaluator


def completes_line(board: tuple[int, ...], square: int, piece: int) -> bool:
    """True when placing ``piece`` on the empty ``square`` makes four sharing an attribute."""
    for line in LINES_THROUGH[square]:
        ones, zeros = piece, ~piece & 15
        for other in LINES[line][1]:
            if other == square:
                continue
            cell = board[other]
            if cell == EMPTY:
                break
            ones &= cell
            zeros &= ~cell
        else:
            if ones or zeros:
                return True
    return False


def winning_squares(board: tuple[int, ...], piece: int) -> list[int]:
    """The empty squares where ``piece`` would win."""
    return [sq for sq, cell in enumerate(board) if cell == EMPTY and completes_line(board, sq, piece)]


WIN_IN_HAND = 100_000.0
"""The evaluation of a position whose player to move holds a winning piece (far below ``bots.minimax.WIN``, which
a win found by the search scores, far above 0)."""


class QuartoEvaluator(Evaluator):
    """Wins and losses, a winning piece in hand; quick tests for winning placements."""

    game_id = "quarto"

    def evaluate(self, state: QuartoState, seat: int) -> float:
        """``WIN_IN_HAND`` for ``seat`` when the player to move holds a piece that wins (``-WIN_IN_HAND`` when that
        is ``seat``'s opponent), else 0."""
        if not self.has_winning_move(state):
            return 0.0
        return WIN_IN_HAND if seat == state.to_move else -WIN_IN_HAND

    def winning_moves(self, state: QuartoState) -> list[QuartoMove]:
        """Placements of the piece in hand that complete a line (a winning move hands nothing over)."""
        if state.result is not None or state.in_hand is None:
            return []
        return [QuartoMove(sq, None) for sq in winning_squares(state.board, state.in_hand)]

    def has_winning_move(self, state: QuartoState) -> bool:
        """True when the piece in hand wins somewhere."""
        if state.result is not None or state.in_hand is None:
            return False
        board, piece = state.board, state.in_hand
        return any(cell == EMPTY and completes_line(board, sq, piece) for sq, cell in enumerate(board))
