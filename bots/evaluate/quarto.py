"""Quarto knowledge: none beyond wins and losses.

A Quarto position is hard to judge before it is decided, so the evaluation is
0 and the search scores only wins and losses (sooner is better). What the
bots do need is quick: whether the piece in hand can complete a line, since
handing over such a piece loses at once.
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


class QuartoEvaluator(Evaluator):
    """Wins and losses only; quick tests for winning placements."""

    game_id = "quarto"

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
